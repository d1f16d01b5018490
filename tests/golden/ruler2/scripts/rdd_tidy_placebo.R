# Discontinuity in y at running_var = 0.5: estimatr + broom, with placebo thresholds
suppressPackageStartupMessages({
  library(estimatr)
  library(broom)
  library(dplyr)
  library(tidyr)
})

df <- readr::read_csv("data/scenario.csv", show_col_types = FALSE)
cat("Observations:", nrow(df), " within 0.3 of the cutoff:", sum(df$near_cutoff), "\n\n")

main <- lm_robust(y ~ treated * I(running_var - 0.5), data = filter(df, near_cutoff == 1),
                  se_type = "HC3")
cat("Local linear regression, |running_var - 0.5| <= 0.3, HC3 SEs:\n")
print(tidy(main) %>% select(term, estimate, std.error, p.value) %>% as_tibble())

# Placebo thresholds, each side of the true cutoff estimated separately
placebo <- function(c0) {
  side <- if (c0 < 0.5) filter(df, running_var < 0.5) else filter(df, running_var >= 0.5)
  side <- side %>% filter(abs(running_var - c0) <= 0.15) %>% mutate(above = as.integer(running_var >= c0))
  fit <- lm_robust(y ~ above * I(running_var - c0), data = side, se_type = "HC3")
  tibble(cutoff = c0, estimate = coef(fit)[["above"]], std.error = fit$std.error[["above"]],
         n = nrow(side))
}
pl <- bind_rows(lapply(c(0.3, 0.7), placebo))
cat("\nPlacebo cutoffs (should be ~0):\n")
print(pl)

cat("\nThe treated coefficient in the first table is the estimated effect at the threshold.\n")

# ---- golden truth (stderr) ----
shown <- capture.output(print(tidy(main) %>% select(term, estimate, std.error, p.value) %>% as_tibble()))
tok_after <- function(lines, term) {
  line <- grep(paste0(" ", term, " "), lines, fixed = TRUE, value = TRUE)[1]
  rest <- substring(line, regexpr(term, line, fixed = TRUE) + nchar(term))
  strsplit(trimws(rest), " +")[[1]][1]
}
pls <- capture.output(print(pl))
pl_tok <- function(c0) strsplit(trimws(grep(paste0(" ", c0, " "), pls, fixed = TRUE, value = TRUE)[1]), " +")[[1]][3]
slope_term <- "I(running_var - 0.5)"
truth <- list(
  style = "broom::tidy tibble of a local linear regression with terms treated, I(running_var - 0.5) and their interaction, then a tibble of placebo cutoffs; the text names the row but prints no number",
  value = tok_after(shown, "treated"),
  anchor = c("Local linear regression", " treated "),
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(),
  decoys = list(
    list(kind = "setup_constant", printed = as.character(sum(df$near_cutoff)), anchor = "within 0.3 of the cutoff"),
    list(kind = "side_intercept", printed = tok_after(shown, "(Intercept)"), anchor = "(Intercept)"),
    list(kind = "side_slope", printed = tok_after(shown, slope_term), anchor = paste0(" ", slope_term)),
    list(kind = "slope_change", printed = tok_after(shown, paste0("treated:", slope_term)), anchor = paste0("treated:", slope_term)),
    list(kind = "placebo_cutoff", printed = pl_tok(0.3), anchor = c("Placebo cutoffs", " 0.3 ")),
    list(kind = "placebo_cutoff", printed = pl_tok(0.7), anchor = c("Placebo cutoffs", " 0.7 "))
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

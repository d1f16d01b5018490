# Instrumented effect of x on y: estimatr::iv_robust, results as broom tibbles
suppressPackageStartupMessages({
  library(estimatr)
  library(broom)
  library(dplyr)
})

d <- readr::read_csv("data/scenario.csv", show_col_types = FALSE)
message("n = ", nrow(d))

# Stage 1 by hand, to look at instrument strength
stage1 <- lm(x ~ z + controls, data = d)
d$x_fitted <- fitted(stage1)
f_stat <- summary(stage1)$coefficients["z", "t value"]^2
cat(sprintf("First stage: x on z, F = %.1f (rule of thumb: > 10)\n\n", f_stat))
print(tidy(stage1))

# Manual second stage (point estimate right, SEs wrong) -- shown for transparency only
manual <- lm(y ~ x_fitted + controls, data = d)
cat("\nManual second stage (standard errors not valid):\n")
print(tidy(manual))

# Proper 2SLS with robust SEs
iv <- iv_robust(y ~ x + controls | z + controls, data = d, se_type = "HC1")
cat("\n2SLS (iv_robust, HC1) -- main specification:\n")
print(tidy(iv) %>% select(term, estimate, std.error, p.value, conf.low, conf.high) %>% as_tibble())

naive <- lm_robust(y ~ x + controls, data = d, se_type = "HC1")
cat(sprintf("\nFor reference, naive OLS slope on x: %.4f\n", coef(naive)[["x"]]))
cat(sprintf("ESTIMATE: %.5f\n", coef(iv)[["x"]]))

# ---- golden truth (stderr) ----
tb <- capture.output(print(tidy(iv) %>% select(term, estimate, std.error, p.value, conf.low, conf.high) %>% as_tibble()))
man <- capture.output(print(tidy(manual)))
st1 <- capture.output(print(tidy(stage1)))
after <- function(shown, term) {
  toks <- strsplit(trimws(grep(paste0(" ", term, " "), shown, value = TRUE)[1]), " +")[[1]]
  toks[which(toks == term) + 1]
}
truth <- list(
  style = "broom::tidy tibbles of the first stage, a manual second stage on x_fitted and iv_robust, with a naive OLS slope after, then an ESTIMATE line",
  value = sprintf("%.5f", coef(iv)[["x"]]),
  anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = after(tb, "x"), anchor = c("main specification", " x ")),
    list(printed = after(man, "x_fitted"), anchor = "x_fitted")
  ),
  decoys = list(
    list(kind = "first_stage_statistic", printed = sprintf("%.1f", f_stat), anchor = "First stage: x on z"),
    list(kind = "first_stage", printed = after(st1, "z"), anchor = c("# A tibble", " z ")),
    list(kind = "naive_model_after_main", printed = sprintf("%.4f", coef(naive)[["x"]]), anchor = "naive OLS slope")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

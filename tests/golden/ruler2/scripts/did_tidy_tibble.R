## Programme effect: two-way FE with estimatr, results collected with broom
suppressPackageStartupMessages({
  library(estimatr)
  library(broom)
  library(dplyr)
})

panel <- readr::read_csv("data/scenario.csv", show_col_types = FALSE)
first_post <- min(panel$period[panel$post == 1])
cat("Rows:", nrow(panel), " Units:", n_distinct(panel$unit_id),
    " Periods:", n_distinct(panel$period), " First treated period:", first_post, "\n\n")

# baseline: unit + period fixed effects, CR2 errors clustered by unit
baseline <- lm_robust(y ~ treat_x_post, data = panel,
                      fixed_effects = ~ unit_id + period, clusters = unit_id)

# no fixed effects at all (for comparison only)
no_fe <- lm_robust(y ~ treat_x_post, data = panel, clusters = unit_id)

# dynamic version: treated x period dummies, period first_post - 1 is the reference
panel <- panel %>%
  mutate(rel = period - first_post)
rels <- setdiff(sort(unique(panel$rel)), -1)
for (k in rels) {
  nm <- if (k < 0) paste0("lead", abs(k)) else paste0("lag", k)
  panel[[nm]] <- as.integer(panel$treated == 1 & panel$rel == k)
}
dyn_terms <- c(paste0("lead", abs(rels[rels < 0])), paste0("lag", rels[rels >= 0]))
dynamic <- lm_robust(reformulate(dyn_terms, "y"), data = panel,
                     fixed_effects = ~ unit_id + period, clusters = unit_id)

results <- bind_rows(
  tidy(baseline) %>% mutate(model = "baseline"),
  tidy(no_fe) %>% filter(term != "(Intercept)") %>% mutate(model = "no_fe"),
  tidy(dynamic) %>% mutate(model = "dynamic")
) %>%
  select(model, term, estimate, std.error, p.value, conf.low, conf.high) %>%
  tibble::as_tibble()

print(results, n = Inf)
cat("\nThe headline estimate is the 'baseline' row (unit and period fixed effects,\n")
cat("CR2 standard errors clustered by unit). 'no_fe' ignores the fixed effects and the\n")
cat("lead terms of 'dynamic' are pre-treatment placebo checks.\n")

# ---- golden truth (stderr) ----
shown <- capture.output(print(results, n = Inf))
pattern <- function(model, term) paste0(" ", model, " +", term, " ")
row_of <- function(model, term) {
  hit <- grep(pattern(model, term), shown)
  toks <- strsplit(trimws(shown[hit[1]]), " +")[[1]]
  toks[which(toks == term)[1] + 1]
}
anchor_of <- function(model, term) {
  hit <- grep(pattern(model, term), shown)
  trimws(regmatches(shown[hit[1]], regexpr(pattern(model, term), shown[hit[1]])))
}
lead2 <- paste0("lead", 2)
truth <- list(
  style = "broom::tidy of three estimatr models bound into one tibble with a model column; the headline row named in words below, no number in the text",
  value = row_of("baseline", "treat_x_post"),
  anchor = anchor_of("baseline", "treat_x_post"),
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(),
  decoys = list(
    list(kind = "setup_constant", printed = as.character(first_post), anchor = "First treated period:"),
    list(kind = "naive_model_after_main", printed = row_of("no_fe", "treat_x_post"), anchor = anchor_of("no_fe", "treat_x_post")),
    list(kind = "placebo_lead", printed = row_of("dynamic", lead2), anchor = anchor_of("dynamic", lead2)),
    list(kind = "robustness_later_fit", printed = row_of("dynamic", "lag0"), anchor = anchor_of("dynamic", "lag0"))
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

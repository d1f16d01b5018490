# Adoption effect: two-way fixed effects, reported as a markdown table
suppressPackageStartupMessages(library(sandwich))
df <- read.csv("data/scenario.csv")
start <- min(df$period[df$treat_x_post == 1])
n_units <- length(unique(df$unit_id))
n_periods <- length(unique(df$period))

cat("## Policy adoption and the outcome\n\n")
cat(sprintf("Panel: %d units x %d periods (%s unit-periods); adoption from period %d\n\n",
            n_units, n_periods, format(nrow(df), big.mark = ","), start))

twfe <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = df)
b <- coef(twfe)[["treat_x_post"]]
se <- sqrt(vcovCL(twfe, cluster = ~unit_id)["treat_x_post", "treat_x_post"])
main_txt <- sprintf("%.4f", b)

row <- function(label, est, s, n) {
  cat(sprintf("| %s | %s | %s | %s |\n", label, est, sprintf("%.4f", s), format(n, big.mark = ",")))
}
cat("| Specification | Coef. | Clustered SE | Obs. |\n")
cat("|---|---:|---:|---:|\n")
row("Two-way fixed effects (unit + period)", main_txt, se, nrow(df))

cat("\n### Naive comparison (for reference only)\n\n")
pooled <- lm(y ~ treat_x_post, data = df)
pooled_txt <- sprintf("%.4f", coef(pooled)[["treat_x_post"]])
cat("| Specification | Coef. | Clustered SE | Obs. |\n")
cat("|---|---:|---:|---:|\n")
row("Pooled OLS, no fixed effects", pooled_txt,
    sqrt(vcovCL(pooled, cluster = ~unit_id)["treat_x_post", "treat_x_post"]), nrow(df))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = main_txt, anchor = "| Two-way fixed effects (unit + period) |",
  unit = list(scale = "as_printed", window = NULL),
  style = c("markdown table", "thousands separator in Obs. column", "TWFE label"),
  decoys = list(
    list(kind = "naive_model_after_main", printed = pooled_txt, anchor = "| Pooled OLS, no fixed effects |"),
    list(kind = "setup_constant", printed = as.character(start), anchor = "adoption from period")
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

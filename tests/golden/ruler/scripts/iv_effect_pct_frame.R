# 2SLS (estimatr) against OLS; effects reported in percent of one unit of y
suppressPackageStartupMessages(library(estimatr))
df <- read.csv("data/scenario.csv")
fs <- lm_robust(x ~ z + controls, data = df)
fs_txt <- sprintf("%.3f", coef(fs)[["z"]])
cat(sprintf("First-stage effect of z on x: %s (robust t = %.1f)\n\n", fs_txt, fs$statistic[["z"]]))
iv <- iv_robust(y ~ x + controls | z + controls, data = df, se_type = "HC1")
ols <- lm_robust(y ~ x + controls, data = df, se_type = "HC1")
tab <- data.frame(
  model = c("2SLS (preferred)", "OLS"),
  effect_pct = sprintf("%.2f", 100 * c(coef(iv)[["x"]], coef(ols)[["x"]])),
  se_pct = sprintf("%.2f", 100 * c(iv$std.error[["x"]], ols$std.error[["x"]])),
  n = format(c(iv$nobs, ols$nobs), big.mark = ",")
)
cat("Effect of a one-unit increase in x on y, x100 (percent of one unit of y):\n")
print(tab, row.names = FALSE)
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = tab$effect_pct[1], anchor = "2SLS (preferred)",
  unit = list(scale = "percent", window = NULL),
  style = c("printed data.frame", "unit only in the column name (effect_pct)", "paper protocol"),
  decoys = list(
    list(kind = "first_stage", printed = fs_txt, anchor = "First-stage effect of z on x"),
    list(kind = "naive_model_after_main", printed = tab$effect_pct[2], anchor = " OLS ",
         unit = list(scale = "percent", window = NULL))
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

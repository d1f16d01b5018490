# 2SLS with estimatr; bracketed log-style lines
suppressPackageStartupMessages(library(estimatr))
df <- read.csv("data/scenario.csv")
level <- 0.95
fs <- lm_robust(x ~ z + controls, data = df, alpha = 1 - level)
iv <- iv_robust(y ~ x + controls | z + controls, data = df, alpha = 1 - level)
ols <- lm_robust(y ~ x + controls, data = df, alpha = 1 - level)
line <- function(tag, what, fit, term, extra = "") {
  s <- sprintf("%.4f", coef(fit)[[term]])
  cat(sprintf("[%s] %s %s [%.4f; %.4f]%s\n", tag, what, s,
              fit$conf.low[[term]], fit$conf.high[[term]], extra))
  s
}
cat(sprintf("[setup] n = %d | instrument = z | exogenous = controls | level = %d%%\n",
            nrow(df), round(100 * level)))
fs_txt <- line("first stage", "z -> x:", fs, "z", sprintf(" F = %.1f", fs$statistic[["z"]]^2))
main_txt <- line("2SLS", "beta_x =", iv, "x")
ols_txt <- line("OLS", "beta_x =", ols, "x")
est_txt <- sprintf("%.6f", coef(iv)[["x"]])
cat(sprintf("ESTIMATE: %s\n", est_txt))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = est_txt, anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NULL),
  style = c("sprintf with square-bracket tags and bracketed intervals", "ESTIMATE line"),
  decoys = list(
    list(kind = "first_stage", printed = fs_txt, anchor = "[first stage]"),
    list(kind = "naive_model_after_main", printed = ols_txt, anchor = "[OLS]"),
    list(kind = "setup_constant", printed = "95", anchor = "[setup]")
  ),
  equivalents = list(
    list(printed = main_txt, anchor = "[2SLS]", unit = list(scale = "as_printed", window = NULL))
  )
), auto_unbox = TRUE, null = "null"), file = stderr())

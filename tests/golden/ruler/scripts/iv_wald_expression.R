# Instrumented effect of x on y as a Wald ratio of two regressions (same control)
df <- read.csv("data/scenario.csv")
cat(sprintf("Instrument: z (binary); exogenous control: controls; n = %d\n", nrow(df)))
fs <- lm(x ~ z + controls, data = df)
rf <- lm(y ~ z + controls, data = df)
pi_z <- coef(fs)[["z"]]
rho_z <- coef(rf)[["z"]]
f_stat <- summary(fs)$coefficients["z", 3]^2
fs_txt <- sprintf("%.4f", pi_z)
rf_txt <- sprintf("%.4f", rho_z)
main_txt <- sprintf("%.4f", rho_z / pi_z)
cat(sprintf("First stage  - effect of z on x: %s (F = %.1f)\n", fs_txt, f_stat))
cat(sprintf("Reduced form - effect of z on y: %s\n", rf_txt))
cat(sprintf("Wald = %s / %s = %s\n", rf_txt, fs_txt, main_txt))
ols_txt <- sprintf("%.4f", coef(lm(y ~ x + controls, data = df))[["x"]])
cat(sprintf("OLS of y on x (ignores the confounder): %s\n", ols_txt))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = main_txt, anchor = "Wald = ",
  unit = list(scale = "as_printed", window = NULL),
  style = c("hand-computed Wald ratio as an arithmetic expression", "paper protocol"),
  decoys = list(
    list(kind = "first_stage", printed = fs_txt, anchor = "First stage"),
    list(kind = "reduced_form", printed = rf_txt, anchor = "Reduced form"),
    list(kind = "arithmetic_operand", printed = rf_txt, anchor = "Wald = "),
    list(kind = "naive_model_after_main", printed = ols_txt, anchor = "OLS of y on x")
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

suppressPackageStartupMessages({library(estimatr); library(broom)})
df <- read.csv("data/scenario.csv")
fit <- iv_robust(y ~ x + controls | z + controls, data = df, diagnostics = TRUE)
print(tidy(fit))
print(summary(fit)$diagnostic_endogeneity_test)
# ---- golden truth (stderr) ----
r <- summary(fit)$coefficients["x", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

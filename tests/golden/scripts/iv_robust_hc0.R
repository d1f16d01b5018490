library(estimatr)
df <- read.csv("data/scenario.csv")
fit <- iv_robust(y ~ x + controls | z + controls, data = df, se_type = "HC0")
summary(fit)
# ---- golden truth (stderr) ----
r <- summary(fit)$coefficients["x", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

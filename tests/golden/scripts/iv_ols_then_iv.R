suppressPackageStartupMessages(library(AER))
df <- read.csv("data/scenario.csv")
ols <- lm(y ~ x + controls, data = df)
summary(ols)
iv <- ivreg(y ~ x + controls | z + controls, data = df)
summary(iv)
# ---- golden truth (stderr) ----
r <- coef(summary(iv))["x", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

suppressPackageStartupMessages(library(AER))
df <- read.csv("data/scenario.csv")
cat("First stage: x on z\n")
fs <- lm(x ~ z + controls, data = df)
print(summary(fs))
cat("Second stage (2SLS)\n")
iv <- ivreg(y ~ x + controls | z + controls, data = df)
print(summary(iv, diagnostics = TRUE))
# ---- golden truth (stderr) ----
r <- coef(summary(iv))["x", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

suppressPackageStartupMessages({library(AER); library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
iv <- ivreg(y ~ x + controls | z + controls, data = df)
print(confint(iv))
print(coeftest(iv, vcov = vcovHC(iv, type = "HC1")))
print(summary(iv, diagnostics = TRUE)$diagnostics)
# ---- golden truth (stderr) ----
r <- coeftest(iv, vcov = vcovHC(iv, type = "HC1"))["x", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = c(unname(r[-1]), confint(iv)["x", ])), digits = NA), file = stderr())

suppressPackageStartupMessages(library(AER))
df <- read.csv("data/scenario.csv")
ols <- lm(y ~ x + controls, data = df)
iv <- ivreg(y ~ x + controls | z + controls, data = df)
res <- data.frame(
  model = c("OLS", "2SLS"),
  estimate = c(coef(ols)[["x"]], coef(iv)[["x"]]),
  std_error = c(sqrt(vcov(ols)["x", "x"]), sqrt(vcov(iv)["x", "x"]))
)
print(res)
# ---- golden truth (stderr) ----
r <- coef(summary(iv))["x", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

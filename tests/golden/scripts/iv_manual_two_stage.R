df <- read.csv("data/scenario.csv")
fs <- lm(x ~ z + controls, data = df)
df$x_hat <- fitted(fs)
ss <- lm(y ~ x_hat + controls, data = df)
# note: second-stage SEs from lm are not the 2SLS SEs; the point estimate is
print(coef(summary(ss)))
# ---- golden truth (stderr) ----
r <- coef(summary(ss))["x_hat", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

# Two-by-two difference-in-differences with lm and summary()
df <- read.csv("data/scenario.csv")
fit <- lm(y ~ treated * post, data = df)
summary(fit)
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["treated:post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

df <- read.csv("data/scenario.csv")
fit <- lm(y ~ treated + post + treat_x_post, data = df)
print(round(coef(summary(fit))["treat_x_post", ], 4))
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["treat_x_post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = c(unname(r[-1]), confint(fit)["treat_x_post", ])), digits = NA), file = stderr())

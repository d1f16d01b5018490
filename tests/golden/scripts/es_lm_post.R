df <- read.csv("data/scenario.csv")
df$post <- as.integer(df$event_day >= 0)
fit <- lm(ret ~ mkt_ret + post, data = df)
summary(fit)
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

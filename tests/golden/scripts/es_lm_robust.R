library(estimatr)
df <- read.csv("data/scenario.csv")
df$post <- ifelse(df$event_day >= 0, 1, 0)
fit <- lm_robust(ret ~ mkt_ret + post, data = df, clusters = stock_id, se_type = "stata")
print(summary(fit))
# ---- golden truth (stderr) ----
r <- summary(fit)$coefficients["post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

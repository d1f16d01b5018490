df <- read.csv("data/scenario.csv")
df$post <- as.integer(df$event_day >= 0)
fit <- lm(ret ~ mkt_ret + post, data = df)
s <- summary(fit)$coefficients
print(list(per_day = s["post", 1], se = s["post", 2], stocks = length(unique(df$stock_id))))
# ---- golden truth (stderr) ----
r <- s["post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

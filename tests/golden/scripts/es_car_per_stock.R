df <- read.csv("data/scenario.csv")
df$ar <- df$ret - df$beta * df$mkt_ret
post <- subset(df, event_day >= 0)
car <- aggregate(ar ~ stock_id, data = post, FUN = sum)
names(car)[2] <- "CAR"
cat("Cumulative abnormal return [0,10] by stock (first rows):\n")
print(head(car))
cat("Mean CAR across stocks:", round(mean(car$CAR), 6), "\n")
cat("Mean AR (post-event days):", round(mean(post$ar), 6), "\n")
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(estimate = round(mean(post$ar), 6), others = numeric(0)), digits = NA), file = stderr())

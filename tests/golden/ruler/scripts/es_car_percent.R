# Announcement effect: cumulative abnormal return over the effect window, in percent
suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
df$post <- as.integer(df$event_day >= 0)
n_days <- length(0:max(df$event_day))
cat(sprintf("Event window: days %d..+%d | effect window [0,+%d] | stocks: %d\n",
            min(df$event_day), max(df$event_day), max(df$event_day), length(unique(df$stock_id))))

# normal returns from the pre-event days (market model), used for the day-level profile
pre <- subset(df, event_day < 0)
mm <- lm(ret ~ mkt_ret, data = pre)
df$ar <- df$ret - predict(mm, newdata = df)
aar <- tapply(df$ar, df$event_day, mean)
beta_txt <- sprintf("%.4f", coef(mm)[["mkt_ret"]])
day0_txt <- sprintf("%.2f", 100 * aar[["0"]])
placebo_txt <- sprintf("%.2f", 100 * sum(aar[as.character(-10:-6)]))
cat(sprintf("Market beta (pre-event market model): %s\n", beta_txt))
cat(sprintf("Abnormal return on the event day (day 0, %%): %s\n", day0_txt))
cat(sprintf("Placebo window CAR[-10,-6] (%%): %s\n", placebo_txt))

# the result: pooled market-model regression with a post-event indicator
fit <- lm(ret ~ mkt_ret + post, data = df)
ct <- coeftest(fit, vcov = vcovCL(fit, cluster = ~stock_id))
car <- n_days * ct["post", 1]
car_se <- n_days * ct["post", 2]
main_txt <- sprintf("%.2f", 100 * car)
cat(sprintf("\nCumulative abnormal return CAR[0,+%d] (%%): %s   (s.e. %.2f)\n",
            n_days - 1, main_txt, 100 * car_se))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = main_txt, anchor = "Cumulative abnormal return CAR[0,+",
  unit = list(scale = "percent", window = c(0, n_days - 1)),
  style = c("percent sign in the label only", "cumulative over the window", "paper protocol"),
  decoys = list(
    list(kind = "day0_abnormal_return", printed = day0_txt, anchor = "event day (day 0",
         unit = list(scale = "percent", window = NULL)),
    list(kind = "market_beta", printed = beta_txt, anchor = "Market beta"),
    list(kind = "placebo_window", printed = placebo_txt, anchor = "Placebo window",
         unit = list(scale = "percent", window = c(-10, -6)))
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

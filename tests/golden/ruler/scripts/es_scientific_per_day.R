# Announcement returns, printed in scientific notation
suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
df$post <- as.integer(df$event_day >= 0)
fit <- lm(ret ~ mkt_ret + post, data = df)
ct <- coeftest(fit, vcov = vcovCL(fit, cluster = ~stock_id))
e3 <- function(v) sprintf("%.3e", v)

pre <- subset(df, event_day < 0)
mm <- lm(ret ~ mkt_ret, data = pre)
day0 <- mean(df$ret[df$event_day == 0] - predict(mm, newdata = df[df$event_day == 0, ]))

beta_txt <- e3(ct["mkt_ret", 1])
day0_txt <- e3(day0)
main_txt <- e3(ct["post", 1])
cat(sprintf("Market model (pooled OLS, n = %s stock-days, %d stocks)\n",
            format(nrow(df), big.mark = ","), length(unique(df$stock_id))))
cat(sprintf("  market beta                          : %s\n", beta_txt))
cat(sprintf("  day-0 abnormal return                : %s\n", day0_txt))
cat(sprintf("  abnormal return (per day), [0,+%d]   : %s  (SE %s)\n",
            max(df$event_day), main_txt, e3(ct["post", 2])))
cat(sprintf("  t statistic                          : %.2f\n", ct["post", 3]))
naive <- mean(df$ret[df$post == 1]) - mean(df$ret[df$post == 0])
naive_txt <- e3(naive)
cat(sprintf("\nNaive effect (post minus pre mean raw return, no market adjustment): %s\n", naive_txt))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = main_txt, anchor = "abnormal return (per day)",
  unit = list(scale = "as_printed", window = NULL),
  style = c("scientific notation", "aligned colon labels", "paper protocol"),
  decoys = list(
    list(kind = "market_beta", printed = beta_txt, anchor = "market beta"),
    list(kind = "day0_abnormal_return", printed = day0_txt, anchor = "day-0 abnormal return"),
    list(kind = "naive_model_after_main", printed = naive_txt, anchor = "Naive effect")
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

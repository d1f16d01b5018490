suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
fit <- lm(ret ~ mkt_ret + I(event_day >= 0), data = df)
ct <- coeftest(fit, vcov = vcovCL(fit, cluster = ~stock_id, type = "HC1"))
print(ct)
# ---- golden truth (stderr) ----
r <- ct["I(event_day >= 0)TRUE", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

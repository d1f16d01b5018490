suppressPackageStartupMessages({library(dplyr); library(broom)})
df <- read.csv("data/scenario.csv") %>% mutate(post_event = as.integer(event_day >= 0))
fit <- lm(ret ~ mkt_ret + post_event, data = df)
print(tidy(fit, conf.int = TRUE))
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["post_event", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = c(unname(r[-1]), confint(fit)["post_event", ])), digits = NA), file = stderr())

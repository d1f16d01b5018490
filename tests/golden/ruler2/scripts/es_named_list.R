# Event-window abnormal return: pooled regression with stock-clustered SEs (estimatr)
suppressPackageStartupMessages(library(estimatr))

ev <- read.csv("data/scenario.csv")
ev$post <- as.numeric(ev$event_day >= 0)

fit <- lm_robust(ret ~ mkt_ret + post, data = ev, clusters = stock_id, se_type = "stata")

result <- list(
  estimate = unname(coef(fit)["post"]),
  std.error = unname(fit$std.error["post"]),
  conf.low = unname(fit$conf.low["post"]),
  conf.high = unname(fit$conf.high["post"]),
  n_stocks = length(unique(ev$stock_id)),
  n_obs = fit$nobs
)
cat("Main result (average abnormal return per event day, days 0..+10):\n")
print(result)

# supporting numbers
day0 <- lm_robust(ret ~ mkt_ret + I(event_day == 0), data = subset(ev, event_day <= 0),
                  clusters = stock_id, se_type = "stata")
pre <- subset(ev, event_day < 0)
plac <- lm_robust(ret ~ mkt_ret + I(event_day >= -3), data = pre, clusters = stock_id, se_type = "stata")
checks <- list(
  market_beta = unname(coef(fit)["mkt_ret"]),
  day0_ar = unname(coef(day0)[3]),
  placebo_pre3 = unname(coef(plac)[3]),
  car_0_10 = 11 * result$estimate
)
cat("\nSupporting checks:\n")
str(checks)

cat(sprintf("\nESTIMATE: %.6f\n", result$estimate))

# ---- golden truth (stderr) ----
shown <- capture.output(str(checks))
str_val <- function(name) sub(".*: num ", "", grep(paste0("\\$ ", name, " *:"), shown, value = TRUE))
listed <- capture.output(print(result))
est_txt <- sub("^\\[1\\] ", "", listed[which(listed == "$estimate") + 1])
lo_txt <- sub("^\\[1\\] ", "", listed[which(listed == "$conf.low") + 1])
truth <- list(
  style = "results printed as an R named list ($estimate, $std.error, ...) followed by str() of a list of supporting checks, then an ESTIMATE line",
  value = sprintf("%.6f", result$estimate),
  anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = est_txt, anchor = c("$estimate", "[1]")),
    list(printed = str_val("car_0_10"), anchor = "$ car_0_10", unit = list(scale = "as_printed", window = c(0, 10)))
  ),
  decoys = list(
    list(kind = "confidence_bound", printed = lo_txt, anchor = c("$conf.low", "[1]")),
    list(kind = "setup_constant", printed = as.character(result$n_stocks), anchor = c("$n_stocks", "[1]")),
    list(kind = "market_beta", printed = str_val("market_beta"), anchor = "$ market_beta"),
    list(kind = "day0_abnormal_return", printed = str_val("day0_ar"), anchor = "$ day0_ar"),
    list(kind = "placebo_window", printed = str_val("placebo_pre3"), anchor = "$ placebo_pre3")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

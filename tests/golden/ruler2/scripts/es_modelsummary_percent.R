# Did the announcement move returns? Market-model regressions, returns in percent.
suppressPackageStartupMessages({
  library(sandwich)
  library(lmtest)
  library(dplyr)
})

rets <- readr::read_csv("data/scenario.csv", show_col_types = FALSE) %>%
  mutate(ret_pct = 100 * ret, mkt_pct = 100 * mkt_ret, post = as.integer(event_day >= 0))

m1 <- lm(ret_pct ~ mkt_pct + post, data = rets)
m2 <- lm(I(ret_pct - mkt_pct) ~ post, data = rets)  # market-adjusted: beta fixed at 1
pre <- filter(rets, event_day < 0) %>% mutate(placebo = as.integer(event_day >= -5))
m3 <- lm(ret_pct ~ mkt_pct + placebo, data = pre)

cl <- function(m, d) coeftest(m, vcov = vcovCL(m, cluster = d$stock_id))
c1 <- cl(m1, rets); c2 <- cl(m2, rets); c3 <- cl(m3, pre)
stars <- function(p) ifelse(p < 0.001, "***", ifelse(p < 0.01, "**", ifelse(p < 0.05, "*", "")))
cell <- function(ct, term) {
  if (!term %in% rownames(ct)) return(c("", ""))
  c(sprintf("%.3f%s", ct[term, 1], stars(ct[term, 4])), sprintf("(%.3f)", ct[term, 2]))
}

cat("Daily stock returns in percent; event on day 0; SEs clustered by stock.\n\n")
hdr <- c("", "Pooled [main]", "Market-adj.", "Pre-event placebo")
w <- c(22, 15, 15, 19)
rowf <- function(x) cat(paste0(formatC(x[1], width = -w[1]),
                               paste(mapply(function(s, k) formatC(s, width = k), x[-1], w[-1]),
                                     collapse = ""), "\n"))
bar <- strrep("-", sum(w))
cat(bar, "\n")
rowf(hdr)
cat(bar, "\n")
for (term in c("post", "placebo", "mkt_pct")) {
  lab <- c(post = "Post-event day (%)", placebo = "Fake event day -5", mkt_pct = "Market return")[term]
  e <- sapply(list(c1, c2, c3), cell, term = term)
  rowf(c(lab, e[1, ]))
  rowf(c("", e[2, ]))
}
cat(bar, "\n")
rowf(c("Num.Obs.", nobs(m1), nobs(m2), nobs(m3)))
rowf(c("R2", sprintf("%.3f", summary(m1)$r.squared), sprintf("%.3f", summary(m2)$r.squared),
       sprintf("%.3f", summary(m3)$r.squared)))
rowf(c("Beta", "estimated", "fixed at 1", "estimated"))
cat(bar, "\n")
cat("* p < 0.05, ** p < 0.01, *** p < 0.001\n\n")
cat(sprintf("Over days 0 to +10 the abnormal return averaged %.3f percentage points per day\n",
            coef(m1)["post"]))
cat("relative to the market model (column [main]); fixing beta at 1 is shown for comparison.\n")

# ---- golden truth (stderr) ----
pct <- list(scale = "percent", window = NA)
truth <- list(
  style = "modelsummary-like table in percent with three columns, the main one marked [main] in its header, the last a placebo; a sentence repeats the estimate",
  value = sprintf("%.3f", c1["post", 1]),
  anchor = "Post-event day (%)",
  unit = pct,
  equivalents = list(
    list(printed = sprintf("%.3f", coef(m1)["post"]), anchor = "abnormal return averaged", unit = pct)
  ),
  decoys = list(
    list(kind = "robustness_later_fit", printed = sprintf("%.3f", c2["post", 1]), anchor = "Post-event day (%)", unit = pct),
    list(kind = "robustness_last_column_placebo", printed = sprintf("%.3f", c3["placebo", 1]), anchor = "Fake event day -5", unit = pct),
    list(kind = "market_beta", printed = sprintf("%.3f", c1["mkt_pct", 1]), anchor = "Market return"),
    list(kind = "setup_constant", printed = as.character(nobs(m1)), anchor = "Num.Obs.")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

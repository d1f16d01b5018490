# Abnormal returns around the announcement: pooled market-model regression + CAR windows
suppressPackageStartupMessages({
  library(sandwich)
  library(lmtest)
})

d <- read.csv("data/scenario.csv")
d$event_window <- as.integer(d$event_day >= 0)
n_stocks <- length(unique(d$stock_id))
days <- range(d$event_day)
cat(sprintf("Sample: %d stocks, event days %d to %+d (%d stock-days)\n",
            n_stocks, days[1], days[2], nrow(d)))
cat("Abnormal returns: ret - (alpha + beta * mkt_ret), alpha/beta from the pooled regression\n\n")

fit <- lm(ret ~ mkt_ret + event_window, data = d)
V <- vcovCL(fit, cluster = ~stock_id)
print(coeftest(fit, vcov = V))

ar_daily <- coef(fit)[["event_window"]]
se_daily <- sqrt(V["event_window", "event_window"])
d$ar <- d$ret - (coef(fit)[["(Intercept)"]] + coef(fit)[["mkt_ret"]] * d$mkt_ret)
aar <- tapply(d$ar, d$event_day, mean)
car <- function(a, b) sum(aar[as.character(a:b)])

windows <- list(c(-5, -1), c(-1, 1), c(0, 0), c(0, 5), c(0, 10))
notes <- c("pre-event (placebo)", "", "announcement day", "", "full post window")
cat("\nCumulative average abnormal returns\n")
cat(sprintf("%-12s %10s %6s %14s  %s\n", "Window", "CAR", "Days", "CAR per day", ""))
tab <- data.frame()
for (i in seq_along(windows)) {
  w <- windows[[i]]
  lab <- sprintf("CAR(%d,%+d)", w[1], w[2])
  v <- car(w[1], w[2])
  nd <- w[2] - w[1] + 1
  cat(sprintf("%-12s %10.4f %6d %14.5f  %s\n", lab, v, nd, v / nd, notes[i]))
  tab <- rbind(tab, data.frame(lab = lab, car = v, nd = nd))
}
cat(sprintf("\nMain result: the average daily abnormal return over days 0..+10 is %.5f\n", ar_daily))
cat(sprintf("(clustered SE %.5f, t = %.2f). Over the 11-day post window this cumulates to\n",
            se_daily, ar_daily / se_daily))
cat(sprintf("11 x %.5f = %.4f.\n", ar_daily, 11 * ar_daily))

# ---- golden truth (stderr) ----
cv <- function(lab) sprintf("%.4f", tab$car[tab$lab == lab])
shown <- capture.output(print(coeftest(fit, vcov = V)))
cell <- function(term) strsplit(grep(paste0("^", term, " "), shown, value = TRUE), " +")[[1]][2]
beta_txt <- cell("mkt_ret")
truth <- list(
  style = "coeftest table, then a CAR table over five windows with the per-day average, main result stated as the daily average in a sentence, cumulative product written out",
  value = sprintf("%.5f", ar_daily),
  anchor = "Main result:",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = cv("CAR(0,+10)"), anchor = "CAR(0,+10)", unit = list(scale = "as_printed", window = c(0, 10))),
    list(printed = sprintf("%.5f", tab$car[5] / 11), anchor = "CAR(0,+10)"),
    list(printed = cell("event_window"), anchor = "event_window "),
    list(printed = sprintf("%.4f", 11 * ar_daily), anchor = "11 x ", unit = list(scale = "as_printed", window = c(0, 10)))
  ),
  decoys = list(
    list(kind = "setup_constant", printed = as.character(n_stocks), anchor = "Sample:"),
    list(kind = "market_beta", printed = beta_txt, anchor = "mkt_ret  "),
    list(kind = "placebo_window", printed = cv("CAR(-5,-1)"), anchor = "CAR(-5,-1)", unit = list(scale = "as_printed", window = c(-5, -1))),
    list(kind = "shorter_window", printed = cv("CAR(-1,+1)"), anchor = "CAR(-1,+1)", unit = list(scale = "as_printed", window = c(-1, 1))),
    list(kind = "day0_abnormal_return", printed = cv("CAR(0,+0)"), anchor = "CAR(0,+0)"),
    list(kind = "shorter_window", printed = cv("CAR(0,+5)"), anchor = "CAR(0,+5)", unit = list(scale = "as_printed", window = c(0, 5)))
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

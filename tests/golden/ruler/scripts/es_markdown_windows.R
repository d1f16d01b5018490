# Abnormal returns over several windows, as a markdown table
df <- read.csv("data/scenario.csv")
hi <- max(df$event_day)
window_fit <- function(from, to, base) {
  d <- subset(df, (event_day >= from & event_day <= to) | event_day %in% base)
  d$inw <- as.integer(d$event_day >= from & d$event_day <= to)
  coef(lm(ret ~ mkt_ret + inw, data = d))[["inw"]]
}
pre_days <- min(df$event_day):-1
wins <- list(
  list(label = "[-5,-1] (placebo)", from = -5, to = -1, base = min(df$event_day):-6),
  list(label = "[0,0]", from = 0, to = 0, base = pre_days),
  list(label = "[0,+5]", from = 0, to = 5, base = pre_days),
  list(label = sprintf("[0,+%d] **main**", hi), from = 0, to = hi, base = pre_days)
)
cat("| Window | Days | CAR | Mean AR per day |\n|:--|--:|--:|--:|\n")
txt <- list()
for (w in wins) {
  ar <- window_fit(w$from, w$to, w$base)
  n <- w$to - w$from + 1
  txt[[w$label]] <- c(car = sprintf("%.4f", n * ar), day = sprintf("%.5f", ar))
  cat(sprintf("| %s | %d | %s | %s |\n", w$label, n, txt[[w$label]][["car"]], txt[[w$label]][["day"]]))
}
df$post <- as.integer(df$event_day >= 0)
b <- coef(lm(ret ~ mkt_ret + post, data = df))[["post"]]
cat(sprintf("\nNormal returns: pooled market model on days %d..-1; %d stocks.\n",
            min(df$event_day), length(unique(df$stock_id))))
est_txt <- sprintf("%.6f", b)
cat(sprintf("ESTIMATE: %s\n", est_txt))
# ---- golden truth (stderr) ----
main <- txt[[sprintf("[0,+%d] **main**", hi)]]
cat(jsonlite::toJSON(list(
  value = est_txt, anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NULL),
  style = c("markdown table of windows", "bold main marker in a row label", "ESTIMATE line"),
  decoys = list(
    list(kind = "placebo_window", printed = txt[["[-5,-1] (placebo)"]][["day"]], anchor = "| [-5,-1] (placebo)"),
    list(kind = "day0_abnormal_return", printed = txt[["[0,0]"]][["day"]], anchor = "| [0,0] |"),
    list(kind = "shorter_window", printed = txt[["[0,+5]"]][["day"]], anchor = "| [0,+5] |")
  ),
  equivalents = list(
    list(printed = main[["day"]], anchor = "**main**", unit = list(scale = "as_printed", window = NULL)),
    list(printed = main[["car"]], anchor = "**main**", unit = list(scale = "as_printed", window = c(0, hi)))
  )
), auto_unbox = TRUE, null = "null"), file = stderr())

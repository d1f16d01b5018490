# Local linear discontinuity at three bandwidths; the middle one is preferred
suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
cutoff <- 0.5
df$rc <- df$running_var - cutoff
fit_at <- function(sub) {
  fit <- lm(y ~ treated * rc, data = sub)
  ct <- coeftest(fit, vcov = vcovHC(fit, type = "HC3"))
  c(ct["treated", 1], ct["treated", 2], nrow(sub))
}
cat(sprintf("Cutoff: %.1f   Kernel: uniform   Polynomial order: %d\n", cutoff, 1L))
cat(sprintf("Bandwidth used: %.2f\n\n", 0.30))
res <- list(
  "0.20" = fit_at(df[abs(df$rc) <= 0.2, ]),
  "0.30" = fit_at(df[df$near_cutoff == 1, ]),
  "0.40" = fit_at(df[abs(df$rc) <= 0.4, ])
)
cat(sprintf("%9s %10s %9s %5s\n", "bandwidth", "estimate", "std.err", "n"))
txt <- list()
for (h in names(res)) {
  r <- res[[h]]
  txt[[h]] <- sprintf("%.4f", r[1])
  cat(sprintf("%9s %10s %9.4f %5d%s\n", h, txt[[h]], r[2], as.integer(r[3]),
              if (h == "0.30") "   <- preferred" else ""))
}
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = txt[["0.30"]], anchor = "<- preferred",
  unit = list(scale = "as_printed", window = NULL),
  style = c("aligned sprintf table", "preferred row marked with an arrow", "paper protocol"),
  decoys = list(
    list(kind = "other_bandwidth", printed = txt[["0.20"]], anchor = "     0.20 "),
    list(kind = "other_bandwidth", printed = txt[["0.40"]], anchor = "     0.40 "),
    list(kind = "setup_constant", printed = "0.30", anchor = "Bandwidth used"),
    list(kind = "setup_constant", printed = "0.5", anchor = "Cutoff:")
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

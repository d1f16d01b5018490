df <- read.csv("data/scenario.csv")
rd <- function(h) {
  sub <- df[abs(df$running_var - 0.5) <= h, ]
  fit <- lm(y ~ treated * I(running_var - 0.5), data = sub)
  coef(summary(fit))["treated", 1:2]
}
main <- rd(0.3)
cat(sprintf("RD estimate at the cutoff (bandwidth 0.3): %.5f\n", main[1]))
cat("\nRobustness to the bandwidth:\n")
bw <- c(0.15, 0.2, 0.25, 0.35, 0.4)
tab <- data.frame(bandwidth = bw, t(sapply(bw, rd)))
names(tab) <- c("bandwidth", "estimate", "std_error")
print(tab)
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(estimate = round(unname(main[1]), 5), others = unname(main[2])), digits = NA), file = stderr())

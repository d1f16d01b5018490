# Jump in y at the 0.5 threshold: local linear fits, two kernels, three bandwidths
suppressPackageStartupMessages({
  library(sandwich)
  library(lmtest)
})

rd <- read.csv("data/scenario.csv")
CUTOFF <- 0.5
H_MAIN <- 0.30
BANDWIDTHS <- c(0.15, 0.30, 0.45)
rd$r <- rd$running_var - CUTOFF
cat(sprintf("Cutoff c = %.2f (treated at or above); main bandwidth h = %.2f; n = %d\n\n",
            CUTOFF, H_MAIN, nrow(rd)))

fit_rd <- function(h, kernel) {
  s <- rd[abs(rd$r) <= h, ]
  if (kernel == "triangular") s <- s[abs(s$r) < h, ]  # zero weight at the edges
  w <- if (kernel == "uniform") rep(1, nrow(s)) else 1 - abs(s$r) / h
  m <- lm(y ~ treated * r, data = s, weights = w)
  ct <- coeftest(m, vcov = vcovHC(m, type = "HC3"))
  c(est = ct["treated", 1], se = ct["treated", 2], n = nrow(s))
}

grid <- expand.grid(h = BANDWIDTHS, kernel = c("uniform", "triangular"), stringsAsFactors = FALSE)
res <- t(mapply(fit_rd, grid$h, grid$kernel))
grid <- cbind(grid, res)

cat("Local linear estimates of the jump (HC3 standard errors in brackets)\n")
cat(sprintf("%-12s%s\n", "kernel", paste(sprintf("%18s", sprintf("h = %.2f", BANDWIDTHS)), collapse = "")))
for (k in c("uniform", "triangular")) {
  g <- grid[grid$kernel == k, ]
  cells <- sprintf("%.4f [%.4f]%s", g$est, g$se, ifelse(k == "uniform" & g$h == H_MAIN, "*", " "))
  cat(sprintf("%-12s%s\n", k, paste(sprintf("%18s", cells), collapse = "")))
}
cat(sprintf("%-12s%s\n", "n in window", paste(sprintf("%18d", as.integer(grid$n[grid$kernel == "uniform"])), collapse = "")))
cat("* preferred: uniform kernel, h = 0.30 (the near_cutoff window)\n\n")

# Manipulation check: are there suspiciously many observations just above the cutoff?
left <- sum(rd$running_var >= CUTOFF - 0.05 & rd$running_var < CUTOFF)
right <- sum(rd$running_var >= CUTOFF & rd$running_var < CUTOFF + 0.05)
dens <- binom.test(right, left + right, 0.5)
cat(sprintf("Density check within 0.05 of the cutoff: %d below vs %d above, binomial p = %.3f\n",
            left, right, dens$p.value))

main <- grid[grid$kernel == "uniform" & grid$h == H_MAIN, ]
cat(sprintf("\nPreferred estimate: %.4f (SE %.4f, z = %.2f)\n", main$est, main$se, main$est / main$se))
cat(sprintf("ESTIMATE: %.6f\n", main$est))

# ---- golden truth (stderr) ----
cellv <- function(k, h) sprintf("%.4f", grid$est[grid$kernel == k & abs(grid$h - h) < 1e-9])
truth <- list(
  style = "kernel x bandwidth grid of local linear estimates with the preferred cell starred and explained in a footnote, a binomial density test p-value, the preferred estimate restated, then an ESTIMATE line",
  value = sprintf("%.6f", main$est),
  anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = sprintf("%.4f", main$est), anchor = "Preferred estimate:"),
    list(printed = cellv("uniform", 0.30), anchor = "uniform     ")
  ),
  decoys = list(
    list(kind = "setup_constant", printed = "0.50", anchor = "Cutoff c ="),
    list(kind = "setup_constant", printed = "0.30", anchor = "Cutoff c ="),
    list(kind = "other_bandwidth", printed = cellv("uniform", 0.15), anchor = "uniform     "),
    list(kind = "other_bandwidth", printed = cellv("uniform", 0.45), anchor = "uniform     "),
    list(kind = "other_kernel", printed = cellv("triangular", 0.30), anchor = "triangular  "),
    list(kind = "diagnostic_statistic", printed = sprintf("%.3f", dens$p.value), anchor = "binomial p =")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

# Effect of crossing running_var = 0.5 on y (data.table, HC3 via sandwich)
suppressPackageStartupMessages({
  library(data.table)
  library(sandwich)
})

DT <- fread("data/scenario.csv")
cutoff <- 0.5
DT[, rc := running_var - cutoff]

est_at <- function(h) {
  m <- lm(y ~ treated + rc + treated:rc, data = DT[abs(rc) <= h + 1e-9])
  c(est = unname(coef(m)["treated"]), se = sqrt(vcovHC(m, type = "HC3")["treated", "treated"]),
    n = nobs(m))
}
main_fit <- lm(y ~ treated + rc + treated:rc, data = DT[near_cutoff == 1])
main <- c(est = unname(coef(main_fit)["treated"]),
          se = sqrt(vcovHC(main_fit, type = "HC3")["treated", "treated"]))

cat("Main specification (near_cutoff == 1, local linear, HC3):\n")
print(round(main, 4))

sens <- list(
  cutoff = cutoff,
  bandwidths = c(0.1, 0.2, 0.4),
  estimates = round(sapply(c(0.1, 0.2, 0.4), function(h) est_at(h)[["est"]]), 4),
  n_main = nobs(main_fit),
  placebo_cutoff_0.25 = round({
    L <- DT[running_var < cutoff & abs(running_var - 0.25) <= 0.15]
    L[, a := as.integer(running_var >= 0.25)]
    unname(coef(lm(y ~ a * I(running_var - 0.25), data = L))["a"])
  }, 4)
)
cat("\nSensitivity (other bandwidths and a placebo cutoff):\n")
str(sens)

cat(sprintf("\nESTIMATE: %.4f\n", main[["est"]]))

# ---- golden truth (stderr) ----
shown <- capture.output(print(round(main, 4)))
vals <- strsplit(trimws(shown[2]), " +")[[1]]
sshown <- capture.output(str(sens))
est_line <- grep("\\$ estimates", sshown, value = TRUE)
est_toks <- strsplit(trimws(sub(".*\\] ", "", est_line)), " +")[[1]]
pl_line <- grep("placebo_cutoff", sshown, value = TRUE)
truth <- list(
  style = "print(round(c(est = ..., se = ...), 4)) as a named vector, then str() of a sensitivity list (cutoff, bandwidths, estimates, n, placebo), then an ESTIMATE line",
  value = sprintf("%.4f", main[["est"]]),
  anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = vals[1], anchor = c("Main specification", "est", "."))
  ),
  decoys = list(
    list(kind = "setup_constant", printed = "0.5", anchor = "$ cutoff"),
    list(kind = "other_bandwidth", printed = est_toks[1], anchor = "$ estimates"),
    list(kind = "other_bandwidth", printed = est_toks[3], anchor = "$ estimates"),
    list(kind = "setup_constant", printed = as.character(nobs(main_fit)), anchor = "$ n_main"),
    list(kind = "placebo_cutoff", printed = sub(".*: num ", "", pl_line), anchor = "placebo_cutoff")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

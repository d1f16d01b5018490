# Effect of x on y using z as an instrument (AER::ivreg), with diagnostics
suppressPackageStartupMessages({
  library(AER)
  library(sandwich)
})

dat <- read.csv("data/scenario.csv")
cat("Observations:", nrow(dat), "| share with z = 1:", round(mean(dat$z), 3), "\n\n")

iv <- ivreg(y ~ x + controls | z + controls, data = dat)
ols <- lm(y ~ x + controls, data = dat)

cat("### Model 1: two-stage least squares (x instrumented by z), HC1 standard errors\n")
print(summary(iv, vcov = function(m) vcovHC(m, type = "HC1"), diagnostics = TRUE))

cat("### Model 2: OLS, same controls (for comparison; x is endogenous)\n")
print(summary(ols))

b_iv <- coef(iv)[["x"]]
se_iv <- sqrt(vcovHC(iv, type = "HC1")["x", "x"])
cat(sprintf(paste0("Conclusion: instrumenting x with z, a one-unit increase in x changes y by %.3f ",
                   "(robust SE %.3f);\nthe OLS coefficient of %.3f is biased by the confounder, ",
                   "as the Wu-Hausman test confirms.\n"), b_iv, se_iv, coef(ols)[["x"]]))

# ---- golden truth (stderr) ----
s1 <- capture.output(print(summary(iv, vcov = function(m) vcovHC(m, type = "HC1"), diagnostics = TRUE)))
s2 <- capture.output(print(summary(ols)))
tok <- function(shown, pattern, k) strsplit(trimws(grep(pattern, shown, value = TRUE)[1]), " +")[[1]][k]
truth <- list(
  style = "summary() of an ivreg with diagnostics (weak instruments F, Wu-Hausman, Sargan) and summary() of OLS in a row, then a Conclusion sentence",
  value = sprintf("%.3f", b_iv),
  anchor = "Conclusion:",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = tok(s1, "^x ", 2), anchor = c("### Model 1", "Coefficients:", "x    "))
  ),
  decoys = list(
    list(kind = "setup_constant", printed = as.character(nrow(dat)), anchor = "Observations:"),
    list(kind = "first_stage_statistic", printed = tok(s1, "^Weak instruments", 5), anchor = "Weak instruments"),
    list(kind = "diagnostic_statistic", printed = tok(s1, "^Wu-Hausman", 4), anchor = "Wu-Hausman  "),
    list(kind = "naive_model_after_main", printed = tok(s2, "^x ", 2), anchor = c("### Model 2", "Coefficients:", "x    ")),
    list(kind = "naive_model_after_main", printed = sprintf("%.3f", coef(ols)[["x"]]), anchor = "the OLS coefficient of")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

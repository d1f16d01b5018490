# Effect of x on y, instrumenting x with z: AER::ivreg + sandwich + lmtest + car
suppressPackageStartupMessages({
  library(AER)
  library(sandwich)
  library(lmtest)
  library(car)
})

dd <- read.csv("data/scenario.csv")
LEVEL <- 0.95

fs <- lm(x ~ z + controls, data = dd)
fs_test <- linearHypothesis(fs, "z = 0", vcov. = vcovHC(fs, type = "HC1"))
cat(sprintf("Instrument relevance: robust F(z = 0) = %.2f, p = %.3g\n\n", fs_test$F[2], fs_test$`Pr(>F)`[2]))

tsls <- ivreg(y ~ x + controls | z + controls, data = dd)
cat("2SLS coefficients, heteroskedasticity-robust (HC1) covariance:\n")
ct <- coeftest(tsls, vcov. = vcovHC(tsls, type = "HC1"))
print(ct)
ci <- coefci(tsls, vcov. = vcovHC(tsls, type = "HC1"), level = LEVEL)

ols <- lm(y ~ x + controls, data = dd)
ols_ct <- coeftest(ols, vcov. = vcovHC(ols, type = "HC1"))
rf <- lm(y ~ z + controls, data = dd)
# Wald estimator without the control: difference in means of y over difference in means of x
dy <- mean(dd$y[dd$z == 1]) - mean(dd$y[dd$z == 0])
dx <- mean(dd$x[dd$z == 1]) - mean(dd$x[dd$z == 0])

cat(sprintf("\nComparison of estimators (%d%% intervals)\n\n", round(100 * LEVEL)))
cat("|Estimator                 |  Estimate|    SE|Interval            |Role           |\n")
cat("|:-------------------------|---------:|-----:|:-------------------|:--------------|\n")
cat(sprintf("|2SLS, x instrumented by z | %9.4f|%6.3f|%-20s|preferred      |\n",
            ct["x", 1], ct["x", 2], sprintf("[%.3f, %.3f]", ci["x", 1], ci["x", 2])))
cat(sprintf("|OLS                       | %9.4f|%6.3f|                    |biased         |\n",
            ols_ct["x", 1], ols_ct["x", 2]))
cat(sprintf("|Reduced form (y on z)     | %9.4f|      |                    |intent-to-treat|\n",
            coef(rf)[["z"]]))
cat(sprintf("|Wald ratio, no control    | %9.4f|      |                    |check          |\n", dy / dx))
cat(sprintf("\nWald ratio by hand: %.4f / %.4f = %.4f\n", dy, dx, dy / dx))

# ---- golden truth (stderr) ----
shown <- capture.output(print(ct))
xtok <- strsplit(trimws(grep("^x ", shown, value = TRUE)), " +")[[1]][2]
truth <- list(
  style = "lmtest::coeftest with HC1 covariance, a car::linearHypothesis first-stage F, then a hand-written kable pipe table of estimators with a Role column marking 2SLS as preferred, a Wald ratio by hand",
  value = sprintf("%.4f", ct["x", 1]),
  anchor = "|2SLS, x instrumented by z",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = xtok, anchor = c("2SLS coefficients", "x   "))
  ),
  decoys = list(
    list(kind = "first_stage_statistic", printed = sprintf("%.2f", fs_test$F[2]), anchor = "Instrument relevance"),
    list(kind = "setup_constant", printed = as.character(round(100 * LEVEL)), anchor = "Comparison of estimators"),
    list(kind = "confidence_bound", printed = sprintf("%.3f", ci["x", 1]), anchor = "|2SLS, x instrumented by z"),
    list(kind = "naive_model_after_main", printed = sprintf("%.4f", ols_ct["x", 1]), anchor = "|OLS "),
    list(kind = "reduced_form", printed = sprintf("%.4f", coef(rf)[["z"]]), anchor = "|Reduced form"),
    list(kind = "robustness_last_column", printed = sprintf("%.4f", dy / dx), anchor = "|Wald ratio, no control"),
    list(kind = "arithmetic_operand", printed = sprintf("%.4f", dx), anchor = "Wald ratio by hand"),
    list(kind = "robustness_later_fit", printed = sprintf("%.4f", dy / dx), anchor = "Wald ratio by hand")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
fit <- lm(y ~ treated * post, data = df)
ct <- coeftest(fit, vcov = vcovCL(fit, cluster = ~unit_id))
b <- ct["treated:post", 1]
se <- ct["treated:post", 2]
message("Fitted the two-way DiD with unit-clustered SEs")
cat(sprintf("95%% CI: [%.4f, %.4f]\n", b - 1.96 * se, b + 1.96 * se))
cat(sprintf("ATT = %.4f (SE = %.4f)\n", b, se))
cat(sprintf("p-value: %.3g\n", ct["treated:post", 4]))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(estimate = b, others = c(unname(ct["treated:post", -1]), b - 1.96 * se, b + 1.96 * se)), digits = NA), file = stderr())

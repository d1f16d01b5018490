df <- read.csv("data/scenario.csv")
fit <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = df)
est <- coef(summary(fit))["treat_x_post", ]
cat(sprintf("Main DiD estimate: %.5f (SE %.5f)\n", est[1], est[2]))
cat("\n=== Robustness: placebo treatment in the pre-period ===\n")
pre <- subset(df, post == 0)
pre$fake_post <- as.integer(pre$period >= max(pre$period) - 1)
pl <- lm(y ~ treated * fake_post, data = pre)
print(summary(pl)$coefficients)
cat(sprintf("Placebo DiD estimate: %.5f\n", coef(pl)[["treated:fake_post"]]))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(estimate = round(unname(est[1]), 5), others = unname(est[-1])), digits = NA), file = stderr())

df <- read.csv("data/scenario.csv")
sub <- subset(df, near_cutoff == 1)
sub$rc <- sub$running_var - 0.5
fit <- lm(y ~ treated * rc, data = sub)
print(confint(fit))
print(summary(fit)$coefficients)
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["treated", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = c(unname(r[-1]), confint(fit)["treated", ])), digits = NA), file = stderr())

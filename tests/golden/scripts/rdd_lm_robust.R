library(estimatr)
df <- read.csv("data/scenario.csv")
near <- df[df$near_cutoff == 1, ]
fit <- lm_robust(y ~ treated * I(running_var - 0.5), data = near, se_type = "HC3")
summary(fit)
# ---- golden truth (stderr) ----
r <- summary(fit)$coefficients["treated", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

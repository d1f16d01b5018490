df <- read.csv("data/scenario.csv")
sub <- df[df$near_cutoff == 1, ]
sub$xc <- sub$running_var - 0.5
fit <- lm(y ~ treated * xc, data = sub)
str(coef(summary(fit))["treated", ])
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["treated", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

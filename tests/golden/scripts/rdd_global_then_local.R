df <- read.csv("data/scenario.csv")
df$rc <- df$running_var - 0.5
cat("Global quadratic fit on all data\n")
g <- lm(y ~ treated * (rc + I(rc^2)), data = df)
print(summary(g)$coefficients)
cat("\nLocal linear fit within the bandwidth\n")
l <- lm(y ~ treated * rc, data = df[df$near_cutoff == 1, ])
print(summary(l)$coefficients)
# ---- golden truth (stderr) ----
r <- coef(summary(l))["treated", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

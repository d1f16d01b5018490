df <- read.csv("data/scenario.csv")
df$rc <- df$running_var - 0.5
fits <- list(
  "local linear (main)" = lm(y ~ treated * rc, data = subset(df, near_cutoff == 1)),
  "local quadratic" = lm(y ~ treated * (rc + I(rc^2)), data = subset(df, near_cutoff == 1)),
  "global linear" = lm(y ~ treated * rc, data = df)
)
tab <- data.frame(
  model = names(fits),
  estimate = sapply(fits, function(f) coef(f)[["treated"]]),
  std_error = sapply(fits, function(f) coef(summary(f))["treated", 2]),
  row.names = NULL
)
print(tab)
# ---- golden truth (stderr) ----
fit <- fits[[1]]
r <- coef(summary(fit))["treated", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = c(unname(r[-1]), confint(fit)["treated", ])), digits = NA), file = stderr())

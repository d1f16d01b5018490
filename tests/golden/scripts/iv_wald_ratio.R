df <- read.csv("data/scenario.csv")
rf <- coef(lm(y ~ z, data = df))[["z"]]
fs <- coef(lm(x ~ z, data = df))[["z"]]
cat("Reduced form (y on z):", round(rf, 5), "\n")
cat("First stage (x on z):", round(fs, 5), "\n")
cat("Wald IV estimate:", round(rf / fs, 5), "\n")
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(estimate = round(rf / fs, 5), others = numeric(0)), digits = NA), file = stderr())

suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
fit <- lm(y ~ treated + post + treated:post, data = df)
cat("Difference-in-differences, SEs clustered by unit\n")
ct <- coeftest(fit, vcov = vcovCL(fit, cluster = ~unit_id))
print(ct)
# ---- golden truth (stderr) ----
r <- ct["treated:post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

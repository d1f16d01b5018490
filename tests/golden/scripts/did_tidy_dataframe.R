suppressPackageStartupMessages(library(broom))
df <- read.csv("data/scenario.csv")
fit <- lm(y ~ treated * post, data = df)
print(as.data.frame(tidy(fit, conf.int = TRUE)))
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["treated:post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = c(unname(r[-1]), confint(fit)["treated:post", ])), digits = NA), file = stderr())

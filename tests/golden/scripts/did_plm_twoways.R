suppressPackageStartupMessages(library(plm))
df <- read.csv("data/scenario.csv")
pdata <- pdata.frame(df, index = c("unit_id", "period"))
fit <- plm(y ~ treat_x_post, data = pdata, model = "within", effect = "twoways")
print(summary(fit))
# ---- golden truth (stderr) ----
r <- coef(summary(fit))["treat_x_post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

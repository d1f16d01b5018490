suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
sub <- df[abs(df$running_var - 0.5) <= 0.3, ]
fit <- lm(y ~ treated + I(running_var - 0.5) + treated:I(running_var - 0.5), data = sub)
ct <- coeftest(fit, vcov = vcovHC(fit, type = "HC3"))
ct
# ---- golden truth (stderr) ----
r <- ct["treated", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

library(estimatr)
df <- read.csv("data/scenario.csv")
# TWFE with unit and period fixed effects absorbed, SEs clustered by unit
fit <- lm_robust(y ~ treat_x_post, data = df, fixed_effects = ~ unit_id + period,
                 clusters = unit_id, se_type = "stata")
summary(fit)
# ---- golden truth (stderr) ----
r <- summary(fit)$coefficients["treat_x_post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

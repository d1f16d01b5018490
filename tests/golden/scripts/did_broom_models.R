suppressPackageStartupMessages({library(dplyr); library(broom)})
df <- read.csv("data/scenario.csv")
m1 <- lm(y ~ treated * post, data = df)
m2 <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = df)
tab <- bind_rows(
  tidy(m1) %>% filter(term == "treated:post") %>% mutate(model = "pooled 2x2"),
  tidy(m2) %>% filter(term == "treat_x_post") %>% mutate(model = "TWFE")
)
print(tab)
est <- coef(m2)[["treat_x_post"]]
cat(sprintf("Preferred (TWFE) DiD estimate: %.6f\n", est))
# ---- golden truth (stderr) ----
r <- coef(summary(m2))["treat_x_post", ]
cat(jsonlite::toJSON(list(estimate = unname(r[1]), others = unname(r[-1])), digits = NA), file = stderr())

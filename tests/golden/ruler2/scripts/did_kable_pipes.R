# Difference in mean outcomes: treated vs comparison units, before vs after the start date
library(data.table)
suppressPackageStartupMessages({
  library(sandwich)
  library(lmtest)
})

dt <- fread("data/scenario.csv")
start <- dt[post == 1, min(period)]
cat(sprintf("**Setup.** %d units (%d treated), periods %d-%d, treatment from period %d.\n\n",
            uniqueN(dt$unit_id), uniqueN(dt[treated == 1, unit_id]), min(dt$period),
            max(dt$period), start))

# 2x2 table of cell means (balanced panel: their double difference equals the two-way FE estimate)
m <- dt[, .(ybar = mean(y)), by = .(treated, post)]
g <- function(tr, po) m[treated == tr & post == po, ybar]
t_pre <- g(1, 0); t_post <- g(1, 1); c_pre <- g(0, 0); c_post <- g(0, 1)
did <- (t_post - t_pre) - (c_post - c_pre)

cat("Table 1. Mean outcome by group and period\n\n")
cat("| Group     |   Pre  |  Post  | Post - Pre |\n")
cat("|:----------|-------:|-------:|-----------:|\n")
cat(sprintf("| Treated   | %6.3f | %6.3f | %10.3f |\n", t_pre, t_post, t_post - t_pre))
cat(sprintf("| Control   | %6.3f | %6.3f | %10.3f |\n", c_pre, c_post, c_post - c_pre))
cat(sprintf("| T - C     | %6.3f | %6.3f | %10.3f |\n\n", t_pre - c_pre, t_post - c_post, did))

# Regression with unit and period dummies, unit-clustered SEs
fit <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = dt)
ct <- coeftest(fit, vcov = vcovCL(fit, cluster = ~unit_id))["treat_x_post", ]
# placebo: pre-period only, fake start two periods early
pre <- dt[post == 0]
pre[, fake := as.integer(treated == 1 & period >= start - 2)]
pfit <- lm(y ~ fake + factor(unit_id) + factor(period), data = pre)
pct <- coeftest(pfit, vcov = vcovCL(pfit, cluster = ~unit_id))["fake", ]

cat("Table 2. Regression estimates (unit + period fixed effects, SE clustered by unit)\n\n")
cat("| Term                | Estimate | Std. Error | p-value | Note      |\n")
cat("|:--------------------|---------:|-----------:|--------:|:----------|\n")
cat(sprintf("| treat_x_post        | %8.4f | %10.4f | %7.4f | headline  |\n", ct[1], ct[2], ct[4]))
cat(sprintf("| fake_x_post (pre)   | %8.4f | %10.4f | %7.4f | placebo   |\n\n", pct[1], pct[2], pct[4]))

cat(sprintf("Check: (%.3f - %.3f) - (%.3f - %.3f) = %.4f\n", t_post, t_pre, c_post, c_pre, did))
cat(sprintf("The naive post-period gap (T - C after treatment) is %.3f; the double difference\n",
            t_post - c_post))
cat("nets out the fixed group gap and the common shock, leaving the headline row.\n")

# ---- golden truth (stderr) ----
f3 <- function(x) sprintf("%.3f", x)
truth <- list(
  style = "hand-written knitr::kable-like pipe tables (2x2 cell means and a regression table whose main row is marked 'headline'), arithmetic check line",
  value = sprintf("%.4f", ct[1]),
  anchor = "| treat_x_post ",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = f3(did), anchor = "| T - C "),
    list(printed = sprintf("%.4f", did), anchor = "Check: (")
  ),
  decoys = list(
    list(kind = "setup_constant", printed = as.character(start), anchor = "treatment from period"),
    list(kind = "arithmetic_operand", printed = f3(t_post - t_pre), anchor = "| Treated "),
    list(kind = "arithmetic_operand", printed = f3(c_post - c_pre), anchor = "| Control "),
    list(kind = "arithmetic_operand", printed = f3(t_post - c_post), anchor = "| T - C "),
    list(kind = "arithmetic_operand", printed = f3(t_post), anchor = "Check: ("),
    list(kind = "placebo", printed = sprintf("%.4f", pct[1]), anchor = "| fake_x_post"),
    list(kind = "naive_model_after_main", printed = f3(t_post - c_post), anchor = "naive post-period gap")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

# Discontinuity as the difference of the two sides' intercepts at the cutoff
df <- read.csv("data/scenario.csv")
df$rc <- df$running_var - 0.5
near <- subset(df, near_cutoff == 1)
left <- lm(y ~ rc, data = subset(near, treated == 0))
right <- lm(y ~ rc, data = subset(near, treated == 1))
a_l <- coef(left)[["(Intercept)"]]
a_r <- coef(right)[["(Intercept)"]]
tau <- a_r - a_l
f4 <- function(v) sprintf("%.4f", v)
cat("Local linear fits on each side of the cutoff (0.5), bandwidth 0.3\n")
cat(sprintf("  left  intercept at cutoff: %s (n = %d)\n", f4(a_l), nrow(left$model)))
cat(sprintf("  right intercept at cutoff: %s (n = %d)\n", f4(a_r), nrow(right$model)))
main_txt <- f4(tau)
cat(sprintf("tau = %s - %s = %s\n\n", f4(a_r), f4(a_l), main_txt))

donut <- lm(y ~ treated * rc, data = subset(near, abs(rc) > 0.02))
quad <- lm(y ~ treated * (rc + I(rc^2)), data = near)
rob <- data.frame(
  baseline = sprintf("%.3f", tau),
  `donut |rc| > 0.02` = sprintf("%.3f", coef(donut)[["treated"]]),
  `quadratic, h = 0.3` = sprintf("%.3f", coef(quad)[["treated"]]),
  check.names = FALSE, row.names = "estimate"
)
cat("Robustness\n")
print(rob)
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = main_txt, anchor = "tau = ",
  unit = list(scale = "as_printed", window = NULL),
  style = c("hand-computed difference of intercepts", "robustness data.frame after the main line",
            "paper protocol"),
  decoys = list(
    list(kind = "arithmetic_operand", printed = f4(a_r), anchor = "tau = "),
    list(kind = "side_intercept", printed = f4(a_l), anchor = "left  intercept"),
    list(kind = "robustness_last_column", printed = rob[[3]], anchor = c("Robustness", "estimate")),
    list(kind = "setup_constant", printed = "0.3", anchor = "bandwidth 0.3")
  ),
  equivalents = list(
    list(printed = rob[[1]], anchor = c("Robustness", "estimate"),
         unit = list(scale = "as_printed", window = NULL))
  )
), auto_unbox = TRUE, null = "null"), file = stderr())

# Local linear estimate at the cutoff, reported as YAML; a global quartic for comparison
suppressPackageStartupMessages({library(sandwich); library(lmtest)})
df <- read.csv("data/scenario.csv")
df$rc <- df$running_var - 0.5
near <- subset(df, near_cutoff == 1)
fit <- lm(y ~ treated * rc, data = near)
ct <- coeftest(fit, vcov = vcovHC(fit, type = "HC3"))
glob <- lm(y ~ treated * (rc + I(rc^2) + I(rc^3) + I(rc^4)), data = df)
main_txt <- sprintf("%.5f", ct["treated", 1])
glob_txt <- sprintf("%.5f", coef(glob)[["treated"]])
cat("design:\n")
cat("  cutoff: 0.5\n  bandwidth: 0.3\n  kernel: uniform\n  polynomial_order: 1\n  confidence_level: 0.95\n")
cat("estimate:\n")
cat(sprintf("  effect_at_cutoff: %s\n", main_txt))
cat(sprintf("  se_hc3: %.5f\n", ct["treated", 2]))
cat(sprintf("  n_left: %d\n  n_right: %d\n", sum(near$treated == 0), sum(near$treated == 1)))
cat("global_polynomial_order_4:\n")
cat(sprintf("  effect_at_cutoff: %s\n", glob_txt))
cat(sprintf("  n: %s\n", format(nrow(df), big.mark = ",")))
est_txt <- sprintf("%.6f", ct["treated", 1])
cat(sprintf("ESTIMATE: %s\n", est_txt))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = est_txt, anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NULL),
  style = c("YAML-ish nested keys with repeated key names", "ESTIMATE line"),
  decoys = list(
    list(kind = "global_polynomial_after_main", printed = glob_txt,
         anchor = c("global_polynomial_order_4:", "effect_at_cutoff:")),
    list(kind = "setup_constant", printed = "0.3", anchor = "bandwidth:"),
    list(kind = "setup_constant", printed = "1", anchor = "polynomial_order:")
  ),
  equivalents = list(
    list(printed = main_txt, anchor = c("estimate:", "effect_at_cutoff:"),
         unit = list(scale = "as_printed", window = NULL))
  )
), auto_unbox = TRUE, null = "null"), file = stderr())

# Two-way within estimator (plm), reported with Unicode symbols
suppressPackageStartupMessages({library(plm); library(lmtest)})
df <- read.csv("data/scenario.csv")
start <- min(df$period[df$treat_x_post == 1])
uminus <- function(s) sub("^-", "\u2212", s)

pdat <- pdata.frame(df, index = c("unit_id", "period"))
fe <- plm(y ~ treat_x_post, data = pdat, model = "within", effect = "twoways")
ct <- coeftest(fe, vcov = vcovHC(fe, cluster = "group", type = "HC1"))
b <- ct["treat_x_post", 1]
half <- qnorm(0.975) * ct["treat_x_post", 2]
main_txt <- uminus(sprintf("%.4f", b))
cat(sprintf("Two-way fixed effects (within), adoption in period %d\n", start))
cat(sprintf("  \u03b2\u0302 = %s \u00b1 %.4f   (95%% CI, clustered by unit; N = %s)\n",
            main_txt, half, format(nrow(df), big.mark = ",")))

pre <- subset(df, period < start)
pre$fake <- as.integer(pre$treated == 1 & pre$period >= start - 2)
pl <- plm(y ~ fake, data = pdata.frame(pre, index = c("unit_id", "period")),
          model = "within", effect = "twoways")
placebo_txt <- uminus(sprintf("%.4f", coef(pl)[["fake"]]))
cat(sprintf("  placebo \u03c4\u0302 (adoption moved to period %d, pre-periods only) = %s\n",
            start - 2, placebo_txt))

pool <- plm(y ~ treat_x_post, data = pdat, model = "pooling")
pool_txt <- uminus(sprintf("%.4f", coef(pool)[["treat_x_post"]]))
cat(sprintf("  pooled OLS \u03b2\u0302 (no fixed effects) = %s\n", pool_txt))
est_txt <- sprintf("%.6f", b)
cat(sprintf("ESTIMATE: %s\n", est_txt))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = est_txt, anchor = "ESTIMATE:",
  unit = list(scale = "as_printed", window = NULL),
  style = c("Unicode beta-hat, tau-hat, plus-minus and minus sign", "ESTIMATE line"),
  decoys = list(
    list(kind = "placebo", printed = placebo_txt, anchor = "placebo"),
    list(kind = "naive_model_after_main", printed = pool_txt, anchor = "pooled OLS")
  ),
  equivalents = list(
    list(printed = main_txt, anchor = "(95% CI", unit = list(scale = "as_printed", window = NULL))
  )
), auto_unbox = TRUE, null = "null"), file = stderr())

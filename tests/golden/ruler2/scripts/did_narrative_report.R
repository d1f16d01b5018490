# Effect of the programme on the outcome: two-way fixed-effects panel analysis
suppressPackageStartupMessages({
  library(plm)
  library(lmtest)
  library(sandwich)
})

message("Reading data/scenario.csv ...")
df <- read.csv("data/scenario.csv")
n_units <- length(unique(df$unit_id))
n_periods <- length(unique(df$period))
first_post <- min(df$period[df$post == 1])
n_treated <- length(unique(df$unit_id[df$treated == 1]))
message(sprintf("Loaded %d rows (%d units x %d periods)", nrow(df), n_units, n_periods))

# Main specification: unit and period fixed effects, SEs clustered by unit
pdf <- pdata.frame(df, index = c("unit_id", "period"))
fe <- plm(y ~ treat_x_post, data = pdf, model = "within", effect = "twoways")
ct <- coeftest(fe, vcov = vcovHC(fe, type = "HC1", cluster = "group"))
b <- ct["treat_x_post", "Estimate"]
se <- ct["treat_x_post", "Std. Error"]
pv <- ct["treat_x_post", "Pr(>|t|)"]
lo <- b - 1.96 * se
hi <- b + 1.96 * se
base_mean <- mean(df$y[df$treated == 1 & df$post == 0])
pct <- 100 * b / base_mean
message("Main model done; running comparisons")

# Comparisons
naive <- mean(df$y[df$treated == 1 & df$post == 1]) - mean(df$y[df$treated == 0 & df$post == 1])
before_after <- mean(df$y[df$treated == 1 & df$post == 1]) - mean(df$y[df$treated == 1 & df$post == 0])
pre <- subset(df, post == 0)
fake_start <- first_post - 2
pre$fake <- as.integer(pre$treated == 1 & pre$period >= fake_start)
ppre <- pdata.frame(pre, index = c("unit_id", "period"))
plac <- plm(y ~ fake, data = ppre, model = "within", effect = "twoways")
plac_ct <- coeftest(plac, vcov = vcovHC(plac, type = "HC1", cluster = "group"))

rule <- strrep("=", 66)
cat(rule, "\n", sep = "")
cat(" PROGRAMME EVALUATION REPORT\n")
cat(rule, "\n", sep = "")
cat(sprintf("Data: %d unit-period observations on %d units observed over %d periods.\n",
            nrow(df), n_units, n_periods))
cat(sprintf("Treatment switches on in period %d for the %d treated units.\n\n", first_post, n_treated))

cat("1. Main result\n")
cat("--------------\n")
cat("Using a two-way fixed-effects panel model (unit and period effects, standard errors\n")
cat("clustered by unit), we find that the treatment changed the outcome by ")
cat(sprintf("%.4f units\n(SE %.4f, 95%% CI %.3f to %.3f, p = %.2g).\n", b, se, lo, hi, pv))
cat(sprintf("This is about %.1f%% of the treated group's pre-treatment mean of %.3f.\n\n",
            pct, base_mean))

cat("2. Comparisons and checks\n")
cat("-------------------------\n")
cat(sprintf("A naive comparison of post-period means (treated minus control) gives %.4f,\n", naive))
cat("which mixes the effect with the permanent level difference between the groups.\n")
cat(sprintf("The raw before/after change among treated units alone is %.4f.\n", before_after))
cat(sprintf("Placebo: pretending treatment began in period %d (pre-period data only) yields\n",
            fake_start))
cat(sprintf("an estimate of %.4f (p = %.2f), %s.\n\n",
            plac_ct["fake", "Estimate"], plac_ct["fake", "Pr(>|t|)"],
            if (plac_ct["fake", "Pr(>|t|)"] > 0.1) "consistent with parallel pre-trends"
            else "a warning sign for the parallel-trends assumption"))

cat("3. Conclusion\n")
cat("-------------\n")
cat(sprintf("The estimated average effect of treatment on the treated is %.3f.\n", b))
message("Report written.")

# ---- golden truth (stderr) ----
f4 <- function(x) sprintf("%.4f", x)
truth <- list(
  style = "verbose narrative report with the effect in a sentence, cat() to stdout and message() progress to stderr, percent of the baseline mean",
  value = f4(b),
  anchor = "changed the outcome by",
  unit = list(scale = "as_printed", window = NA),
  equivalents = list(
    list(printed = sprintf("%.3f", b), anchor = "average effect of treatment on the treated is")
  ),
  decoys = list(
    list(kind = "setup_constant", printed = as.character(n_units), anchor = "unit-period observations on"),
    list(kind = "setup_constant", printed = as.character(first_post), anchor = "Treatment switches on in period"),
    list(kind = "confidence_bound", printed = sprintf("%.3f", lo), anchor = "(SE "),
    list(kind = "percent_of_baseline", printed = sprintf("%.1f", pct), anchor = "pre-treatment mean of"),
    list(kind = "baseline_mean", printed = sprintf("%.3f", base_mean), anchor = "pre-treatment mean of"),
    list(kind = "naive_model_after_main", printed = f4(naive), anchor = "naive comparison of post-period means"),
    list(kind = "naive_model_after_main", printed = f4(before_after), anchor = "raw before/after change"),
    list(kind = "placebo", printed = f4(plac_ct["fake", "Estimate"]), anchor = "an estimate of")
  )
)
cat(jsonlite::toJSON(truth, auto_unbox = TRUE, digits = NA), "\n", file = stderr())

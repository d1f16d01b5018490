# Difference in differences by hand from the four cell means (balanced panel)
df <- read.csv("data/scenario.csv")
start <- min(df$period[df$treat_x_post == 1])
cat(sprintf("Pre-period: periods %d-%d (%d periods); post-period from period %d\n",
            min(df$period), start - 1, start - min(df$period), start))

cell <- function(d, g, p) mean(d$y[d$treated == g & d$post == p])
means <- matrix(c(cell(df, 0, 0), cell(df, 0, 1), cell(df, 1, 0), cell(df, 1, 1)),
                nrow = 2, byrow = TRUE, dimnames = list(c("comparison", "adopters"), c("before", "after")))
cat("\nMean outcome by group and period:\n")
print(round(means, 4))

f4 <- function(v) sprintf("%.4f", v)
did <- (means["adopters", "after"] - means["adopters", "before"]) -
  (means["comparison", "after"] - means["comparison", "before"])
main_txt <- f4(did)
first_op <- f4(means["adopters", "after"])
cat(sprintf("\nDiD = (%s - %s) - (%s - %s) = %s\n", first_op, f4(means["adopters", "before"]),
            f4(means["comparison", "after"]), f4(means["comparison", "before"]), main_txt))

# placebo: pretend adoption happened two periods early, using pre-period data only
pre <- subset(df, period < start)
pre$post <- as.integer(pre$period >= start - 2)
placebo <- (cell(pre, 1, 1) - cell(pre, 1, 0)) - (cell(pre, 0, 1) - cell(pre, 0, 0))
placebo_txt <- f4(placebo)
cat(sprintf("Placebo effect (fake adoption in period %d, pre-period only): %s\n", start - 2, placebo_txt))
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(
  value = main_txt, anchor = "DiD = (",
  unit = list(scale = "as_printed", window = NULL),
  style = c("hand-computed arithmetic expression", "printed matrix of means"),
  decoys = list(
    list(kind = "arithmetic_operand", printed = first_op, anchor = "DiD = ("),
    list(kind = "placebo", printed = placebo_txt, anchor = "Placebo effect"),
    list(kind = "setup_constant", printed = as.character(start), anchor = "post-period from period")
  ),
  equivalents = list()
), auto_unbox = TRUE, null = "null"), file = stderr())

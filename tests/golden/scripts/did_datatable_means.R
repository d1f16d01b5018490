suppressPackageStartupMessages(library(data.table))
dt <- fread("data/scenario.csv")
means <- dt[, .(mean_y = mean(y), n = .N), by = .(treated, post)][order(treated, post)]
print(means)
m <- function(t, p) means[treated == t & post == p, mean_y]
did <- (m(1, 1) - m(1, 0)) - (m(0, 1) - m(0, 0))
cat("DiD estimate:", round(did, 6), "\n")
# ---- golden truth (stderr) ----
cat(jsonlite::toJSON(list(estimate = round(did, 6), others = numeric(0)), digits = NA), file = stderr())

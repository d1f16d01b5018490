# Canonical estimators, profile "paper", written independently in R.
#
# Usage: Rscript canonical_paper.R FAMILY=CSV [FAMILY=CSV ...]
# Prints one line per input: "family<TAB>csv<TAB>estimate<TAB>se<TAB>n" with 17 significant digits.
#   did          lm with factor unit and period effects; iid SE with n - 2 residual df
#   event_study  estimatr::lm_robust, clusters = stock_id, se_type = "stata" (CR1)
#   iv           AER::ivreg + sandwich::vcovHC(type = "HC0")
#   rdd          lm on near_cutoff == 1 + sandwich::vcovHC(type = "HC3")
suppressPackageStartupMessages({
  library(sandwich)
  library(AER)
  library(estimatr)
})

did <- function(d) {
  fit <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = d)
  n <- nrow(d)
  sigma2 <- sum(residuals(fit)^2) / (n - 2)
  se <- sqrt(sigma2 * summary(fit)$cov.unscaled["treat_x_post", "treat_x_post"])
  c(coef(fit)[["treat_x_post"]], se, n)
}

event_study <- function(d) {
  d$post <- as.numeric(d$event_day >= 0)
  fit <- lm_robust(ret ~ mkt_ret + post, data = d, clusters = stock_id, se_type = "stata")
  c(coef(fit)[["post"]], fit$std.error[["post"]], nrow(d))
}

iv <- function(d) {
  fit <- ivreg(y ~ x + controls | z + controls, data = d)
  se <- sqrt(vcovHC(fit, type = "HC0")["x", "x"])
  c(coef(fit)[["x"]], se, nrow(d))
}

rdd <- function(d) {
  d <- d[d$near_cutoff == 1, ]
  d$rc <- d$running_var - 0.5
  fit <- lm(y ~ treated * rc, data = d)
  se <- sqrt(vcovHC(fit, type = "HC3")["treated", "treated"])
  c(coef(fit)[["treated"]], se, nrow(d))
}

estimators <- list(did = did, event_study = event_study, iv = iv, rdd = rdd)

for (arg in commandArgs(trailingOnly = TRUE)) {
  parts <- strsplit(arg, "=", fixed = TRUE)[[1]]
  family <- parts[1]
  path <- paste(parts[-1], collapse = "=")
  out <- estimators[[family]](read.csv(path))
  cat(family, path, sprintf("%.17g", out[1]), sprintf("%.17g", out[2]), sprintf("%d", as.integer(out[3])),
      sep = "\t")
  cat("\n")
}

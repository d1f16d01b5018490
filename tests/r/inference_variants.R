# The canonical SE variants (causalverify.estimators.canonical_inference), written independently
# in R with sandwich, estimatr and AER.
#
# Usage: Rscript inference_variants.R FAMILY=CSV [FAMILY=CSV ...]
# Prints one line per variant and implementation: "csv<TAB>variant<TAB>implementation<TAB>se"
# with 17 significant digits.
suppressPackageStartupMessages({
  library(sandwich)
  library(AER)
  library(estimatr)
})

se_of <- function(v, term) sqrt(v[term, term])

did <- function(d) {
  d$unit_f <- factor(d$unit_id)
  d$period_f <- factor(d$period)
  fit <- lm(y ~ treat_x_post + unit_f + period_f, data = d)
  n <- nrow(d)
  n_periods <- nlevels(d$period_f)
  # fixest's K with the unit effects nested in the unit clusters: the effect and the periods
  cr0 <- vcovCL(fit, cluster = ~unit_id, type = "HC0")  # G/(G-1) included (cadjust)
  robust <- lm_robust(y ~ treat_x_post + unit_f + period_f, data = d, clusters = unit_id,
                      se_type = "stata")
  list(
    c("cr1", "sandwich::vcovCL(HC0) * (n-1)/(n-1-T)",
      se_of(cr0, "treat_x_post") * sqrt((n - 1) / (n - 1 - n_periods))),
    c("cr1_dummies", "sandwich::vcovCL(HC1)",
      se_of(vcovCL(fit, cluster = ~unit_id, type = "HC1"), "treat_x_post")),
    c("cr1_dummies", "estimatr::lm_robust(stata)", robust$std.error[["treat_x_post"]]),
    c("hc1", "sandwich::vcovHC(HC1)", se_of(vcovHC(fit, type = "HC1"), "treat_x_post")),
    c("classical", "stats::vcov(lm)", se_of(vcov(fit), "treat_x_post"))
  )
}

event_study <- function(d) {
  d$post <- as.numeric(d$event_day >= 0)
  fit <- lm(ret ~ mkt_ret + post, data = d)
  robust <- lm_robust(ret ~ mkt_ret + post, data = d, clusters = stock_id, se_type = "stata")
  list(
    c("cr1", "estimatr::lm_robust(stata)", robust$std.error[["post"]]),
    c("cr1", "sandwich::vcovCL(HC1)", se_of(vcovCL(fit, cluster = ~stock_id, type = "HC1"), "post")),
    c("hc1", "sandwich::vcovHC(HC1)", se_of(vcovHC(fit, type = "HC1"), "post")),
    c("classical", "stats::vcov(lm)", se_of(vcov(fit), "post"))
  )
}

iv <- function(d) {
  fit <- ivreg(y ~ x + controls | z + controls, data = d)
  hc1 <- iv_robust(y ~ x + controls | z + controls, data = d, se_type = "HC1")
  classical <- iv_robust(y ~ x + controls | z + controls, data = d, se_type = "classical")
  list(
    c("hc1", "sandwich::vcovHC(HC1)", se_of(vcovHC(fit, type = "HC1"), "x")),
    c("hc1", "estimatr::iv_robust(HC1)", hc1$std.error[["x"]]),
    c("hc0", "sandwich::vcovHC(HC0)", se_of(vcovHC(fit, type = "HC0"), "x")),
    c("classical", "AER::ivreg vcov", se_of(vcov(fit), "x")),
    c("classical", "estimatr::iv_robust(classical)", classical$std.error[["x"]])
  )
}

rdd <- function(d) {
  d <- d[d$near_cutoff == 1, ]
  d$rc <- d$running_var - 0.5
  fit <- lm(y ~ treated * rc, data = d)
  list(
    c("hc1", "sandwich::vcovHC(HC1)", se_of(vcovHC(fit, type = "HC1"), "treated")),
    c("hc1", "estimatr::lm_robust(HC1)",
      lm_robust(y ~ treated * rc, data = d, se_type = "HC1")$std.error[["treated"]]),
    c("hc3", "sandwich::vcovHC(HC3)", se_of(vcovHC(fit, type = "HC3"), "treated")),
    c("hc3", "estimatr::lm_robust(HC3)",
      lm_robust(y ~ treated * rc, data = d, se_type = "HC3")$std.error[["treated"]])
  )
}

variants <- list(did = did, event_study = event_study, iv = iv, rdd = rdd)

for (arg in commandArgs(trailingOnly = TRUE)) {
  parts <- strsplit(arg, "=", fixed = TRUE)[[1]]
  path <- paste(parts[-1], collapse = "=")
  for (row in variants[[parts[1]]](read.csv(path))) {
    cat(path, row[1], row[2], sprintf("%.17g", as.numeric(row[3])), sep = "\t")
    cat("\n")
  }
}

"""R code pieces of the reference agents, one :class:`FamilyCode` per design family.

Only packages shipped with the execution environment are used (stats, sandwich, lmtest, AER),
except in the ``missing`` pieces, which load fixest or rdrobust on purpose.
"""

from __future__ import annotations

from causalverify.families import Family
from causalverify.reference._code import DESCRIPTIONS, FamilyCode, Reporter

REPORTER = Reporter(
    print_text='cat("{text}\\n")',
    print_labelled='cat(sprintf("Estimated effect: %.10g\\n", est))',
    print_estimate='cat(sprintf("ESTIMATE: %.10g\\n", est))',
    mute_line='cat("Model estimated; the fitted object is kept in `fit`.\\n")\n',
    print_inference="""\
cat(sprintf("SE: %.10g\\n", se))
cat(sprintf("CI: [%.10g, %.10g]\\n", est - qnorm(0.975) * se, est + qnorm(0.975) * se))
cat(sprintf("VCOV: %s\\n", vcov_used))""",
)

_SE_HELPERS = """\
library(sandwich)
library(lmtest)
"""

DID = FamilyCode(
    setup=_SE_HELPERS
    + """\
df <- read.csv("<<DATA>>")
""",
    textbook="""\
# Two-way fixed effects: unit effects absorb permanent differences, period effects common shocks
fit <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = df)
est <- unname(coef(fit)["treat_x_post"])
""",
    robustness="""\
# Robustness: conventional and unit-clustered standard errors (same point estimate)
se_conv <- sqrt(diag(vcov(fit)))["treat_x_post"]
se_cl <- sqrt(diag(vcovCL(fit, cluster = ~unit_id)))["treat_x_post"]
cat(sprintf("Std. error, conventional: %.4f; clustered by unit: %.4f\\n", se_conv, se_cl))
""",
    naive="""\
# Compare treated and comparison units after the policy starts
after <- subset(df, post == 1)
est <- mean(after$y[after$treated == 1]) - mean(after$y[after$treated == 0])
""",
    cumulative="""\
fit <- lm(y ~ treat_x_post + factor(unit_id) + factor(period), data = df)
n_post <- length(unique(df$period[df$post == 1]))
# Total effect accumulated over all post-policy periods
est <- n_post * unname(coef(fit)["treat_x_post"])
""",
    wrong_term="""\
fit <- lm(y ~ treated * post, data = df)
print(coeftest(fit, vcov. = vcovCL(fit, cluster = ~unit_id)))
est <- unname(coef(fit)["treated"])
""",
    missing="""\
library(fixest)
fit <- feols(y ~ treat_x_post | unit_id + period, data = df, cluster = ~unit_id)
est <- unname(coef(fit)["treat_x_post"])
""",
    typo="""\
fit <- lm(y ~ treat_post + factor(unit_id) + factor(period), data = df)
est <- unname(coef(fit)["treat_post"])
""",
    descriptions=DESCRIPTIONS["did"],
    inference="""\
# Inference: clustered by unit, CR1 as fixest computes it; the unit effects are nested in the
# clusters, so the small-sample factor (n-1)/(n-K) counts only the effect and the periods
n_obs <- nobs(fit)
k_kept <- 1 + length(unique(df$period))
v_cl <- vcovCL(fit, cluster = ~unit_id, type = "HC0")["treat_x_post", "treat_x_post"]
se <- sqrt(v_cl * (n_obs - 1) / (n_obs - k_kept))
vcov_used <- "CR1 clustered by unit_id (fixest small-sample factors, nested unit effects)"
""",
    naive_se_inference="""\
# Standard error from the regression table
se <- unname(coef(summary(fit))["treat_x_post", "Std. Error"])
vcov_used <- "OLS standard errors from lm"
""",
)

EVENT_STUDY = FamilyCode(
    setup=_SE_HELPERS
    + """\
df <- read.csv("<<DATA>>")
df$post <- as.integer(df$event_day >= 0)
""",
    textbook="""\
# Market model with a shift on event days 0..+10: the shift is the daily abnormal return
fit <- lm(ret ~ mkt_ret + post, data = df)
est <- unname(coef(fit)["post"])
""",
    robustness="""\
# Robustness: conventional and stock-clustered standard errors (same point estimate)
se_conv <- sqrt(diag(vcov(fit)))["post"]
se_cl <- sqrt(diag(vcovCL(fit, cluster = ~stock_id)))["post"]
cat(sprintf("Std. error, conventional: %.6f; clustered by stock: %.6f\\n", se_conv, se_cl))
""",
    naive="""\
# Abnormal return = raw return minus the stock's average return over the window
df$abn <- df$ret - ave(df$ret, df$stock_id)
est <- mean(df$abn[df$event_day >= 0])
""",
    cumulative="""\
fit <- lm(ret ~ mkt_ret + post, data = df)
n_event_days <- length(unique(df$event_day[df$event_day >= 0]))
# Cumulative abnormal return over the event window
est <- n_event_days * unname(coef(fit)["post"])
""",
    wrong_term="""\
fit <- lm(ret ~ mkt_ret + post, data = df)
print(coeftest(fit, vcov. = vcovCL(fit, cluster = ~stock_id)))
est <- unname(coef(fit)["mkt_ret"])
""",
    missing="""\
library(fixest)
fit <- feols(ret ~ mkt_ret + post, data = df, cluster = ~stock_id)
est <- unname(coef(fit)["post"])
""",
    typo="""\
fit <- lm(ret ~ mkt_return + post, data = df)
est <- unname(coef(fit)["post"])
""",
    descriptions=DESCRIPTIONS["event_study"],
    inference="""\
# Inference: clustered by stock, CR1 (G/(G-1) * (n-1)/(n-K), as fixest computes it)
se <- sqrt(vcovCL(fit, cluster = ~stock_id, type = "HC1")["post", "post"])
vcov_used <- "CR1 clustered by stock_id"
""",
    naive_se_inference="""\
# Standard error from the regression table
se <- unname(coef(summary(fit))["post", "Std. Error"])
vcov_used <- "OLS standard errors from lm"
""",
)

IV = FamilyCode(
    setup=_SE_HELPERS
    + """\
library(AER)
df <- read.csv("<<DATA>>")
""",
    textbook="""\
# Two-stage least squares: x instrumented by z, controls exogenous
fit <- ivreg(y ~ x + controls | z + controls, data = df)
est <- unname(coef(fit)["x"])
""",
    robustness="""\
# Robustness: first-stage strength and heteroskedasticity-robust standard errors
first <- lm(x ~ z + controls, data = df)
cat(sprintf("First stage: t-statistic on z = %.2f\\n", coeftest(first)["z", "t value"]))
se_hc <- sqrt(diag(vcovHC(fit, type = "HC1")))["x"]
cat(sprintf("Std. error, robust (HC1): %.4f\\n", se_hc))
""",
    naive="""\
# Regress the outcome directly on the treatment, holding the control fixed
fit <- lm(y ~ x + controls, data = df)
print(coeftest(fit, vcov. = vcovHC(fit, type = "HC1")))
est <- unname(coef(fit)["x"])
""",
    cumulative="""\
# The effect is a single response per unit of x; there is nothing to accumulate
fit <- ivreg(y ~ x + controls | z + controls, data = df)
est <- unname(coef(fit)["x"])
""",
    wrong_term="""\
fit <- ivreg(y ~ x + controls | z + controls, data = df)
first <- lm(x ~ z + controls, data = df)
print(coeftest(first, vcov. = vcovHC(first, type = "HC1")))
est <- unname(coef(first)["z"])
""",
    missing="""\
library(fixest)
fit <- feols(y ~ controls | x ~ z, data = df, vcov = "hetero")
est <- unname(coef(fit)["fit_x"])
""",
    typo="""\
fit <- ivreg(y ~ x + control | z + control, data = df)
est <- unname(coef(fit)["x"])
""",
    descriptions=DESCRIPTIONS["iv"],
    inference="""\
# Inference: heteroskedasticity-robust (HC1) standard error of the 2SLS estimate
se <- sqrt(vcovHC(fit, type = "HC1")["x", "x"])
vcov_used <- "HC1 (heteroskedasticity-robust)"
""",
    naive_se="""\
# Two-stage least squares by hand: the first stage, then OLS of y on the fitted x
first <- lm(x ~ z + controls, data = df)
df$x_hat <- fitted(first)
fit <- lm(y ~ x_hat + controls, data = df)
est <- unname(coef(fit)["x_hat"])
""",
    naive_se_inference="""\
# Standard error from the second-stage regression table
se <- unname(coef(summary(fit))["x_hat", "Std. Error"])
vcov_used <- "OLS standard errors of the second stage"
""",
)

RDD = FamilyCode(
    setup=_SE_HELPERS
    + """\
df <- read.csv("<<DATA>>")
cutoff <- <<CUTOFF>>
""",
    textbook="""\
# Local linear fit within the bandwidth, separate slopes on each side of the cutoff
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- lm(y ~ treated * rc, data = near)
est <- unname(coef(fit)["treated"])
""",
    robustness="""\
# Robustness: conventional and HC3 standard errors (same point estimate)
se_conv <- sqrt(diag(vcov(fit)))["treated"]
se_hc3 <- sqrt(diag(vcovHC(fit, type = "HC3")))["treated"]
cat(sprintf("Std. error, conventional: %.4f; HC3: %.4f\\n", se_conv, se_hc3))
""",
    naive="""\
# Compare mean outcomes of treated and untreated observations
est <- mean(df$y[df$treated == 1]) - mean(df$y[df$treated == 0])
""",
    cumulative="""\
# A jump at the cutoff is a one-off level shift; there is nothing to accumulate
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- lm(y ~ treated * rc, data = near)
est <- unname(coef(fit)["treated"])
""",
    wrong_term="""\
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- lm(y ~ treated * rc, data = near)
print(coeftest(fit, vcov. = vcovHC(fit, type = "HC3")))
est <- unname(coef(fit)["rc"])
""",
    missing="""\
library(rdrobust)
rd <- rdrobust(df$y, df$running_var, c = cutoff, h = 0.3, kernel = "uniform")
est <- rd$coef[1]
""",
    typo="""\
near <- subset(df, near_cutof == 1)
near$rc <- near$running_var - cutoff
fit <- lm(y ~ treated * rc, data = near)
est <- unname(coef(fit)["treated"])
""",
    descriptions=DESCRIPTIONS["rdd"],
    inference="""\
# Inference: heteroskedasticity-robust (HC1) standard error of the jump
se <- sqrt(vcovHC(fit, type = "HC1")["treated", "treated"])
vcov_used <- "HC1 (heteroskedasticity-robust)"
""",
    naive_se_inference="""\
# Standard error of the jump: the two sides of the window as independent samples
above <- near$y[near$treated == 1]
below <- near$y[near$treated == 0]
se <- sqrt(var(above) / length(above) + var(below) / length(below))
vcov_used <- "two-sample standard error of the difference across the cutoff"
""",
)

PIECES: dict[Family, FamilyCode] = {
    "did": DID,
    "event_study": EVENT_STUDY,
    "iv": IV,
    "rdd": RDD,
}

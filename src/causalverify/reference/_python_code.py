"""Python code pieces of the reference agents, one :class:`FamilyCode` per design family.

Only packages shipped with the execution environment are used (pandas, statsmodels,
linearmodels), except in the ``missing`` pieces, which import econtools or rdd on purpose.
"""

from __future__ import annotations

from causalverify.families import Family
from causalverify.reference._code import DESCRIPTIONS, FamilyCode, Reporter

REPORTER = Reporter(
    print_text='print("{text}")',
    print_labelled='print(f"Estimated effect: {est:.10g}")',
    print_estimate='print(f"ESTIMATE: {est:.10g}")',
    mute_line='print("Model estimated; the fitted object is kept in `fit`.")\n',
    print_inference="""\
z = 1.959963984540054  # the 97.5% quantile of the standard normal
print(f"SE: {se:.10g}")
print(f"CI: [{est - z * se:.10g}, {est + z * se:.10g}]")
print(f"VCOV: {vcov_used}")""",
)

_IMPORTS = """\
import pandas as pd
import statsmodels.formula.api as smf
"""

DID = FamilyCode(
    setup=_IMPORTS
    + """\

df = pd.read_csv("<<DATA>>")
""",
    textbook="""\
# Two-way fixed effects: unit effects absorb permanent differences, period effects common shocks
formula = "y ~ treat_x_post + C(unit_id) + C(period)"
fit = smf.ols(formula, data=df).fit()
est = float(fit.params["treat_x_post"])
""",
    robustness="""\
# Robustness: conventional and unit-clustered standard errors (same point estimate)
clustered = smf.ols(formula, data=df).fit(cov_type="cluster", cov_kwds={"groups": df["unit_id"]})
se_conv = fit.bse["treat_x_post"]
se_cl = clustered.bse["treat_x_post"]
print(f"Std. error, conventional: {se_conv:.4f}; clustered by unit: {se_cl:.4f}")
""",
    naive="""\
# Compare treated and comparison units after the policy starts
after = df[df["post"] == 1]
est = float(after.loc[after["treated"] == 1, "y"].mean() - after.loc[after["treated"] == 0, "y"].mean())
""",
    cumulative="""\
fit = smf.ols("y ~ treat_x_post + C(unit_id) + C(period)", data=df).fit()
n_post = df.loc[df["post"] == 1, "period"].nunique()
# Total effect accumulated over all post-policy periods
est = float(n_post * fit.params["treat_x_post"])
""",
    wrong_term="""\
fit = smf.ols("y ~ treated * post", data=df).fit(cov_type="cluster", cov_kwds={"groups": df["unit_id"]})
print(fit.summary().tables[1])
est = float(fit.params["treated"])
""",
    missing="""\
import econtools.metrics as mt

fit = mt.reg(df, "y", ["treat_x_post"], fe_name="unit_id", cluster="unit_id")
est = float(fit.beta["treat_x_post"])
""",
    typo="""\
formula = "y ~ treat_post + C(unit_id) + C(period)"
fit = smf.ols(formula, data=df).fit()
est = float(fit.params["treat_post"])
""",
    descriptions=DESCRIPTIONS["did"],
    inference="""\
# Inference: clustered by unit, CR1 as fixest computes it; the unit effects are nested in the
# clusters, so the small-sample factor (n-1)/(n-K) counts only the effect and the periods
n_obs, k_all = fit.nobs, fit.df_model + 1
k_kept = 1 + df["period"].nunique()
se = float(clustered.bse["treat_x_post"]) * ((n_obs - k_all) / (n_obs - k_kept)) ** 0.5
vcov_used = "CR1 clustered by unit_id (fixest small-sample factors, nested unit effects)"
""",
    naive_se_inference="""\
# Standard error from the regression table
se = float(fit.bse["treat_x_post"])
vcov_used = "OLS standard errors (nonrobust)"
""",
)

EVENT_STUDY = FamilyCode(
    setup=_IMPORTS
    + """\

df = pd.read_csv("<<DATA>>")
df["post"] = (df["event_day"] >= 0).astype(int)
""",
    textbook="""\
# Market model with a shift on event days 0..+10: the shift is the daily abnormal return
formula = "ret ~ mkt_ret + post"
fit = smf.ols(formula, data=df).fit()
est = float(fit.params["post"])
""",
    robustness="""\
# Robustness: conventional and stock-clustered standard errors (same point estimate)
clustered = smf.ols(formula, data=df).fit(cov_type="cluster", cov_kwds={"groups": df["stock_id"]})
se_conv = fit.bse["post"]
se_cl = clustered.bse["post"]
print(f"Std. error, conventional: {se_conv:.6f}; clustered by stock: {se_cl:.6f}")
""",
    naive="""\
# Abnormal return = raw return minus the stock's average return over the window
df["abn"] = df["ret"] - df.groupby("stock_id")["ret"].transform("mean")
est = float(df.loc[df["event_day"] >= 0, "abn"].mean())
""",
    cumulative="""\
fit = smf.ols("ret ~ mkt_ret + post", data=df).fit()
n_event_days = df.loc[df["event_day"] >= 0, "event_day"].nunique()
# Cumulative abnormal return over the event window
est = float(n_event_days * fit.params["post"])
""",
    wrong_term="""\
fit = smf.ols("ret ~ mkt_ret + post", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["stock_id"]}
)
print(fit.summary().tables[1])
est = float(fit.params["mkt_ret"])
""",
    missing="""\
import econtools.metrics as mt

fit = mt.reg(df, "ret", ["mkt_ret", "post"], addcons=True, cluster="stock_id")
est = float(fit.beta["post"])
""",
    typo="""\
formula = "ret ~ mkt_return + post"
fit = smf.ols(formula, data=df).fit()
est = float(fit.params["post"])
""",
    descriptions=DESCRIPTIONS["event_study"],
    inference="""\
# Inference: clustered by stock, CR1 (G/(G-1) * (n-1)/(n-K), as fixest computes it)
se = float(clustered.bse["post"])
vcov_used = "CR1 clustered by stock_id"
""",
    naive_se_inference="""\
# Standard error from the regression table
se = float(fit.bse["post"])
vcov_used = "OLS standard errors (nonrobust)"
""",
)

IV = FamilyCode(
    setup="""\
import pandas as pd
import statsmodels.formula.api as smf
from linearmodels.iv import IV2SLS

df = pd.read_csv("<<DATA>>")
""",
    textbook="""\
# Two-stage least squares: x instrumented by z, controls exogenous
formula = "y ~ 1 + controls + [x ~ z]"
fit = IV2SLS.from_formula(formula, data=df).fit(cov_type="unadjusted")
est = float(fit.params["x"])
""",
    robustness="""\
# Robustness: first-stage strength and heteroskedasticity-robust standard errors
first = smf.ols("x ~ z + controls", data=df).fit()
print(f"First stage: t-statistic on z = {first.tvalues['z']:.2f}")
robust = IV2SLS.from_formula(formula, data=df).fit(cov_type="robust")
print(f"Std. error, robust: {robust.std_errors['x']:.4f}")
""",
    naive="""\
# Regress the outcome directly on the treatment, holding the control fixed
fit = smf.ols("y ~ x + controls", data=df).fit(cov_type="HC1")
print(fit.summary().tables[1])
est = float(fit.params["x"])
""",
    cumulative="""\
# The effect is a single response per unit of x; there is nothing to accumulate
fit = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
est = float(fit.params["x"])
""",
    wrong_term="""\
fit = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
first = smf.ols("x ~ z + controls", data=df).fit(cov_type="HC1")
print(first.summary().tables[1])
est = float(first.params["z"])
""",
    missing="""\
import econtools.metrics as mt

fit = mt.ivreg(df, "y", "x", "z", ["controls"], addcons=True, vce_type="robust")
est = float(fit.beta["x"])
""",
    typo="""\
formula = "y ~ 1 + control + [x ~ z]"
fit = IV2SLS.from_formula(formula, data=df).fit(cov_type="unadjusted")
est = float(fit.params["x"])
""",
    descriptions=DESCRIPTIONS["iv"],
    inference="""\
# Inference: heteroskedasticity-robust (HC1, debiased) standard error of the 2SLS estimate
hc1 = IV2SLS.from_formula(formula, data=df).fit(cov_type="robust", debiased=True)
se = float(hc1.std_errors["x"])
vcov_used = "HC1 (heteroskedasticity-robust, debiased)"
""",
    naive_se="""\
# Two-stage least squares by hand: the first stage, then OLS of y on the fitted x
first = smf.ols("x ~ z + controls", data=df).fit()
df["x_hat"] = first.fittedvalues
fit = smf.ols("y ~ x_hat + controls", data=df).fit()
est = float(fit.params["x_hat"])
""",
    naive_se_inference="""\
# Standard error from the second-stage regression table
se = float(fit.bse["x_hat"])
vcov_used = "OLS standard errors of the second stage (nonrobust)"
""",
)

RDD = FamilyCode(
    setup=_IMPORTS
    + """\

df = pd.read_csv("<<DATA>>")
cutoff = <<CUTOFF>>
""",
    textbook="""\
# Local linear fit within the bandwidth, separate slopes on each side of the cutoff
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
formula = "y ~ treated * rc"
fit = smf.ols(formula, data=near).fit()
est = float(fit.params["treated"])
""",
    robustness="""\
# Robustness: conventional and HC3 standard errors (same point estimate)
hc3 = smf.ols(formula, data=near).fit(cov_type="HC3")
print(f"Std. error, conventional: {fit.bse['treated']:.4f}; HC3: {hc3.bse['treated']:.4f}")
""",
    naive="""\
# Compare mean outcomes of treated and untreated observations
est = float(df.loc[df["treated"] == 1, "y"].mean() - df.loc[df["treated"] == 0, "y"].mean())
""",
    cumulative="""\
# A jump at the cutoff is a one-off level shift; there is nothing to accumulate
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
fit = smf.ols("y ~ treated * rc", data=near).fit(cov_type="HC3")
est = float(fit.params["treated"])
""",
    wrong_term="""\
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
fit = smf.ols("y ~ treated * rc", data=near).fit(cov_type="HC3")
print(fit.summary().tables[1])
est = float(fit.params["rc"])
""",
    missing="""\
from rdd import rdd

model = rdd.rdd(df, "running_var", "y", cut=cutoff)
est = float(model.fit().params["TREATED"])
""",
    typo="""\
near = df[df["near_cutof"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
formula = "y ~ treated * rc"
fit = smf.ols(formula, data=near).fit()
est = float(fit.params["treated"])
""",
    descriptions=DESCRIPTIONS["rdd"],
    inference="""\
# Inference: heteroskedasticity-robust (HC1) standard error of the jump
se = float(smf.ols(formula, data=near).fit(cov_type="HC1").bse["treated"])
vcov_used = "HC1 (heteroskedasticity-robust)"
""",
    naive_se_inference="""\
# Standard error of the jump: the two sides of the window as independent samples
above = near.loc[near["treated"] == 1, "y"]
below = near.loc[near["treated"] == 0, "y"]
se = float((above.var() / len(above) + below.var() / len(below)) ** 0.5)
vcov_used = "two-sample standard error of the difference across the cutoff"
""",
)

PIECES: dict[Family, FamilyCode] = {
    "did": DID,
    "event_study": EVENT_STUDY,
    "iv": IV,
    "rdd": RDD,
}

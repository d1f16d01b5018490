"""Reference-agent code for the modern designs, in Python and R.

``textbook`` computes what the scenario asks for by hand (group-time effects against
never-adopting units; the jump in the outcome over the jump in take-up; non-negative weights
summing to one that track the treated unit before adoption), with only packages that ship with
the execution environment. ``naive`` runs the textbook regression, which is wrong here: two-way
fixed effects, the sharp jump at the cutoff, the plain average of the untreated units.
``cumulative`` behaves like ``textbook`` (these targets are averages already); ``wrong-term``
reports a neighbouring number (the first cohort's first effect, the jump in take-up, the
treated unit's before-after change).
"""

from __future__ import annotations

from typing import Final

from causalverify.reference._code import FamilyCode

DESCRIPTIONS: Final[dict[str, dict[str, str]]] = {
    "staggered_did": {
        "textbook": "Average effect over all adopting unit-periods (group-time effects, "
        "never-adopting units as comparison):",
        "naive": "Two-way fixed-effects estimate of the effect of the policy:",
        "cumulative": "Average effect over all adopting unit-periods:",
        "wrong-term": "Effect in the first adoption period of the earliest adopters:",
    },
    "fuzzy_rdd": {
        "textbook": "Effect of taking part (jump in the outcome over the jump in take-up):",
        "naive": "Estimated jump in the outcome at the cutoff:",
        "cumulative": "Effect of taking part at the cutoff:",
        "wrong-term": "Estimated jump in take-up at the cutoff:",
    },
    "synthetic_control": {
        "textbook": "Average post-adoption gap between the unit and its weighted comparison:",
        "naive": "Average post-adoption gap between the unit and the average of the others:",
        "cumulative": "Average post-adoption gap between the unit and its weighted comparison:",
        "wrong-term": "Change in the adopting unit's outcome, after minus before adoption:",
    },
}

# -- Python --------------------------------------------------------------------------------------

_PY_STAGGERED_EST = """\
# Group-time effects: each adoption cohort against the never-adopting units, relative to the
# period just before the cohort adopted; averaged over adopting unit-periods (cohort sizes)
wide = df.pivot(index="unit_id", columns="period", values="y")
first = df.groupby("unit_id")["first_treat"].first()
never = first == 0
cells, sizes = [], []
for g in sorted(first[first > 0].unique()):
    members = first == g
    for t in wide.columns:
        if t < g:
            continue
        change = wide[t] - wide[g - 1]
        cells.append(change[members].mean() - change[never].mean())
        sizes.append(int(members.sum()))
est = float(np.average(cells, weights=sizes))
"""

PY_STAGGERED = FamilyCode(
    setup="""\
import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("<<DATA>>")
""",
    textbook=_PY_STAGGERED_EST,
    robustness="""\
print(f"Cohorts: {int((first > 0).sum())} adopting units, {int(never.sum())} never adopting; "
      f"{len(cells)} group-time cells")
""",
    naive="""\
# Two-way fixed effects on the adoption indicator
fit = smf.ols("y ~ treated + C(unit_id) + C(period)", data=df).fit()
est = float(fit.params["treated"])
""",
    cumulative=_PY_STAGGERED_EST,
    wrong_term=_PY_STAGGERED_EST.replace(
        "est = float(np.average(cells, weights=sizes))", "est = float(cells[0])"
    ),
    missing="""\
from csdid.att_gt import ATTgt

att = ATTgt(yname="y", gname="first_treat", idname="unit_id", tname="period", data=df).fit()
est = float(att.aggte(typec="simple").atte["overall_att"])
""",
    typo=_PY_STAGGERED_EST.replace('["first_treat"]', '["first_treated"]'),
    descriptions=DESCRIPTIONS["staggered_did"],
)

_PY_FUZZY_EST = """\
# Local linear with separate slopes inside the window; taking part instrumented by the offer
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
near["rc_offer"] = near["rc"] * near["eligible"]
near["const"] = 1.0
fit = IV2SLS(near["y"], near[["const", "rc", "rc_offer"]], near["took_up"], near["eligible"]).fit(
    cov_type="robust"
)
est = float(fit.params["took_up"])
"""

PY_FUZZY = FamilyCode(
    setup="""\
import pandas as pd
import statsmodels.formula.api as smf
from linearmodels.iv import IV2SLS

df = pd.read_csv("<<DATA>>")
cutoff = <<CUTOFF>>
""",
    textbook=_PY_FUZZY_EST,
    robustness="""\
first = smf.ols("took_up ~ eligible * rc", data=near).fit(cov_type="HC1")
print(f"Take-up rises by {first.params['eligible']:.3f} at the cutoff (t = {first.tvalues['eligible']:.1f})")
""",
    naive="""\
# Jump in the outcome at the cutoff, separate slopes on each side
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
fit = smf.ols("y ~ eligible * rc", data=near).fit(cov_type="HC3")
est = float(fit.params["eligible"])
""",
    cumulative=_PY_FUZZY_EST,
    wrong_term="""\
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
first = smf.ols("took_up ~ eligible * rc", data=near).fit(cov_type="HC3")
print(first.summary().tables[1])
est = float(first.params["eligible"])
""",
    missing="""\
from rdd import rdd

model = rdd.rdd(df, "running_var", "y", cut=cutoff)
est = float(model.fit().params["TREATED"])
""",
    typo=_PY_FUZZY_EST.replace('near["took_up"]', 'near["tookup"]'),
    descriptions=DESCRIPTIONS["fuzzy_rdd"],
)

_PY_SYNTH_EST = """\
# Non-negative weights summing to one that track the adopting unit before adoption
wide = df.pivot(index="period", columns="unit_id", values="y")
unit = df.loc[df["treated_unit"] == 1, "unit_id"].iloc[0]
after = df.groupby("period")["post"].first() == 1
target, others = wide[unit], wide.drop(columns=unit)
x0, y0 = others[~after].to_numpy(), target[~after].to_numpy()
k = x0.shape[1]
res = minimize(
    lambda w: float(((y0 - x0 @ w) ** 2).sum()),
    np.full(k, 1.0 / k),
    jac=lambda w: -2.0 * x0.T @ (y0 - x0 @ w),
    method="SLSQP",
    bounds=[(0.0, 1.0)] * k,
    constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0}],
    options={"ftol": 1e-14, "maxiter": 2000},
)
weights = res.x
gap = target[after].to_numpy() - others[after].to_numpy() @ weights
est = float(gap.mean())
"""

PY_SYNTH = FamilyCode(
    setup="""\
import numpy as np
import pandas as pd
from scipy.optimize import minimize

df = pd.read_csv("<<DATA>>")
""",
    textbook=_PY_SYNTH_EST,
    robustness="""\
pre_gap = y0 - x0 @ weights
print(f"Pre-adoption fit: root mean squared gap {np.sqrt((pre_gap ** 2).mean()):.4f}; "
      f"{int((weights > 1e-3).sum())} units carry weight")
""",
    naive="""\
# Compare the adopting unit with the average of all other units after adoption
wide = df.pivot(index="period", columns="unit_id", values="y")
unit = df.loc[df["treated_unit"] == 1, "unit_id"].iloc[0]
after = df.groupby("period")["post"].first() == 1
gap = wide.loc[after, unit] - wide.loc[after].drop(columns=unit).mean(axis=1)
est = float(gap.mean())
""",
    cumulative=_PY_SYNTH_EST,
    wrong_term="""\
unit_rows = df[df["treated_unit"] == 1]
est = float(unit_rows.loc[unit_rows["post"] == 1, "y"].mean() - unit_rows.loc[unit_rows["post"] == 0, "y"].mean())
""",
    missing="""\
import SparseSC

fit = SparseSC.fit(features=None, targets=None, treated_units=[0])
est = float(fit.att)
""",
    typo=_PY_SYNTH_EST.replace('df["treated_unit"]', 'df["treated_units"]'),
    descriptions=DESCRIPTIONS["synthetic_control"],
)

# -- R -------------------------------------------------------------------------------------------

_R_STAGGERED_EST = """\
# Group-time effects: each adoption cohort against the never-adopting units, relative to the
# period just before the cohort adopted; averaged over adopting unit-periods (cohort sizes)
y <- tapply(df$y, list(df$unit_id, df$period), mean)
first <- tapply(df$first_treat, df$unit_id, function(v) v[1])
periods <- as.numeric(colnames(y))
never <- first == 0
cells <- c()
sizes <- c()
for (g in sort(unique(first[first > 0]))) {
  members <- first == g
  base <- y[, periods == g - 1]
  for (t in periods[periods >= g]) {
    change <- y[, periods == t] - base
    cells <- c(cells, mean(change[members]) - mean(change[never]))
    sizes <- c(sizes, sum(members))
  }
}
est <- sum(cells * sizes) / sum(sizes)
"""

R_STAGGERED = FamilyCode(
    setup="""\
df <- read.csv("<<DATA>>")
""",
    textbook=_R_STAGGERED_EST,
    robustness="""\
cat(sprintf("Cohorts: %d adopting units, %d never adopting; %d group-time cells\\n",
            sum(first > 0), sum(never), length(cells)))
""",
    naive="""\
# Two-way fixed effects on the adoption indicator
fit <- lm(y ~ treated + factor(unit_id) + factor(period), data = df)
est <- unname(coef(fit)["treated"])
""",
    cumulative=_R_STAGGERED_EST,
    wrong_term=_R_STAGGERED_EST.replace(
        "est <- sum(cells * sizes) / sum(sizes)", "est <- cells[1]"
    ),
    missing="""\
library(did)
att <- att_gt(yname = "y", gname = "first_treat", idname = "unit_id", tname = "period", data = df)
est <- aggte(att, type = "simple")$overall.att
""",
    typo=_R_STAGGERED_EST.replace("df$first_treat", "df$first_treated"),
    descriptions=DESCRIPTIONS["staggered_did"],
)

_R_FUZZY_EST = """\
# Local linear with separate slopes inside the window; taking part instrumented by the offer
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- ivreg(y ~ took_up + rc + rc:eligible | eligible + rc + rc:eligible, data = near)
est <- unname(coef(fit)["took_up"])
"""

R_FUZZY = FamilyCode(
    setup="""\
suppressPackageStartupMessages(library(AER))
df <- read.csv("<<DATA>>")
cutoff <- <<CUTOFF>>
""",
    textbook=_R_FUZZY_EST,
    robustness="""\
first <- lm(took_up ~ eligible * rc, data = near)
cat(sprintf("Take-up rises by %.3f at the cutoff\\n", coef(first)[["eligible"]]))
""",
    naive="""\
# Jump in the outcome at the cutoff, separate slopes on each side
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- lm(y ~ eligible * rc, data = near)
est <- unname(coef(fit)["eligible"])
""",
    cumulative=_R_FUZZY_EST,
    wrong_term="""\
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
first <- lm(took_up ~ eligible * rc, data = near)
print(summary(first)$coefficients)
est <- unname(coef(first)["eligible"])
""",
    missing="""\
library(rdrobust)
fit <- rdrobust(df$y, df$running_var, c = cutoff, fuzzy = df$took_up)
est <- fit$coef[1]
""",
    typo=_R_FUZZY_EST.replace("took_up + rc", "tookup + rc"),
    descriptions=DESCRIPTIONS["fuzzy_rdd"],
)

_R_SYNTH_EST = """\
# Non-negative weights summing to one that track the adopting unit before adoption
# (least squares on the pre-adoption periods, projected gradient onto the simplex)
y <- tapply(df$y, list(df$period, df$unit_id), mean)
unit <- as.character(df$unit_id[df$treated_unit == 1][1])
after <- tapply(df$post, df$period, function(v) v[1]) == 1
target <- y[, unit]
others <- y[, colnames(y) != unit, drop = FALSE]
x0 <- others[!after, , drop = FALSE]
y0 <- target[!after]
project <- function(v) {
  u <- sort(v, decreasing = TRUE)
  css <- cumsum(u)
  k <- max(which(u - (css - 1) / seq_along(u) > 0))
  pmax(v - (css[k] - 1) / k, 0)
}
step <- 1 / max(eigen(crossprod(x0), only.values = TRUE)$values)
weights <- rep(1 / ncol(x0), ncol(x0))
for (i in 1:20000) {
  weights <- project(weights - step * drop(crossprod(x0, x0 %*% weights - y0)))
}
gap <- target[after] - drop(others[after, , drop = FALSE] %*% weights)
est <- mean(gap)
"""

R_SYNTH = FamilyCode(
    setup="""\
df <- read.csv("<<DATA>>")
""",
    textbook=_R_SYNTH_EST,
    robustness="""\
pre_gap <- y0 - drop(x0 %*% weights)
cat(sprintf("Pre-adoption fit: root mean squared gap %.4f; %d units carry weight\\n",
            sqrt(mean(pre_gap^2)), sum(weights > 1e-3)))
""",
    naive="""\
# Compare the adopting unit with the average of all other units after adoption
y <- tapply(df$y, list(df$period, df$unit_id), mean)
unit <- as.character(df$unit_id[df$treated_unit == 1][1])
after <- tapply(df$post, df$period, function(v) v[1]) == 1
gap <- y[after, unit] - rowMeans(y[after, colnames(y) != unit, drop = FALSE])
est <- mean(gap)
""",
    cumulative=_R_SYNTH_EST,
    wrong_term="""\
unit_rows <- subset(df, treated_unit == 1)
est <- mean(unit_rows$y[unit_rows$post == 1]) - mean(unit_rows$y[unit_rows$post == 0])
""",
    missing="""\
library(Synth)
fit <- synth(data.prep.obj = dataprep(foo = df, dependent = "y", unit.variable = "unit_id",
             time.variable = "period", treatment.identifier = 1))
est <- mean(fit$solution.w)
""",
    typo=_R_SYNTH_EST.replace("df$treated_unit == 1", "df$treated_units == 1"),
    descriptions=DESCRIPTIONS["synthetic_control"],
)

PYTHON_PIECES: Final = {
    "staggered_did": PY_STAGGERED,
    "fuzzy_rdd": PY_FUZZY,
    "synthetic_control": PY_SYNTH,
}
R_PIECES: Final = {
    "staggered_did": R_STAGGERED,
    "fuzzy_rdd": R_FUZZY,
    "synthetic_control": R_SYNTH,
}

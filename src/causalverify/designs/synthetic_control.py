"""Synthetic control: one treated unit that follows a convex combination of a few other units,
20 to 40 untreated units, 20 to 30 pre-periods and 5 to 10 post-periods.

Everything the family is: its CSV layout, grid, generator, canonical estimator (simplex weights
matched on the pre-period; the mean post-period gap), naive answer (the gap to the plain donor
average), topics and text, and the extraction vocabulary of its effect term.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs._base import (
    Analysis,
    CodeHints,
    Design,
    DesignAnalyses,
    GridGroup,
    Params,
    ScenarioText,
    Stated,
    dictionary,
    pick_topic,
)
from causalverify.designs._code import AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import same
from causalverify.designs._numbers import rounded
from causalverify.designs._panel import simplex_weights, wide_panel
from causalverify.designs._topics import PanelTopic
from causalverify.errors import SuiteError

#: the published CSV layout (all of it is read by the canonical estimator)
COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "treated_unit", "post", "y")
REQUIRED_COLUMNS: Final[tuple[str, ...]] = COLUMNS
METHOD: Final[str] = (
    "simplex-constrained least squares of the treated unit's pre-period y "
    "on the donors' (exact active set); mean post-period gap"
)

# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="easy", difficulties=same("easy", 7), params=(("n_donors", 20), ("n_pre", 30), ("n_post", 10), ("sigma", 0.03)),
              betas=(0.30, -0.25, 0.35, -0.30, 0.25, 0.40, -0.35)),
    GridGroup(group="medium", difficulties=same("medium", 7), params=(("n_donors", 30), ("n_pre", 25), ("n_post", 8), ("sigma", 0.04)),
              betas=(0.25, -0.30, 0.30, -0.25, 0.35, -0.30, 0.25)),
    GridGroup(group="hard", difficulties=same("hard", 6), params=(("n_donors", 40), ("n_pre", 20), ("n_post", 5), ("sigma", 0.05)),
              betas=(0.30, -0.35, 0.25, -0.30, 0.35, -0.25)),
)
# fmt: on

_r = rounded


def generate_synth(
    *, n_donors: int, n_pre: int, n_post: int, sigma: float, beta: float,
    rng: np.random.Generator,
) -> pd.DataFrame:  # fmt: skip
    """Untreated units follow unit levels, unit trends and two common factors; the treated unit
    (``unit_id`` 1) is a convex combination of the three fastest-growing of them plus noise, plus
    ``beta`` after adoption.

    Draw order: levels ``N(0, 1)``, trends ``N(0.03, 0.03²)``, loadings ``N(0, 0.5²)`` (two per
    unit), factors ``N(0, 0.3²)`` (two per period), the weights ``Dirichlet(2, 2, 2)``, the noise
    of the untreated units ``N(0, sigma²)``, then the treated unit's noise.
    """
    t = n_pre + n_post
    periods = np.arange(1, t + 1)
    levels = rng.normal(0.0, 1.0, n_donors)
    trends = rng.normal(0.03, 0.03, n_donors)
    loadings = rng.normal(0.0, 0.5, (n_donors, 2))
    factors = rng.normal(0.0, 0.3, (t, 2))
    weights = rng.dirichlet([2.0, 2.0, 2.0])
    donors = (
        levels[:, None]
        + trends[:, None] * periods[None, :]
        + loadings @ factors.T
        + rng.normal(0.0, sigma, (n_donors, t))
    )
    chosen = np.argsort(-trends)[:3]
    treated = weights @ donors[chosen] + rng.normal(0.0, sigma, t) + beta * (periods > n_pre)
    values = np.vstack([treated, donors])
    n_units = n_donors + 1
    return pd.DataFrame(
        {
            "unit_id": np.repeat(np.arange(1, n_units + 1), t),
            "period": np.tile(periods, n_units),
            "treated_unit": np.repeat((np.arange(n_units) == 0).astype(np.int64), t),
            "post": np.tile((periods > n_pre).astype(np.int64), n_units),
            "y": _r(values.ravel(), 4),
        }
    )


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_synth(
        n_donors=int(params["n_donors"]),
        n_pre=int(params["n_pre"]),
        n_post=int(params["n_post"]),
        sigma=float(params["sigma"]),
        beta=beta,
        rng=rng,
    )


def synth_arrays(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    wide = wide_panel(data)
    treated_flag = data.groupby("unit_id")["treated_unit"].first().reindex(wide.index)
    post_flag = data.groupby("period")["post"].first().reindex(wide.columns).to_numpy() == 1
    treated = treated_flag.to_numpy() == 1
    if treated.sum() != 1:
        raise SuiteError(f"expected exactly one treated unit, found {int(treated.sum())}")
    if post_flag.all() or not post_flag.any():
        raise SuiteError("synthetic control needs pre- and post-treatment periods")
    values = wide.to_numpy(dtype=float)
    target = values[treated][0]
    donors = values[~treated]
    return target[~post_flag], donors[:, ~post_flag].T, target[post_flag], donors[:, post_flag].T


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """The mean post-period gap between the treated unit and its synthetic control.

    Donor weights, non-negative and summing to one, minimise the squared pre-period gap in ``y``
    between the treated unit and the weighted donors (an exact active-set solution). SE: the
    standard deviation of the pre-period gaps over the square root of the number of post periods
    (a rough scale, not a test).
    """
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    w = simplex_weights(pre_x, pre_y)
    gaps_pre = pre_y - pre_x @ w
    gaps_post = post_y - post_x @ w
    se = float(np.std(gaps_pre, ddof=1) / math.sqrt(len(gaps_post)))
    return finished(
        "synthetic_control",
        float(gaps_post.mean()),
        se,
        len(data),
        method=METHOD,
        packages=("numpy", "pandas"),
    )


def donor_average(data: pd.DataFrame) -> float:
    """The mean post-period gap to the plain donor average (the naive comparison)."""
    _, _, post_y, post_x = synth_arrays(data)
    return float((post_y - post_x.mean(axis=1)).mean())


# fmt: off
TOPICS: Final[tuple[PanelTopic, ...]] = (
    PanelTopic("A regional tobacco tax and cigarette sales", "region", "regions", "year", "a large tobacco tax increase", "per-capita cigarette sales"),
    PanelTopic("A city congestion charge and retail footfall", "city", "cities", "month", "a congestion charge", "retail footfall"),
    PanelTopic("A country's currency union entry and exports", "country", "countries", "quarter", "joining a currency union", "exports"),
    PanelTopic("A state's right-to-work law and wages", "state", "states", "year", "a right-to-work law", "average wages"),
    PanelTopic("A port expansion and regional output", "region", "regions", "year", "a major port expansion", "regional output"),
)
# fmt: on


def _text(topic: PanelTopic, params: Mapping[str, float | int]) -> ScenarioText:
    donors, pre, post = int(params["n_donors"]), int(params["n_pre"]), int(params["n_post"])
    t = pre + post
    columns = {
        "unit_id": f"{topic.unit} identifier, 1 to {donors + 1}",
        "period": f"{topic.period} index, 1 to {t}",
        "treated_unit": f"1 for the {topic.unit} that adopted {topic.policy} (unit_id 1), "
        "0 for the others",
        "post": f"1 in {topic.period}s {pre + 1} to {t} (after adoption), 0 in {topic.period}s "
        f"1 to {pre}",
        "y": f"{topic.outcome} (an index)",
    }
    description = (
        f"A balanced panel of {donors + 1} {topic.units} over {t} {topic.period}s. One "
        f"{topic.unit} (unit_id 1) adopted {topic.policy} after {topic.period} {pre}; none of "
        f"the other {donors} {topic.units} ever did. There are {pre} {topic.period}s before "
        f"adoption and {post} after.\n\n" + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"How did {topic.policy} change {topic.outcome} in the {topic.unit} that adopted it?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The average effect of {topic.policy} on the adopting {topic.unit}'s `y` over the "
            f"{post} {topic.period}s after adoption, in the units of `y`."
        ),
        facts={"n_units": donors + 1, "n_pre": pre, "n_post": post, "treated_unit_id": 1},
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th synthetic-control scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_EFFECT: Final = re.compile(r"^att$|effect|gap|^post$|treat\w*[_.:*× ]+post|^treat(ed|ment)?$")


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the post-period gap of the treated unit."""
    return 2 if _EFFECT.search(t) else None


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a synthetic_control scenario: its text states what its data hold."""
    out: list[str] = []
    treated = d.loc[d["treated_unit"] == 1, "unit_id"].unique()
    if list(treated) != [s.facts.get("treated_unit_id")]:
        out.append(f"{s.id}: the treated unit in the data is {list(treated)}, not as stated")
    pre = int(str(s.facts.get("n_pre")))
    expected = (d["period"] > pre).astype(int).to_numpy()
    if not np.array_equal(expected, d["post"].to_numpy()):
        out.append(f"{s.id}: post is not 1 exactly after period {pre}")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Average post-adoption gap between the unit and its weighted comparison:",
    "naive": "Average post-adoption gap between the unit and the average of the others:",
    "cumulative": "Average post-adoption gap between the unit and its weighted comparison:",
    "wrong-term": "Change in the adopting unit's outcome, after minus before adoption:",
}


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


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
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
    descriptions=_DESCRIPTIONS,
)


_R_SYNTH_EST = """\
# Non-negative weights summing to one that track the adopting unit before adoption
# (least squares on the pre-adoption periods over the simplex, solved exactly by an active set)
y <- tapply(df$y, list(df$period, df$unit_id), mean)
unit <- as.character(df$unit_id[df$treated_unit == 1][1])
after <- tapply(df$post, df$period, function(v) v[1]) == 1
target <- y[, unit]
others <- y[, colnames(y) != unit, drop = FALSE]
x0 <- others[!after, , drop = FALSE]
y0 <- target[!after]
simplex_weights <- function(x, y, tol = 1e-12) {
  n <- ncol(x)
  gram <- crossprod(x)
  lin <- drop(crossprod(x, y))
  w <- numeric(n)
  support <- which.min(colSums((x - y)^2))  # start from the best single unit
  w[support] <- 1
  for (iter in seq_len(50 * n)) {
    # least squares on the support with the weights summing to one
    k <- length(support)
    kkt <- rbind(cbind(gram[support, support, drop = FALSE], 1), c(rep(1, k), 0))
    goal <- numeric(n)
    goal[support] <- qr.solve(kkt, c(lin[support], 1))[seq_len(k)]
    if (all(goal[support] >= -tol)) {
      w <- pmax(goal, 0) / sum(pmax(goal, 0))
      grad <- drop(gram %*% w) - lin
      reduced <- grad - sum(w * grad)
      outside <- setdiff(seq_len(n), support)
      # done when no unit outside the support can lower the fit
      if (!length(outside) || min(reduced[outside]) >= -tol * max(1, abs(gram))) return(w)
      support <- c(support, outside[which.min(reduced[outside])])
    } else {
      # walk towards the support's solution until the first weight reaches zero
      d <- goal - w
      leaving <- support[d[support] < 0 & goal[support] < 0]
      ratio <- w[leaving] / -d[leaving]
      w <- w + min(ratio) * d
      w[leaving[which.min(ratio)]] <- 0
      support <- support[w[support] > tol]
    }
  }
  stop("the synthetic-control weights did not converge")
}
weights <- simplex_weights(x0, y0)
gap <- target[after] - drop(others[after, , drop = FALSE] %*% weights)
est <- mean(gap)
"""


R_CODE: Final[FamilyCode] = FamilyCode(
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
    descriptions=_DESCRIPTIONS,
)


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "Only one unit adopted the policy, and no single other unit, nor their plain average, "
        "tracks it before adoption. I build a weighted combination of the other units, with "
        "non-negative weights summing to one chosen to match the adopting unit's outcome in "
        "every period before adoption; after adoption, the gap between the unit and this "
        "weighted comparison is the effect, averaged over the post-adoption periods.\n\n"
        "Key assumptions: the weighted comparison would have kept tracking the unit without "
        "the policy, and the other units were not affected by it."
    ),
    naive_identification=(
        "The other units never adopted the policy, so their average is the comparison: the "
        "effect is the gap between the adopting unit and that average after adoption."
    ),
    expected=(
        "I expect the weighted comparison to track the unit closely before adoption and the "
        "gap to open after it."
    ),
    plan=(
        "I would weight the other units to match the adopting unit before adoption and "
        "average the gap after adoption."
    ),
)

# -- the analyses a draw must separate (scenarios.acceptance) --------------------------------------


def predictor_synth(data: pd.DataFrame, *, lags: int = 3) -> float:
    """Weights matched on predictors rather than on every pre-period: the pre-period mean of
    ``y`` and its last ``lags`` pre-period values (each predictor scaled by its spread across
    units, equal importance); the effect is the mean post-period gap."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    rows = np.vstack([pre_x.mean(axis=0), pre_x[-lags:]])
    target = np.concatenate([[pre_y.mean()], pre_y[-lags:]])
    scale = np.vstack([rows.T, target]).std(axis=0)
    scale[scale == 0] = 1.0
    w = simplex_weights(rows / scale[:, None], target / scale)
    return float((post_y - post_x @ w).mean())


def synthetic_did(data: pd.DataFrame) -> float:
    """Synthetic difference-in-differences (Arkhangelsky, Athey, Hirshberg, Imbens and Wager):
    unit weights on the simplex that track the treated unit's pre-period path up to a constant,
    with the ridge penalty ``zeta² T_pre`` (``zeta = T_post^(1/4)`` times the standard deviation
    of the donors' pre-period first differences); time weights on the simplex that make the
    donors' weighted pre-period levels track their post-period means up to a constant (penalty
    ``(1e-6 sigma)² N_donors``); the effect is the weighted difference-in-differences."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    t_pre, n_donors = pre_x.shape
    t_post = post_x.shape[0]
    sigma = float(np.diff(pre_x, axis=0).std(ddof=1))
    zeta = t_post**0.25 * sigma
    # unit weights: intercept by centring over periods, ridge by stacking a scaled identity
    xc = pre_x - pre_x.mean(axis=0)
    yc = pre_y - pre_y.mean()
    omega = simplex_weights(
        np.vstack([xc, zeta * math.sqrt(t_pre) * np.eye(n_donors)]),
        np.concatenate([yc, np.zeros(n_donors)]),
    )
    # time weights over pre-periods: donors' pre levels to their post means, centred by donor
    a = pre_x.T - pre_x.T.mean(axis=0)
    b = post_x.mean(axis=0) - post_x.mean(axis=0).mean()
    eta = 1e-6 * sigma * math.sqrt(n_donors)
    lam = simplex_weights(np.vstack([a, eta * np.eye(t_pre)]), np.concatenate([b, np.zeros(t_pre)]))
    treated_change = post_y.mean() - lam @ pre_y
    donor_change = post_x.mean(axis=0) - lam @ pre_x
    return float(treated_change - omega @ donor_change)


def donor_did(data: pd.DataFrame) -> float:
    """The treated unit's change from the pre- to the post-period mean minus the plain donor
    average's change."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    return float((post_y.mean() - pre_y.mean()) - (post_x.mean() - pre_x.mean()))


# fmt: off
ANALYSES: Final[DesignAnalyses] = DesignAnalyses(
    defensible=(
        Analysis("predictors_mean_3lags", "weights matched on the pre-period mean and the "
                 "last three pre-period outcomes", predictor_synth),
        Analysis("synthetic_did", "synthetic difference-in-differences", synthetic_did),
    ),
    mistakes=(
        Analysis("donor_average", "gap to the plain donor average", donor_average),
        Analysis("donor_did", "before-after change against the plain donor average",
                 donor_did),
    ),
)
# fmt: on


DESIGN: Final[Design] = Design(
    family="synthetic_control",
    columns=COLUMNS,
    required_columns=REQUIRED_COLUMNS,
    groups=GROUPS,
    generate=_generate,
    canonical=canonical,
    naive_answer=donor_average,
    topics=TOPICS,
    render_text=render_text,
    check=check,
    r_code=R_CODE,
    python_code=PYTHON_CODE,
    prose=PROSE,
    analyses=ANALYSES,
    inference=None,
    design_packages=frozenset({"pysyncon"}),
    term_score=term_score,
    spec_bad=re.compile(r"pre[- ]?period|placebo|\bfit\b|\brmspe\b"),
    effect_alias=None,
    instrumented=False,
    discontinuity=None,
    label_good=re.compile(r"\batt\b|post[- ]?period|average (post )?gap|effect"),
    label_bad=re.compile(r"pre[- ]?period|placebo|rmspe|\bweight"),
    scales=None,
    judge_target=(
        "the synthetic-control effect: the average post-period gap between the treated unit "
        "and its synthetic control (donors weighted to match its pre-period outcome), not the "
        "gap to the plain average of the other units"
    ),
)

"""Difference-in-differences: a balanced panel, half of the units treated from period T/2 + 1 on.

Everything the family is: its CSV layout, grid, generator, canonical estimator (two-way fixed
effects, profile ``paper``), topics and text, and the extraction vocabulary of its effect term.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs._base import (
    CodeHints,
    Design,
    GridGroup,
    Params,
    ScenarioText,
    Stated,
    dictionary,
    pick_topic,
    stated_in,
)
from causalverify.designs._code import PY_IMPORTS, R_SE_HELPERS, AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import split
from causalverify.designs._inference import SeVariants
from causalverify.designs._numbers import rounded
from causalverify.errors import SuiteError

#: the published CSV layout
COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "treated", "post", "treat_x_post", "y")
#: the columns the canonical estimator reads
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "treat_x_post", "y")
METHOD: Final[str] = (
    "TWFE OLS y ~ treat_x_post | unit_id + period (within transformation); iid SE, df n-2"
)
# Balanced panels demean exactly in one sweep; the tight tolerance keeps unbalanced panels in
# agreement with the dummy-variable solution well inside 1e-10 too.
DEMEAN_TOL: Final[float] = 1e-12


def _params(n_units: int, n_periods: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n_units", n_units), ("n_periods", n_periods), ("sigma", sigma))


# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="base", difficulties=split(3, 4, 3), params=_params(200, 8, 0.5),
              betas=(-0.30, -0.15, 0.25, 0.20, 0.18, 0.22, -0.12, -0.25, 0.28, 0.35)),
    GridGroup(group="easy", difficulties=split(7, 0, 0), params=_params(200, 8, 0.4),
              betas=(-0.30, 0.25, -0.20, 0.18, -0.35, 0.22, -0.15)),
    GridGroup(group="medium", difficulties=split(0, 7, 0), params=_params(150, 8, 0.5),
              betas=(-0.20, 0.15, 0.30, -0.10, 0.20, -0.25, 0.12)),
    GridGroup(group="hard", difficulties=split(0, 0, 6), params=_params(100, 10, 0.7),
              betas=(-0.12, 0.08, -0.18, 0.10, -0.15, 0.25)),
)
# fmt: on

_r = rounded


def did_treat_start(n_periods: int) -> int:
    """First treated period of a panel with ``n_periods`` periods (``T/2 + 1``: 5 for 8, 6 for 10)."""
    return n_periods // 2 + 1


def generate_did(
    *, n_units: int, n_periods: int, sigma: float, beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Balanced panel; the first half of units is treated from period ``T/2 + 1`` on.

    Draw order: unit effects ``N(0, 0.3²)`` for units ``0..n-1``, then the idiosyncratic noise
    ``N(0, sigma²)`` in row order (period by period, units within a period).

    Returns
    -------
    pandas.DataFrame
        Columns ``unit_id, period, treated, post, treat_x_post, y``; rows ordered by period,
        then unit.
    """
    unit_effect = rng.normal(0.0, 0.3, n_units)
    noise = rng.normal(0.0, sigma, n_units * n_periods)
    unit_id = np.tile(np.arange(n_units, dtype=np.int64), n_periods)
    period = np.repeat(np.arange(1, n_periods + 1, dtype=np.int64), n_units)
    treated = (unit_id < n_units // 2).astype(np.int64)
    post = (period >= did_treat_start(n_periods)).astype(np.int64)
    treat_x_post = treated * post
    y = 0.5 * treated + 0.4 * post + beta * treat_x_post + unit_effect[unit_id] + noise
    return pd.DataFrame(
        {
            "unit_id": unit_id,
            "period": period,
            "treated": treated,
            "post": post,
            "treat_x_post": treat_x_post,
            "y": _r(y, 4),
        }
    )


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_did(
        n_units=int(params["n_units"]),
        n_periods=int(params["n_periods"]),
        sigma=float(params["sigma"]),
        beta=beta,
        rng=rng,
    )


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """Two-way fixed effects by the within transformation (pyfixest's demeaning).

    The SE is the homoskedastic SE of OLS on the two-way within-transformed data with an
    intercept, i.e. ``SSR / (n - 2)`` over the partialled-out variance of ``treat_x_post`` (the
    absorbed fixed effects are not counted in the residual degrees of freedom, as in the
    published release); it reproduces the published ``standard_error`` to its 6 decimals.

    Sums use :func:`math.fsum` (exactly rounded), so the result does not depend on memory
    alignment or SIMD width: the same data give bit-identical output in every process.
    """
    from pyfixest.core import demean

    n = len(data)
    yx = np.column_stack(
        [data["y"].to_numpy(dtype=float), data["treat_x_post"].to_numpy(dtype=float)]
    )
    codes = np.column_stack(
        [pd.factorize(data[col], sort=True)[0] for col in ("unit_id", "period")]
    ).astype(np.uint64)
    within, converged = demean(yx, codes, np.ones(n), tol=DEMEAN_TOL)
    if not converged:  # pragma: no cover - MAP converges on any finite panel
        raise SuiteError("the two-way demeaning did not converge")
    y_w, x_w = within[:, 0], within[:, 1]
    sxx = math.fsum(x_w * x_w)
    x_raw = yx[:, 1]
    if sxx <= 1e-12 * max(math.fsum((x_raw - x_raw.mean()) ** 2), 1.0):
        raise SuiteError("treat_x_post is collinear with the unit and period fixed effects")
    beta = math.fsum(x_w * y_w) / sxx
    resid = y_w - beta * x_w
    # The published within-transformed regression had an intercept, hence n - 2.
    se = math.sqrt(math.fsum(resid * resid) / (n - 2) / sxx)
    return finished("did", beta, se, n, method=METHOD, packages=("numpy", "pandas", "pyfixest"))


def se_variants(data: pd.DataFrame) -> dict[str, float]:
    """The canonical SE under each variance estimator (:mod:`causalverify.estimators._inference`)."""
    from pyfixest.core import demean

    n = len(data)
    yx = np.column_stack(
        [data["y"].to_numpy(dtype=float), data["treat_x_post"].to_numpy(dtype=float)]
    )
    units = data["unit_id"].to_numpy()
    codes = np.column_stack(
        [pd.factorize(data[col], sort=True)[0] for col in ("unit_id", "period")]
    ).astype(np.uint64)
    within, converged = demean(yx, codes, np.ones(n), tol=DEMEAN_TOL)
    if not converged:  # pragma: no cover - MAP converges on any finite panel
        raise SuiteError("the two-way demeaning did not converge")
    y, x = within[:, 0], within[:, 1]
    sxx = math.fsum(x * x)
    e = y - math.fsum(x * y) / sxx * x
    ssr = math.fsum(e * e)
    n_units = len(np.unique(units))
    n_periods = len(np.unique(data["period"].to_numpy()))
    rank = n_units + n_periods  # the effect, an intercept and (n_units-1) + (n_periods-1) dummies
    hc0 = math.fsum((x * e) ** 2) / sxx**2
    sums = pd.Series(x * e).groupby(pd.factorize(units, sort=True)[0]).sum().to_numpy()
    cr0 = math.fsum(sums * sums) / sxx**2
    g = n_units
    cluster = g / (g - 1) * (n - 1)
    return {
        # the unit effects are nested in the unit clusters: K counts the effect and the periods
        "cr1": math.sqrt(cr0 * cluster / (n - 1 - n_periods)),
        "cr1_dummies": math.sqrt(cr0 * cluster / (n - rank)),
        "hc1": math.sqrt(hc0 * n / (n - rank)),
        "classical": math.sqrt(ssr / (n - rank) / sxx),
        "classical_within": math.sqrt(ssr / (n - 2) / sxx),
    }


INFERENCE: Final[SeVariants] = SeVariants(compute=se_variants, reference="cr1")


@dataclass(frozen=True)
class DidTopic:
    """A policy adopted by half of a panel of units from one period on."""

    title: str
    unit: str
    units: str
    period: str
    policy: str
    adopted: str
    outcome: str


# fmt: off
TOPICS: Final[tuple[DidTopic, ...]] = (
    DidTopic("Minimum wage increases and teen employment", "county", "counties", "quarter", "a minimum wage increase", "raised the local minimum wage", "teen employment rate"),
    DidTopic("Universal free school meals and attendance", "school district", "school districts", "term", "universal free school meals", "introduced free meals for all pupils", "pupil attendance rate"),
    DidTopic("Broadband rollout and small-business formation", "municipality", "municipalities", "year", "fibre broadband availability", "received fibre broadband", "rate of new business registrations"),
    DidTopic("Paid family leave and maternal labour supply", "county", "counties", "year", "a paid family leave mandate", "introduced paid family leave", "employment rate of mothers of infants"),
    DidTopic("Soda taxes and sugary-drink purchases", "city", "cities", "quarter", "a sugar-sweetened beverage tax", "levied a tax on sugary drinks", "per-capita sugary-drink purchases"),
    DidTopic("Ride-hailing entry and drunk-driving crashes", "metropolitan area", "metropolitan areas", "quarter", "the entry of ride-hailing services", "saw ride-hailing services launch", "alcohol-related crash rate"),
    DidTopic("Medicaid expansion and uncompensated hospital care", "hospital market", "hospital markets", "year", "an expansion of public health insurance", "expanded public health insurance eligibility", "uncompensated care costs of hospitals"),
    DidTopic("Ban-the-box laws and callback rates", "city", "cities", "half-year", "a ban on criminal-history questions in job applications", "banned criminal-history questions on job applications", "callback rate of job applicants"),
    DidTopic("Congestion charging and retail footfall", "shopping district", "shopping districts", "month", "a congestion charge", "introduced a congestion charge", "retail footfall"),
    DidTopic("Rent control and residential mobility", "neighbourhood", "neighbourhoods", "year", "rent control", "adopted rent control", "tenant turnover rate"),
    DidTopic("Mobile-money access and household savings", "village", "villages", "season", "mobile-money agents", "gained a mobile-money agent", "household savings"),
    DidTopic("Later school start times and test scores", "school", "schools", "term", "a later school start time", "moved the school day to start later", "average maths test score"),
    DidTopic("Plastic bag fees and litter", "town", "towns", "quarter", "a plastic bag fee", "introduced a plastic bag fee", "measured litter density"),
    DidTopic("Right-to-carry laws and violent crime", "county", "counties", "year", "a right-to-carry firearms law", "enacted a right-to-carry law", "violent crime rate"),
    DidTopic("Electronic health records and hospital readmissions", "hospital", "hospitals", "quarter", "an electronic health record system", "switched to electronic health records", "30-day readmission rate"),
    DidTopic("Agricultural extension services and crop yields", "district", "districts", "season", "an agricultural extension programme", "started an agricultural extension programme", "maize yield per hectare"),
    DidTopic("Public transit expansion and commuting time", "suburb", "suburbs", "year", "a new light-rail line", "was connected to a new light-rail line", "average commuting time"),
    DidTopic("Occupational licensing reform and entry", "county", "counties", "year", "a relaxation of occupational licensing", "relaxed local licensing rules for hairdressers", "number of new licensed practitioners"),
)
# fmt: on


def _text(topic: DidTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n, t = int(params["n_units"]), int(params["n_periods"])
    half, start = n // 2, did_treat_start(t)
    columns = {
        "unit_id": f"{topic.unit} identifier, 0 to {n - 1}",
        "period": f"{topic.period} index, 1 to {t}",
        "treated": f"1 if the {topic.unit} {topic.adopted} (unit_id 0 to {half - 1}), 0 otherwise; "
        "constant over time",
        "post": f"1 in periods {start} to {t} for every {topic.unit}, 0 in periods 1 to {start - 1}",
        "treat_x_post": f"`treated` times `post`: 1 for the adopting {topic.units} from period "
        f"{start} on, 0 otherwise",
        "y": f"{topic.outcome} (standardised index)",
    }
    description = (
        f"A balanced panel of {n} {topic.units} observed in each of {t} {topic.period}s "
        f"({n * t} rows, one per {topic.unit} and {topic.period}). "
        f"Treated units: the {half} {topic.units} with `unit_id` below {half} {topic.adopted}; "
        f"the other {n - half} never did. The first treated period is period {start}: the policy "
        f"applies to the adopting {topic.units} from period {start} through period {t}.\n\n"
        + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"How did {topic.policy} change the {topic.outcome} in the {topic.units} that adopted "
            f"it, compared with what would have happened there without it?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The average effect of {topic.policy} on `y` ({topic.outcome}) for the adopting "
            f"{topic.units} in periods {start} to {t}, in the units of `y`."
        ),
        facts={
            "n_units": n,
            "n_periods": t,
            "treat_start": start,
            "treated_units": f"unit_id < {half}",
        },
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th DID scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_INTERACTION_SEP: Final = re.compile(r":|\*|×|\bx\b|_x_")


_DID_NAME: Final = re.compile(
    r"\bdid\b|^did|diff.?in.?diff|^d_?i_?d$|treat\w*[_.:*× ]+(x[_. ])?\w*(post|after)"
    r"|(post|after)\w*[_.:*× ]+(x[_. ])?\w*treat|^txp$|^tp$|treat_?post|post_?treat"
)


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the interaction of treatment and post-period."""
    if _DID_NAME.search(t):
        return 3
    if _INTERACTION_SEP.search(t):
        parts = [p for p in re.split(r":|\*|×|_x_", t) if p.strip()]
        treat = any("treat" in p for p in parts)
        if len(parts) == 2 and treat and any(re.search(r"post|after|policy", p) for p in parts):
            return 2
    return None


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a did scenario: its text states what its data hold."""
    out: list[str] = []
    n, t, start = (int(str(s.facts[k])) for k in ("n_units", "n_periods", "treat_start"))
    if d["unit_id"].nunique() != n or d["period"].nunique() != t or len(d) != n * t:
        out.append(f"{s.id}: data are not a balanced panel of {n} units x {t} periods")
    if d.groupby("unit_id")["period"].nunique().ne(t).any():
        out.append(f"{s.id}: some unit is not observed in every period")
    stated = stated_in(r"first treated period is period (\d+)", s.data_description)
    if stated is None or int(stated[0]) != start:
        out.append(f"{s.id}: text does not state the first treated period {start}")
    treated_post = d.loc[d["treat_x_post"] == 1, "period"]
    if treated_post.empty or int(treated_post.min()) != start:
        out.append(f"{s.id}: first treated period in the data is not {start}")
    if not (d["post"] == (d["period"] >= start).astype(int)).all():
        out.append(f"{s.id}: post does not switch on at period {start}")
    if not (d["treat_x_post"] == d["treated"] * d["post"]).all():
        out.append(f"{s.id}: treat_x_post is not treated x post")
    below = stated_in(r"with `unit_id` below (\d+)", s.data_description)
    if below is None or s.facts.get("treated_units") != f"unit_id < {below[0]}":
        out.append(f"{s.id}: text does not state which units are treated as in the facts")
    elif not (d["treated"] == (d["unit_id"] < int(below[0])).astype(int)).all():
        out.append(f"{s.id}: treated units in the data are not unit_id < {below[0]}")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Two-way fixed-effects estimate of the effect of the policy:",
    "naive": "Post-period difference in mean outcomes, treated minus comparison units:",
    "cumulative": "Cumulative effect over all post-policy periods:",
    "wrong-term": "Effect from the interacted model:",
}


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
    setup=PY_IMPORTS
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
    descriptions=_DESCRIPTIONS,
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


R_CODE: Final[FamilyCode] = FamilyCode(
    setup=R_SE_HELPERS
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
    descriptions=_DESCRIPTIONS,
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


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "Some units are exposed to the policy from a known period on and the others never are, "
        "and all units are observed before and after. I use a difference-in-differences design "
        "with two-way fixed effects: unit effects absorb permanent differences between units, "
        "period effects absorb shocks common to all units, and the coefficient on the "
        "treated-times-post indicator is the effect of the policy per period.\n\n"
        "Key assumptions: parallel trends (absent the policy, treated and comparison units would "
        "have evolved alike), no anticipation, and no spillovers between units."
    ),
    naive_identification=(
        "The policy applies to the treated units after it starts, so I compare average outcomes "
        "of treated and comparison units in the post-policy periods. The difference is the "
        "effect, provided both groups are otherwise similar."
    ),
    expected=(
        "I expect a modest effect per period, of the sign suggested by the research question, "
        "small relative to the spread of the outcome; the script prints the point estimate and "
        "its standard errors."
    ),
    plan=(
        "I would regress the outcome on the treated-times-post indicator with unit and period "
        "fixed effects, cluster standard errors by unit, and check pre-trends with leads of the "
        "treatment indicator."
    ),
)

DESIGN: Final[Design] = Design(
    family="did",
    columns=COLUMNS,
    required_columns=REQUIRED_COLUMNS,
    groups=GROUPS,
    generate=_generate,
    canonical=canonical,
    naive_answer=None,
    topics=TOPICS,
    render_text=render_text,
    check=check,
    r_code=R_CODE,
    python_code=PYTHON_CODE,
    prose=PROSE,
    analyses=None,
    inference=INFERENCE,
    design_packages=frozenset(),
    term_score=term_score,
    spec_bad=re.compile(r"pre[- ]?period|simple diff|no controls"),
    effect_alias=re.compile(r"treat\w*\W*\s*\*\s*\W*\w*\W*post|post\w*\W*\s*\*\s*\W*\w*treat"),
    instrumented=False,
    discontinuity=None,
    label_good=re.compile(
        r"\bdid\b|diff|interaction|twfe|two[- ]way|treat\w*\s*[x×:*]\s*post|within"
    ),
    label_bad=re.compile(
        r"coef\w* (on|for|of) (treated|post)\s*$|pre[- ]?period|simple diff|pooled"
    ),
    scales=None,
    judge_target=(
        "the difference-in-differences effect: the coefficient on the treated x post interaction"
    ),
)

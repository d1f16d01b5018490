"""Sharp regression discontinuity: units at or above a cutoff of a uniform running variable are
treated.

Everything the family is: its CSV layout, cutoff and band, grid, generator, canonical estimator
(local linear OLS inside the band, profile ``paper``), topics and text, and the extraction
vocabulary of its effect term.
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
from causalverify.designs._inference import SeVariants, sandwich
from causalverify.designs._numbers import cutoff_flags, rounded
from causalverify.errors import SuiteError

#: the published CSV layout (all of it is read by the canonical estimator)
COLUMNS: Final[tuple[str, ...]] = ("running_var", "treated", "y", "near_cutoff")
REQUIRED_COLUMNS: Final[tuple[str, ...]] = COLUMNS
#: the cutoff of the running variable and the half-width of the ``near_cutoff`` band
CUTOFF: Final[float] = 0.5
BANDWIDTH: Final[float] = 0.3
METHOD: Final[str] = f"OLS y ~ treated * (running_var - {CUTOFF}) on near_cutoff == 1; HC3 SE"


def _params(n: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n", n), ("sigma", sigma))


# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="base", difficulties=split(2, 2, 2), params=_params(600, 0.15),
              betas=(0.25, 0.25, 0.25, -0.25, 0.25, 0.25)),
    GridGroup(group="easy", difficulties=split(5, 0, 0), params=_params(600, 0.12),
              betas=(0.25, -0.20, 0.30, -0.15, 0.22)),
    GridGroup(group="medium", difficulties=split(0, 6, 0), params=_params(500, 0.15),
              betas=(-0.25, 0.18, -0.30, 0.20, -0.22, 0.28)),
    GridGroup(group="hard", difficulties=split(0, 0, 5), params=_params(400, 0.2),
              betas=(0.15, -0.18, 0.12, -0.25, 0.22)),
)
# fmt: on

_r = rounded


def rdd_flags(running_var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``treated`` and ``near_cutoff`` of 4-decimal running values, compared exactly.

    The comparison is done on integers (ten-thousandths), so a value printed as ``0.8`` is inside
    the band ``[0.2, 0.8]`` exactly as the scenario text says, free of binary rounding.
    """
    return cutoff_flags(running_var, CUTOFF, BANDWIDTH)


def generate_rdd(*, n: int, sigma: float, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    """Cross-section treated at and above the cutoff 0.5 of a uniform running variable.

    Draw order: ``running_var ~ U(0, 1)``, then noise ``N(0, sigma²)``. The running variable is
    rounded to 4 decimals before ``treated`` and ``near_cutoff`` are derived from it, so the flags
    agree with the printed values.

    Returns
    -------
    pandas.DataFrame
        Columns ``running_var, treated, y, near_cutoff``.
    """
    running_var = _r(rng.uniform(0.0, 1.0, n), 4)
    noise = rng.normal(0.0, sigma, n)
    treated, near = rdd_flags(running_var)
    y = 0.3 * running_var + beta * treated + noise
    return pd.DataFrame(
        {"running_var": running_var, "treated": treated, "y": _r(y, 4), "near_cutoff": near}
    )


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_rdd(n=int(params["n"]), sigma=float(params["sigma"]), beta=beta, rng=rng)


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """Local linear OLS inside the bandwidth (rows with ``near_cutoff == 1``); HC3 SE."""
    import statsmodels.api as sm

    keep = data["near_cutoff"].to_numpy(dtype=float) == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the RDD estimator has no data")
    y = data["y"].to_numpy(dtype=float)[keep]
    treated = data["treated"].to_numpy(dtype=float)[keep]
    centred = data["running_var"].to_numpy(dtype=float)[keep] - CUTOFF
    exog = np.column_stack([np.ones_like(y), treated, centred, centred * treated])
    fit = sm.OLS(y, exog).fit(cov_type="HC3")
    return finished(
        "rdd",
        float(fit.params[1]),
        float(fit.bse[1]),
        len(y),
        method=METHOD,
        packages=("numpy", "pandas", "statsmodels"),
    )


def se_variants(data: pd.DataFrame) -> dict[str, float]:
    """The canonical SE under each variance estimator (:mod:`causalverify.estimators._inference`)."""
    keep = data["near_cutoff"].to_numpy(dtype=float) == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the RDD estimator has no data")
    y = data["y"].to_numpy(dtype=float)[keep]
    treated = data["treated"].to_numpy(dtype=float)[keep]
    centred = data["running_var"].to_numpy(dtype=float)[keep] - CUTOFF
    x = np.column_stack([np.ones_like(y), treated, centred, centred * treated])
    n, k = x.shape
    bread = np.linalg.inv(x.T @ x)
    e = y - x @ (bread @ (x.T @ y))
    leverage = np.einsum("ij,jk,ik->i", x, bread, x)
    hc1 = sandwich(x, bread, e**2)[1, 1] * n / (n - k)
    hc3 = sandwich(x, bread, (e / (1 - leverage)) ** 2)[1, 1]
    return {"hc1": math.sqrt(hc1), "hc3": math.sqrt(hc3)}


INFERENCE: Final[SeVariants] = SeVariants(compute=se_variants, reference="hc1")


@dataclass(frozen=True)
class RddTopic:
    """A program assigned by a score threshold."""

    title: str
    unit: str
    units: str
    score: str
    program: str
    outcome: str


# fmt: off
TOPICS: Final[tuple[RddTopic, ...]] = (
    RddTopic("Merit scholarships and college completion", "student", "students", "entrance-exam score", "a merit scholarship", "college completion index"),
    RddTopic("Incumbency and future electoral success", "party candidate", "party candidates", "vote share in the previous election", "holding the seat as incumbent", "vote-share index in the next election"),
    RddTopic("Pension eligibility and retirement", "worker", "workers", "age", "eligibility for an early-retirement pension", "labour-force participation index"),
    RddTopic("Remedial classes and later test scores", "pupil", "pupils", "placement-test score", "assignment to a remedial class", "next-year test score index"),
    RddTopic("Credit approval and small-firm growth", "small firm", "small firms", "credit score", "approval of a bank loan", "employment-growth index"),
    RddTopic("Cash transfers and child nutrition", "household", "households", "poverty-index score", "enrolment in a cash-transfer programme", "child nutrition index"),
    RddTopic("Regulation thresholds and firm productivity", "firm", "firms", "employee headcount", "being subject to labour-market regulation", "productivity index"),
    RddTopic("Neonatal intensive care and infant health", "newborn", "newborns", "birth-weight score (lower weights score higher)", "admission to neonatal intensive care", "one-year health index"),
    RddTopic("Pollution alerts and outdoor activity", "city-day", "city-days", "air-quality forecast index", "the issue of a public pollution alert", "outdoor-activity index"),
    RddTopic("Grant funding and research output", "research proposal", "research proposals", "panel review score", "receiving the research grant", "publication index five years later"),
    RddTopic("Selective schools and university entry", "applicant", "applicants", "admission-test score", "admission to a selective secondary school", "university-entry index"),
    RddTopic("Unemployment-benefit duration and job finding", "job seeker", "job seekers", "age at job loss", "an extended benefit entitlement", "re-employment speed index"),
    RddTopic("Tax-filing thresholds and reported income", "self-employed worker", "self-employed workers", "gross revenue", "a simplified tax regime", "reported-profit index"),
    RddTopic("Honours designation and graduate earnings", "graduate", "graduates", "final grade average", "an honours designation on the diploma", "starting-salary index"),
    RddTopic("Place-based subsidies and local employment", "municipality", "municipalities", "deprivation index", "designation as a subsidy zone", "local employment index"),
    RddTopic("Speed cameras and accidents", "road segment", "road segments", "prior accident-risk score", "installation of a speed camera", "accident-rate index"),
    RddTopic("Gifted programmes and student outcomes", "student", "students", "screening-test score", "placement in a gifted programme", "achievement index two years later"),
)
# fmt: on


def _text(topic: RddTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n = int(params["n"])
    lo, hi = round(CUTOFF - BANDWIDTH, 4), round(CUTOFF + BANDWIDTH, 4)
    columns = {
        "running_var": f"the {topic.unit}'s {topic.score}, rescaled to lie between 0 and 1",
        "treated": f"1 if the {topic.unit} received {topic.program} (running_var >= {CUTOFF}), "
        "0 otherwise",
        "y": f"{topic.outcome} (standardised)",
        "near_cutoff": f"1 if running_var is within {BANDWIDTH} of the cutoff "
        f"({lo} <= running_var <= {hi}), 0 otherwise",
    }
    description = (
        f"A cross-section of {n} {topic.units}, one row per {topic.unit}. {topic.program.capitalize()} "
        f"is assigned by a rule on the {topic.score}: {topic.units} with `running_var` at or above "
        f"the cutoff of {CUTOFF} are treated (`treated` = 1); those below {CUTOFF} are not "
        f"(`treated` = 0). `near_cutoff` flags the {topic.units} within {BANDWIDTH} of the cutoff "
        f"on either side.\n\n" + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"What is the effect of {topic.program} on the {topic.outcome} of {topic.units} "
            f"whose {topic.score} is right at the cutoff?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The effect of {topic.program} on `y` ({topic.outcome}) for {topic.units} at the "
            f"cutoff (running_var = {CUTOFF}), in the units of `y`."
        ),
        facts={"n": n, "cutoff": CUTOFF, "treated_side": "above", "bandwidth": BANDWIDTH},
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th RDD scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_RDD_TREAT: Final = re.compile(
    r"^treat(ed|ment)?(true|1)?$|^d$|above|right|^rd$|^t$|>=|cutoff|^treat"
)


_RDD_NEVER: Final = re.compile(r"running|^x_?c$|centered|dist|score|slope|^x$|:|\*|×")


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the treatment jump (never the running variable or its slope)."""
    if _RDD_NEVER.search(t) and not re.search(r">=", t):
        return None
    return 2 if _RDD_TREAT.search(t) else None


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a rdd scenario: its text states what its data hold."""
    out: list[str] = []
    cutoff, band = float(str(s.facts["cutoff"])), float(str(s.facts["bandwidth"]))
    stated = stated_in(r"at or above the cutoff of ([0-9.]+) are treated", s.data_description)
    if s.facts.get("treated_side") != "above" or stated is None or float(stated[0]) != cutoff:
        out.append(f"{s.id}: text does not state that running_var >= {cutoff} is treated")
    width = stated_in(r"within ([0-9.]+) of the cutoff", s.data_description)
    if width is None or float(width[0]) != band:
        out.append(f"{s.id}: text does not state the near_cutoff band {band}")
    treated, near = rdd_flags(d["running_var"].to_numpy())
    if cutoff != CUTOFF or band != BANDWIDTH:
        out.append(
            f"{s.id}: cutoff/band {cutoff}/{band} differ from the generator's {CUTOFF}/{BANDWIDTH}"
        )
    if not np.array_equal(treated, d["treated"].to_numpy()):
        out.append(f"{s.id}: treated in the data is not running_var >= {cutoff}")
    if not np.array_equal(near, d["near_cutoff"].to_numpy()):
        out.append(f"{s.id}: near_cutoff in the data is not |running_var - {cutoff}| <= {band}")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Estimated jump in the outcome at the cutoff:",
    "naive": "Difference in mean outcomes, treated minus untreated:",
    "cumulative": "Estimated jump in the outcome at the cutoff:",
    "wrong-term": "Estimated coefficient from the local linear model:",
}


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
    setup=PY_IMPORTS
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
    descriptions=_DESCRIPTIONS,
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


R_CODE: Final[FamilyCode] = FamilyCode(
    setup=R_SE_HELPERS
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
    descriptions=_DESCRIPTIONS,
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


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "Treatment is assigned by a rule on the running variable: observations at or above the "
        "cutoff are treated. Units just either side of the cutoff are comparable, so I use a "
        "sharp regression discontinuity design: a local linear regression within the bandwidth "
        "marked in the data, with separate slopes on each side; the jump at the cutoff is the "
        "effect.\n\n"
        "Key assumptions: no precise manipulation of the running variable around the cutoff and "
        "continuity of potential outcomes at the cutoff."
    ),
    naive_identification=(
        "Some observations are treated and others are not, so I compare the mean outcome of "
        "treated and untreated observations over the whole sample. The difference in means is "
        "the effect of treatment."
    ),
    expected=(
        "I expect a visible jump at the cutoff, of the sign suggested by the research question "
        "and of moderate size relative to the outcome's spread; the script prints the estimate."
    ),
    plan=(
        "I would fit a local linear regression on observations within the bandwidth, with "
        "separate slopes on each side of the cutoff, and vary the bandwidth as a robustness check."
    ),
)

DESIGN: Final[Design] = Design(
    family="rdd",
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
    design_packages=frozenset({"rdrobust", "rdd"}),
    term_score=term_score,
    spec_bad=re.compile(r"slope|global|polynomial|quadratic|cubic"),
    effect_alias=re.compile(r"running\w*\W*\s*>=?\s*[\d.]"),
    instrumented=False,
    discontinuity="sharp",
    label_good=re.compile(r"\brdd?\b|discontinuity|jump|at (the )?(cutoff|threshold)|local"),
    label_bad=re.compile(r"slope|global|polynomial|quadratic|running|placebo cutoff"),
    scales=None,
    judge_target="the regression-discontinuity effect: the jump in the outcome at the cutoff",
)

"""Instrumental variables: a cross-section where a binary ``z`` shifts an endogenous ``x``.

Everything the family is: its CSV layout, grid, generator, canonical estimator (just-identified
2SLS, profile ``paper``), topics and text, and the extraction vocabulary of its effect term.
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
from causalverify.designs._code import R_SE_HELPERS, AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import split
from causalverify.designs._inference import SeVariants
from causalverify.designs._numbers import rounded

#: the published CSV layout (all of it is read by the canonical estimator)
COLUMNS: Final[tuple[str, ...]] = ("y", "x", "z", "controls")
REQUIRED_COLUMNS: Final[tuple[str, ...]] = COLUMNS
METHOD: Final[str] = "2SLS y ~ 1 + controls + [x ~ z]; robust SE (HC0)"


def _params(n: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n", n), ("sigma", sigma))


# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="base", difficulties=split(2, 2, 2), params=_params(500, 0.3),
              betas=(0.40, 0.40, -0.15, 0.40, 0.40, -0.30)),
    GridGroup(group="easy", difficulties=split(6, 0, 0), params=_params(500, 0.25),
              betas=(0.40, -0.35, 0.30, -0.25, 0.45, -0.40)),
    GridGroup(group="medium", difficulties=split(0, 6, 0), params=_params(400, 0.3),
              betas=(0.35, -0.30, 0.25, -0.20, 0.50, -0.45)),
    GridGroup(group="hard", difficulties=split(0, 0, 6), params=_params(300, 0.4),
              betas=(0.20, -0.15, 0.30, -0.25, 0.15, -0.35)),
)
# fmt: on

_r = rounded


def generate_iv(*, n: int, sigma: float, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    """Cross-section with a binary shifter ``z`` of an endogenous regressor ``x``.

    Draw order: ``z ~ Bernoulli(0.5)``, confounder ``u ~ N(0, 1)``, first-equation noise
    ``N(0, 0.3²)``, ``controls ~ N(0, 1)``, outcome noise ``N(0, sigma²)``.

    Returns
    -------
    pandas.DataFrame
        Columns ``y, x, z, controls``.
    """
    z = rng.binomial(1, 0.5, n).astype(np.int64)
    u = rng.normal(0.0, 1.0, n)
    x = 0.6 * z + 0.5 * u + rng.normal(0.0, 0.3, n)
    controls = rng.normal(0.0, 1.0, n)
    y = beta * x + 0.6 * u + rng.normal(0.0, sigma, n)
    return pd.DataFrame({"y": _r(y, 4), "x": _r(x, 4), "z": z, "controls": _r(controls, 4)})


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_iv(n=int(params["n"]), sigma=float(params["sigma"]), beta=beta, rng=rng)


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """Just-identified 2SLS with linearmodels; robust SE without debiasing."""
    from linearmodels.iv import IV2SLS

    n = len(data)
    exog = pd.DataFrame({"const": np.ones(n), "controls": data["controls"].to_numpy(dtype=float)})
    endog = pd.DataFrame({"x": data["x"].to_numpy(dtype=float)})
    instr = pd.DataFrame({"z": data["z"].to_numpy(dtype=float)})
    dep = pd.Series(data["y"].to_numpy(dtype=float), name="y")
    fit = IV2SLS(dep, exog, endog, instr).fit(cov_type="robust", debiased=False)
    return finished(
        "iv",
        float(fit.params["x"]),
        float(fit.std_errors["x"]),
        int(fit.nobs),
        method=METHOD,
        packages=("numpy", "pandas", "linearmodels"),
    )


def se_variants(data: pd.DataFrame) -> dict[str, float]:
    """The canonical SE under each variance estimator (:mod:`causalverify.estimators._inference`)."""
    y = data["y"].to_numpy(dtype=float)
    ones = np.ones_like(y)
    controls = data["controls"].to_numpy(dtype=float)
    x = np.column_stack([data["x"].to_numpy(dtype=float), ones, controls])
    z = np.column_stack([data["z"].to_numpy(dtype=float), ones, controls])
    n, k = x.shape
    # the fitted regressors: projection of x on the instruments
    xhat = z @ np.linalg.lstsq(z, x, rcond=None)[0]
    bread = np.linalg.inv(xhat.T @ x)
    beta = bread @ (xhat.T @ y)
    e = y - x @ beta  # structural residuals (the actual x, not its fitted value)
    scores = xhat * e[:, None]
    hc0 = (bread @ (scores.T @ scores) @ bread.T)[0, 0]
    classical = float(e @ e) / (n - k) * np.linalg.inv(xhat.T @ xhat)[0, 0]
    return {
        "hc1": math.sqrt(hc0 * n / (n - k)),
        "hc0": math.sqrt(hc0),
        "classical": math.sqrt(classical),
    }


INFERENCE: Final[SeVariants] = SeVariants(compute=se_variants, reference="hc1")


@dataclass(frozen=True)
class IvTopic:
    """An endogenous exposure ``x`` shifted by a binary circumstance ``z``."""

    title: str
    unit: str
    units: str
    x: str
    z_condition: str
    y: str
    background: str


# fmt: off
TOPICS: Final[tuple[IvTopic, ...]] = (
    IvTopic("Schooling and wages: evidence from college proximity", "worker", "workers", "years of schooling (standardised)", "the worker grew up within 15 miles of a four-year college", "log hourly wage (standardised)", "parental-background index"),
    IvTopic("Farm income and child schooling in rain-fed regions", "household", "households", "agricultural income (standardised)", "growing-season rainfall in the household's district was above its long-run median", "children's school attendance index", "household-head age (standardised)"),
    IvTopic("Charter-school attendance and achievement", "student", "students", "years enrolled in a charter school (standardised)", "the student won the charter school's admission lottery", "maths test score (standardised)", "prior-year reading score (standardised)"),
    IvTopic("Military service and civilian earnings", "man", "men", "years of military service (standardised)", "the man received a low draft-lottery number", "civilian earnings index", "birth-cohort size (standardised)"),
    IvTopic("Family size and mothers' labour supply", "mother", "mothers", "number of children (standardised)", "the mother's first two children are of the same sex", "annual hours worked (standardised)", "mother's age at first birth (standardised)"),
    IvTopic("Incarceration length and later employment", "defendant", "defendants", "months incarcerated (standardised)", "the case was assigned to a judge whose past sentencing is harsher than the court median", "employment index two years later", "prior-offence index"),
    IvTopic("Housing mobility and adult earnings", "family", "families", "years lived in a low-poverty neighbourhood (standardised)", "the family was offered a housing voucher in the lottery", "adult earnings index of the children", "baseline household income (standardised)"),
    IvTopic("Health insurance and health outcomes", "adult", "adults", "months with health insurance (standardised)", "the adult was selected in the insurance-enrolment lottery", "self-reported health index", "baseline body-mass index (standardised)"),
    IvTopic("Class size and pupil achievement", "pupil", "pupils", "class size (standardised)", "the pupil's school won funding for extra teachers in a random draw", "reading score (standardised)", "school enrolment (standardised)"),
    IvTopic("Air pollution and respiratory health", "resident", "residents", "fine-particle exposure (standardised)", "the resident's home lies downwind of the regional power plant on most days", "respiratory-health index", "household-size index"),
    IvTopic("Mobile money and household consumption", "household", "households", "mobile-money transactions (standardised)", "a mobile-phone tower was built within 2 km of the village for unrelated engineering reasons", "consumption per adult (standardised)", "distance-to-market index"),
    IvTopic("Tutoring and grades: an encouragement experiment", "student", "students", "hours of tutoring attended (standardised)", "the student was randomly sent a personal invitation letter", "end-of-year grade point average (standardised)", "baseline motivation index"),
    IvTopic("Retirement saving and household wealth", "employee", "employees", "retirement contribution rate (standardised)", "the employee was hired after automatic enrolment became the default", "net household wealth (standardised)", "employee tenure (standardised)"),
    IvTopic("Bed-net use and child health", "household", "households", "share of nights children slept under a bed net (standardised)", "the household received a randomly assigned bed-net discount voucher", "child haemoglobin level (standardised)", "dwelling-quality index"),
    IvTopic("Hospital treatment intensity and survival", "patient", "patients", "treatment intensity index", "the patient lives closer to a hospital with a specialised cardiac unit than to any other hospital", "one-year survival index", "comorbidity index"),
    IvTopic("Microcredit access and business profits", "entrepreneur", "entrepreneurs", "loan amount received (standardised)", "the entrepreneur's neighbourhood was randomly chosen for a new lender branch", "monthly business profit (standardised)", "years of business experience (standardised)"),
    IvTopic("Job-training participation and earnings", "job seeker", "job seekers", "weeks of job training completed (standardised)", "the job seeker was randomly offered a training slot", "earnings index one year later", "previous-job tenure (standardised)"),
)
# fmt: on


def _plain(phrase: str) -> str:
    return phrase.replace(" (standardised)", "")


def _text(topic: IvTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n = int(params["n"])
    coding = f"z = 1 if {topic.z_condition}, 0 otherwise"
    columns = {
        "y": f"{topic.y}",
        "x": f"{topic.x}",
        "z": f"1 if {topic.z_condition}, 0 otherwise",
        "controls": f"{topic.background}, measured before `x`",
    }
    description = (
        f"A cross-section of {n} {topic.units}, one row per {topic.unit}. `x` is not randomly "
        f"assigned: unobserved traits of the {topic.units} affect both `x` and `y`. Whether "
        f"{topic.z_condition} is as good as randomly assigned, shifts `x`, and is thought to "
        f"affect `y` only through `x`. Coding of `z`: {coding}.\n\n" + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"What is the causal effect of {_plain(topic.x)} on the {_plain(topic.y)} of "
            f"{topic.units}?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The causal effect on `y` ({_plain(topic.y)}) of a one-unit increase in `x` "
            f"({_plain(topic.x)}), in units of `y` per unit of `x`."
        ),
        facts={"n": n, "instrument_coding": coding},
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th IV scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_IV_GOOD: Final = re.compile(
    r"^x$|x_?hat|xhat|fitted|^fit_|_fit$|pred|endog|^x_|2sls|tsls|^iv$|instrumented"
)


_IV_NEVER: Final = re.compile(r"^z$|instrument|^z_|control|^ols$|naive|first")


#: the fitted values of a first stage used as the second-stage regressor
_PREDICTED: Final = re.compile(r"^(predict|fitted)(\.values)?\(")


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the instrumented regressor (never the instrument itself)."""
    if _PREDICTED.match(t):
        return 2
    if t in hints.instruments or _IV_NEVER.search(t):
        return None
    if t in hints.endogenous:
        return 3
    return 2 if _IV_GOOD.search(t) else None


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a iv scenario: its text states what its data hold."""
    out: list[str] = []
    coding = str(s.facts.get("instrument_coding", ""))
    stated = stated_in(r"Coding of `z`: (z = 1 if .+?, 0 otherwise)\.", s.data_description)
    if stated is None or stated[0] != coding:
        out.append(f"{s.id}: text does not state the coding of z as in the facts")
    if set(np.unique(d["z"])) != {0, 1}:
        out.append(f"{s.id}: z is not coded 0/1 with both values present")
    if len(d) != int(str(s.facts["n"])):
        out.append(f"{s.id}: number of rows differs from the facts")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Two-stage least squares estimate of the effect of x on y:",
    "naive": "OLS estimate of the effect of x on y:",
    "cumulative": "Two-stage least squares estimate of the effect of x on y:",
    "wrong-term": "Estimated effect of the instrument:",
}


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
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
    descriptions=_DESCRIPTIONS,
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


R_CODE: Final[FamilyCode] = FamilyCode(
    setup=R_SE_HELPERS
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
    descriptions=_DESCRIPTIONS,
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


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "The explanatory variable is chosen by the units themselves, so an OLS regression would "
        "pick up unobserved confounders. The binary variable z shifts x for reasons unrelated to "
        "the outcome, so I use it as an instrument and estimate the effect by two-stage least "
        "squares, keeping the control variable as an exogenous regressor.\n\n"
        "Key assumptions: relevance (z moves x), exclusion (z affects y only through x), and "
        "independence of z from the unobserved determinants of y."
    ),
    naive_identification=(
        "I estimate how the outcome responds to x with a linear regression of y on x, holding "
        "the control variable fixed. With a large sample the OLS slope is a precise estimate of "
        "the effect."
    ),
    expected=(
        "I expect an effect of the sign suggested by the research question and of moderate "
        "size, with a strong first stage; the script prints the estimate."
    ),
    plan=(
        "I would run two-stage least squares of y on x instrumented by z with the control as an "
        "exogenous regressor, report robust standard errors and the first-stage F statistic."
    ),
)

DESIGN: Final[Design] = Design(
    family="iv",
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
    spec_bad=re.compile(r"\bols\b(?!.*(2sls|iv\b))|naive|first[- ]stage|reduced[- ]form"),
    effect_alias=None,
    instrumented=True,
    discontinuity=None,
    label_good=re.compile(r"\biv\b|2sls|tsls|instrument|\blate\b|wald|second[- ]stage"),
    label_bad=re.compile(r"\bols\b(?!.*(2sls|iv\b))|naive|first[- ]stage|reduced[- ]form|\bof z\b"),
    scales=None,
    judge_target="the instrumental-variables (second-stage) effect of the endogenous regressor",
)

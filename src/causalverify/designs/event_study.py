"""Event study: stock returns around an event, with a constant per-day effect from the event day.

Everything the family is: its CSV layout, event and effect windows, grid, generator, canonical
estimator (the pooled market model, profile ``paper``), topics and text, and the extraction
vocabulary of its effect term.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs._base import (
    CodeHints,
    Design,
    GridGroup,
    Params,
    ReportedScales,
    ScenarioText,
    Stated,
    dictionary,
    pick_topic,
    stated_in,
)
from causalverify.designs._code import PY_IMPORTS, R_SE_HELPERS, AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import split
from causalverify.designs._inference import SeVariants, ols_ses
from causalverify.designs._numbers import rounded

#: the published CSV layout
COLUMNS: Final[tuple[str, ...]] = ("stock_id", "event_day", "ret", "mkt_ret", "beta")
#: the columns the canonical estimator reads
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("stock_id", "event_day", "ret", "mkt_ret")
METHOD: Final[str] = "pooled OLS ret ~ 1 + mkt_ret + 1{event_day>=0}; SE clustered by stock (CR1)"

#: Event days of every stock (inclusive) and the first day the effect is present.
EVENT_WINDOW: Final[tuple[int, int]] = (-10, 10)
EFFECT_START: Final[int] = 0
#: The multiples of the per-day effect a reported figure may be: a cumulative effect over k of
#: the effect window's days (the published rule accepts k = 1..11).
MULTIPLES: Final[tuple[int, ...]] = tuple(range(1, EVENT_WINDOW[1] - EFFECT_START + 2))
#: Reported-effect scales an event-study scenario declares acceptable.
CONVERSIONS: Final[dict[str, int]] = {
    "per_day": 1,
    f"cumulative_{EFFECT_START}_{EVENT_WINDOW[1]}": EVENT_WINDOW[1] - EFFECT_START + 1,
}


def _params(n_stocks: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n_stocks", n_stocks), ("sigma", sigma))


# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="base", difficulties=split(2, 3, 3), params=_params(80, 0.015),
              betas=(-0.020, -0.025, -0.018, 0.022, 0.030, -0.028, -0.035, -0.015)),
    GridGroup(group="easy", difficulties=split(5, 0, 0), params=_params(100, 0.012),
              betas=(-0.020, 0.025, -0.030, 0.018, -0.028)),
    GridGroup(group="medium", difficulties=split(0, 6, 0), params=_params(80, 0.015),
              betas=(0.022, -0.015, -0.025, 0.030, -0.020, 0.018)),
    GridGroup(group="hard", difficulties=split(0, 0, 5), params=_params(60, 0.020),
              betas=(-0.018, 0.015, -0.022, 0.028, -0.012)),
)
# fmt: on

_r = rounded


def generate_event_study(
    *, n_stocks: int, sigma: float, beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Stock returns around an event with a constant per-day effect ``beta`` on days 0..+10.

    Draw order: stock betas ``U(0.7, 1.4)``, stock alphas ``N(0, 0.001²)``, market returns
    ``N(0.0003, 0.01²)`` in row order, then noise ``N(0, sigma²)`` in row order.

    Returns
    -------
    pandas.DataFrame
        Columns ``stock_id, event_day, ret, mkt_ret, beta``; rows ordered by stock, then day.
    """
    days = np.arange(EVENT_WINDOW[0], EVENT_WINDOW[1] + 1, dtype=np.int64)
    n_rows = n_stocks * days.size
    stock_beta = rng.uniform(0.7, 1.4, n_stocks)
    alpha = rng.normal(0.0, 0.001, n_stocks)
    mkt_ret = rng.normal(0.0003, 0.01, n_rows)
    noise = rng.normal(0.0, sigma, n_rows)
    stock_id = np.repeat(np.arange(n_stocks, dtype=np.int64), days.size)
    event_day = np.tile(days, n_stocks)
    effect = beta * (event_day >= EFFECT_START)
    ret = alpha[stock_id] + stock_beta[stock_id] * mkt_ret + effect + noise
    return pd.DataFrame(
        {
            "stock_id": stock_id,
            "event_day": event_day,
            "ret": _r(ret, 6),
            "mkt_ret": _r(mkt_ret, 6),
            "beta": _r(stock_beta[stock_id], 4),
        }
    )


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_event_study(
        n_stocks=int(params["n_stocks"]), sigma=float(params["sigma"]), beta=beta, rng=rng
    )


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """Pooled market-model OLS with a post-event indicator; SE clustered by stock."""
    import statsmodels.api as sm

    ret = data["ret"].to_numpy(dtype=float)
    post = (data["event_day"].to_numpy(dtype=float) >= 0).astype(float)
    exog = np.column_stack([np.ones_like(ret), data["mkt_ret"].to_numpy(dtype=float), post])
    groups = pd.factorize(data["stock_id"], sort=True)[0]
    fit = sm.OLS(ret, exog).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return finished(
        "event_study",
        float(fit.params[2]),
        float(fit.bse[2]),
        len(ret),
        method=METHOD,
        packages=("numpy", "pandas", "statsmodels"),
    )


def se_variants(data: pd.DataFrame) -> dict[str, float]:
    """The canonical SE under each variance estimator (:mod:`causalverify.estimators._inference`)."""
    ret = data["ret"].to_numpy(dtype=float)
    post = (data["event_day"].to_numpy(dtype=float) >= 0).astype(float)
    x = np.column_stack([np.ones_like(ret), data["mkt_ret"].to_numpy(dtype=float), post])
    return ols_ses(x, ret, 2, groups=data["stock_id"].to_numpy(), rank=3)


INFERENCE: Final[SeVariants] = SeVariants(compute=se_variants, reference="cr1")


@dataclass(frozen=True)
class EsTopic:
    """A dated corporate or market event hitting a set of stocks."""

    title: str
    firms: str
    event: str


# fmt: off
TOPICS: Final[tuple[EsTopic, ...]] = (
    EsTopic("Stock-price reactions to earnings surprises", "listed firms", "an earnings announcement that differed from analyst forecasts"),
    EsTopic("How markets price CEO turnover", "listed firms", "the announcement of an unexpected chief-executive departure"),
    EsTopic("Index inclusion and share prices", "stocks", "the announcement that the stock will join a major equity index"),
    EsTopic("Dividend initiations and shareholder value", "listed firms", "the first-ever dividend announcement of the firm"),
    EsTopic("Credit-rating changes and equity prices", "rated firms", "a change in the firm's credit rating by a major agency"),
    EsTopic("Share buyback announcements", "listed firms", "the announcement of an open-market share repurchase programme"),
    EsTopic("Acquirer returns in corporate takeovers", "acquiring firms", "the announcement of a takeover bid for another company"),
    EsTopic("Product recalls and firm value", "consumer-goods firms", "the announcement of a large product recall"),
    EsTopic("Data-breach disclosures and share prices", "listed firms", "the public disclosure of a customer data breach"),
    EsTopic("Drug-approval decisions and biotech valuations", "biotechnology firms", "a regulator's decision on the firm's drug application"),
    EsTopic("Auditor changes and investor reactions", "listed firms", "the announcement that the firm replaced its external auditor"),
    EsTopic("Activist investor stakes", "target firms", "the disclosure that an activist investor acquired a large stake"),
    EsTopic("Seasoned equity offerings", "listed firms", "the announcement of a new share issue"),
    EsTopic("Stock splits and share prices", "listed firms", "the announcement of a stock split"),
    EsTopic("Regulatory fines and bank valuations", "listed banks", "the announcement of a regulatory fine against the bank"),
    EsTopic("Patent grants and technology-firm value", "technology firms", "the grant of a major patent to the firm"),
    EsTopic("Environmental lawsuits and firm value", "industrial firms", "the filing of an environmental lawsuit against the firm"),
    EsTopic("Government contract awards", "defence and construction firms", "the announcement of a large government contract award"),
)
# fmt: on


def _text(topic: EsTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n = int(params["n_stocks"])
    lo, hi = EVENT_WINDOW
    days = hi - lo + 1
    columns = {
        "stock_id": f"stock identifier, 0 to {n - 1}",
        "event_day": f"trading day relative to the event (day 0 is the event day), {lo} to +{hi}",
        "ret": "the stock's daily return as a decimal (0.01 = 1%)",
        "mkt_ret": "the daily return of a broad market index on the same day, as a decimal",
        "beta": "the stock's sensitivity to market returns, measured before the event window "
        "(constant within a stock)",
    }
    description = (
        f"Daily returns of {n} {topic.firms} around {topic.event}. Each stock has its own event "
        f"date; days are counted relative to it. Event window: days {lo} to +{hi}. Every stock is "
        f"observed on all {days} days ({n * days} rows, ordered by stock and day). "
        f"Effect window: days {EFFECT_START} to +{hi}: any effect of the event is present from "
        f"the event day through day +{hi}.\n\n" + dictionary(columns)
    )
    n_effect = hi - EFFECT_START + 1
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"How did the share prices of {topic.firms} respond to {topic.event}? Measure the "
            f"average daily return in excess of the stock's normal co-movement with the market "
            f"over the {n_effect} trading days starting on the event day."
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The average per-day abnormal return on event days {EFFECT_START} to +{hi}: the part "
            f"of the daily return (`ret`) not explained by the stock's normal relation to the "
            f"market return (`mkt_ret`), averaged over those {n_effect} days, as a decimal return. "
            f"A cumulative figure over days {EFFECT_START} to +{hi} ({n_effect} times the per-day "
            f"value) is also acceptable if it is labelled as cumulative."
        ),
        facts={
            "n_stocks": n,
            "event_window": [lo, hi],
            "effect_window": [EFFECT_START, hi],
        },
        conversions=dict(CONVERSIONS),
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th event-study scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_ES_POST: Final = re.compile(
    r"^post|post_?event|event_?(window|period|dummy|post|ind)|^after|^event$|^ed$|^d$"
    r"|>=\s*0|>\s*-1|^treat|^in_?window|^post_?day"
)


_ES_NEVER: Final = re.compile(r"mkt|market|beta|alpha|stock|^c\(|factor\(|rel_?day|^event_?day$")


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the post-event indicator (never a market-model term)."""
    if _ES_NEVER.search(t):
        return None
    return 2 if _ES_POST.search(t) else None


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a event_study scenario: its text states what its data hold."""
    out: list[str] = []
    lo, hi = (int(v) for v in s.facts["event_window"])  # type: ignore[attr-defined]
    e_lo, e_hi = (int(v) for v in s.facts["effect_window"])  # type: ignore[attr-defined]
    for label, window in (("Event", (lo, hi)), ("Effect", (e_lo, e_hi))):
        stated = stated_in(rf"{label} window: days (-?\d+) to \+?(-?\d+)", s.data_description)
        if stated is None or (int(stated[0]), int(stated[1])) != window:
            out.append(f"{s.id}: text does not state the {label.lower()} window {window}")
    n_days = hi - lo + 1
    grid = d.sort_values(["stock_id", "event_day"])["event_day"].to_numpy()
    expected = np.tile(np.arange(lo, hi + 1), max(d["stock_id"].nunique(), 1))
    if len(d) != d["stock_id"].nunique() * n_days or not np.array_equal(grid, expected):
        out.append(f"{s.id}: not every stock is observed on days {lo}..{hi}")
    if d["stock_id"].nunique() != int(str(s.facts["n_stocks"])):
        out.append(f"{s.id}: number of stocks differs from the facts")
    if s.conversions != CONVERSIONS:
        out.append(f"{s.id}: conversions {s.conversions} are not {CONVERSIONS}")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Average daily abnormal return on event days 0 to +10:",
    "naive": "Average daily raw return on event days 0 to +10 relative to the stock mean:",
    "cumulative": "Cumulative abnormal return over event days 0 to +10:",
    "wrong-term": "Estimated coefficient from the market model:",
}


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
    setup=PY_IMPORTS
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
    descriptions=_DESCRIPTIONS,
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


R_CODE: Final[FamilyCode] = FamilyCode(
    setup=R_SE_HELPERS
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
    descriptions=_DESCRIPTIONS,
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


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "Each stock is observed on trading days around the announcement. I use an event-study "
        "market model estimated on all stock-days: returns depend on the market return, and an "
        "indicator for event days 0 to +10 captures the average daily abnormal return in the "
        "event window.\n\n"
        "Key assumptions: the market model describes normal returns, the event date is not "
        "anticipated, and no other news clusters in the window."
    ),
    naive_identification=(
        "The announcement should move returns in the days after it, so I measure each stock's "
        "return relative to its own average return over the window and average that excess on "
        "event days 0 to +10. The stock's average serves as its normal return."
    ),
    expected=(
        "I expect a daily abnormal return of a few tenths of a percentage point to a few "
        "percentage points, of the sign suggested by the research question; the script prints "
        "the estimate."
    ),
    plan=(
        "I would fit a market model of returns on the market return with an indicator for event "
        "days 0 to +10, cluster standard errors by stock, and report the daily abnormal return."
    ),
)

DESIGN: Final[Design] = Design(
    family="event_study",
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
    spec_bad=re.compile(r"market|pre[- ]?event|estimation window"),
    effect_alias=re.compile(r"event_?day\W*\s*(>=\s*0|>\s*-1)"),
    instrumented=False,
    discontinuity=None,
    label_good=re.compile(
        r"per[- ]day|daily|average (ar|abnormal)|mean (ar|abnormal)|\baar\b|post[- ]event"
        r"|\bcaa?r\b|cumulative"
    ),
    label_bad=re.compile(
        r"\b(market|mkt)\b(?![- ](model|adjusted))|\balpha\b|\bbeta\b(?!_?hat)|pre[- ]?event|estimation window"
        r"|(?<![>=] )\bday[- ]?0\b|day zero|(on|at) the event day|event[- ]day (effect|ar|abnormal)"
        r"|\bar\s*\(0\)|ar\[0\]|\bt\s*=\s*0\b(?!\s*,)"
    ),
    scales=ReportedScales(
        multiples=MULTIPLES,
        default=MappingProxyType({"per_day": 1}),
        event_windows=True,
    ),
    judge_target=(
        "the event effect on returns (the post-event abnormal return the script reports)"
    ),
)

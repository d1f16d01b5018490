"""Event study: stock returns around an event, with a constant per-day effect from the event day.

Everything the family is: its CSV layout, event and effect windows, grid, generator, canonical
estimator (the pooled market model, profile ``paper``), topics and text, and the extraction
vocabulary of its effect term.
"""

from __future__ import annotations

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
    dictionary,
    pick_topic,
)
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import split
from causalverify.designs._numbers import rounded

#: the published CSV layout
COLUMNS: Final[tuple[str, ...]] = ("stock_id", "event_day", "ret", "mkt_ret", "beta")
#: the columns the canonical estimator reads
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("stock_id", "event_day", "ret", "mkt_ret")
METHOD: Final[str] = "pooled OLS ret ~ 1 + mkt_ret + 1{event_day>=0}; SE clustered by stock (CR1)"

#: Event days of every stock (inclusive) and the first day the effect is present.
EVENT_WINDOW: Final[tuple[int, int]] = (-10, 10)
EFFECT_START: Final[int] = 0
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
    term_score=term_score,
    spec_bad=re.compile(r"market|pre[- ]?event|estimation window"),
    effect_alias=re.compile(r"event_?day\W*\s*(>=\s*0|>\s*-1)"),
    instrumented=False,
)

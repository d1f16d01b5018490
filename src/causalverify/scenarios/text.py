"""Scenario text: title, research question, data description with a column dictionary, target.

The sentences that carry checkable facts use fixed phrasings, so
:mod:`causalverify.scenarios.checks` can read them back and compare them with the data:

- did: ``The first treated period is period 5.`` and ``... with `unit_id` below 100 ...``
- event_study: ``Event window: days -10 to +10.`` and ``Effect window: days 0 to +10.``
- iv: ``Coding of `z`: z = 1 if ..., 0 otherwise.``
- rdd: ``... at or above the cutoff of 0.5 are treated ...`` and ``... within 0.3 of the cutoff ...``

Column names are the only words written in backticks. No text names the design family or its
estimator (see :data:`causalverify.scenarios.checks.FORBIDDEN`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from causalverify.families import MODERN_FAMILIES, Family
from causalverify.scenarios.dgp import BANDWIDTH, CUTOFF, EFFECT_START, EVENT_WINDOW
from causalverify.scenarios.dgp import did_treat_start as _treat_start
from causalverify.scenarios.modern import render_modern_text
from causalverify.scenarios.topics import (
    DID_TOPICS,
    ES_TOPICS,
    IV_TOPICS,
    RDD_TOPICS,
    DidTopic,
    EsTopic,
    IvTopic,
    RddTopic,
)

#: Reported-effect scales an event-study scenario declares acceptable.
ES_CONVERSIONS: Final[dict[str, int]] = {
    "per_day": 1,
    f"cumulative_{EFFECT_START}_{EVENT_WINDOW[1]}": EVENT_WINDOW[1] - EFFECT_START + 1,
}


@dataclass(frozen=True, kw_only=True)
class ScenarioText:
    """Everything a scenario says in words, plus the facts its sentences state."""

    topic: str
    title: str
    research_question: str
    data_description: str
    columns: dict[str, str]
    target: str
    facts: dict[str, object]
    conversions: dict[str, int]


def _dictionary(columns: Mapping[str, str]) -> str:
    lines = [f"- `{name}`: {meaning}" for name, meaning in columns.items()]
    return "Columns:\n" + "\n".join(lines)


def _did(topic: DidTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n, t = int(params["n_units"]), int(params["n_periods"])
    half, start = n // 2, _treat_start(t)
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
        + _dictionary(columns)
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


def _event_study(topic: EsTopic, params: Mapping[str, float | int]) -> ScenarioText:
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
        f"the event day through day +{hi}.\n\n" + _dictionary(columns)
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
        conversions=dict(ES_CONVERSIONS),
    )


def _plain(phrase: str) -> str:
    return phrase.replace(" (standardised)", "")


def _iv(topic: IvTopic, params: Mapping[str, float | int]) -> ScenarioText:
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
        f"affect `y` only through `x`. Coding of `z`: {coding}.\n\n" + _dictionary(columns)
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


def _rdd(topic: RddTopic, params: Mapping[str, float | int]) -> ScenarioText:
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
        f"on either side.\n\n" + _dictionary(columns)
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


def topic_index(family: Family, ordinal: int, suite_seed: int) -> int:
    """Index of the topic of the ``ordinal``-th scenario (0-based) of ``family`` in a suite.

    Topics are cycled so consecutive scenarios of a family differ; the suite seed shifts the start.
    """
    count = len(_TOPICS[family])
    return (ordinal + suite_seed) % count


_TOPICS: Final[dict[Family, tuple[object, ...]]] = {
    "did": DID_TOPICS,
    "event_study": ES_TOPICS,
    "iv": IV_TOPICS,
    "rdd": RDD_TOPICS,
}


def render_text(
    family: Family, params: Mapping[str, float | int], *, ordinal: int, suite_seed: int
) -> ScenarioText:
    """Write the text of one scenario.

    Parameters
    ----------
    family : Family
        The design family (never named in the text).
    params : Mapping
        The grid parameters (sizes are stated in the text).
    ordinal : int
        0-based position of the scenario among the suite's scenarios of this family.
    suite_seed : int
        The suite seed (shifts which topic comes first).

    Returns
    -------
    ScenarioText
        Title, research question, data description, column dictionary, target, facts.
    """
    if family in MODERN_FAMILIES:
        fields = render_modern_text(family, params, ordinal=ordinal, suite_seed=suite_seed)
        return ScenarioText(**fields, conversions={})  # type: ignore[arg-type]
    topic = _TOPICS[family][topic_index(family, ordinal, suite_seed)]
    if isinstance(topic, DidTopic):
        return _did(topic, params)
    if isinstance(topic, EsTopic):
        return _event_study(topic, params)
    if isinstance(topic, IvTopic):
        return _iv(topic, params)
    if isinstance(topic, RddTopic):
        return _rdd(topic, params)
    raise ValueError(f"unknown design family {family!r}")  # pragma: no cover

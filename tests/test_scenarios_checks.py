"""Suite checks: forbidden design names, column dictionary, stated facts vs data."""

from __future__ import annotations

import pandas as pd
import pytest

from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import Family
from causalverify.scenarios.checks import (
    MIN_CANONICAL_RATIO,
    check_scenario,
    find_design_names,
    usable_canonical,
)
from causalverify.scenarios.dgp import generate, read_csv_bytes, scenario_rng, to_csv_bytes
from causalverify.scenarios.grid import DEFAULT_GRID
from causalverify.scenarios.model import Canonical, Scenario
from causalverify.scenarios.text import render_text
from causalverify.scenarios.topics import TOPICS_BY_FAMILY


def make(family: Family, ordinal: int = 0) -> tuple[Scenario, pd.DataFrame]:
    """A scenario of the first grid entry of ``family`` (canonical set to beta: checks only)."""
    entry = next(e for e in DEFAULT_GRID if e.family == family)
    raw = to_csv_bytes(generate(family, entry.params_dict(), entry.beta, scenario_rng(3, 1, 0)))
    text = render_text(family, entry.params_dict(), ordinal=ordinal, suite_seed=0)
    scenario = Scenario(
        id="s001",
        index=1,
        family=family,
        difficulty=entry.difficulty,
        group=entry.group,
        suite_seed=3,
        attempt=0,
        beta=entry.beta,
        params=entry.params_dict(),
        topic=text.topic,
        title=text.title,
        research_question=text.research_question,
        data_description=text.data_description,
        columns=text.columns,
        target=text.target,
        facts=text.facts,
        conversions=text.conversions,
        data_file="data/s001.csv",
        csv_sha256="0" * 64,
        canonical=Canonical(estimate=entry.beta, se=0.1, n=1, method="test"),
    )
    return scenario, read_csv_bytes(raw)


@pytest.mark.parametrize(
    "text",
    [
        "We use a difference-in-differences design.",
        "A Differences in Differences estimate",
        "classic diff-in-diff",
        "the DiD estimate",
        "DID with unit effects",
        "a DD regression",
        "An event study of announcements",
        "event-studies of mergers",
        "instrumental variables regression",
        "using z as an instrument",
        "x instrumented by z",
        "estimate by 2SLS",
        "two-stage least squares",
        "TSLS",
        "the IV estimate",
        "regression discontinuity at the cutoff",
        "a sharp RD design",
        "RDD with a bandwidth",
        "synthetic control method",
        "two-way fixed effects",
        "TWFE",
        "a market model regression",
        "abnormal return regression",
        "local linear fit",
        "use rdrobust",
        "parallel trends hold",
        "no pre-trends",
        "the exclusion restriction",
        "first-stage F",
    ],
)
def test_forbidden_names_are_found(text: str) -> None:
    assert find_design_names(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Did the policy change employment?",
        "The average per-day abnormal return on days 0 to +10.",
        "units at or above the cutoff of 0.5 are treated; bandwidth 0.3",
        "Event window: days -10 to +10.",
        "OLS regression of outcomes; individual covariates",
        "instrumental music lessons",  # 'instrumental' alone is not a design name
        "ADDRESS, DIDACTIC, RDX, IVORY, dividend",
        "The treated units adopted the policy in the first period.",
    ],
)
def test_clean_text_passes(text: str) -> None:
    assert find_design_names(text) == []


def test_matches_are_reported_once_in_order() -> None:
    assert find_design_names("2SLS then DiD then 2SLS") == ["2SLS", "DiD"]


def test_acceptance_rule() -> None:
    assert usable_canonical(0.3, 0.3)
    assert usable_canonical(-0.08, -0.3)
    assert usable_canonical(MIN_CANONICAL_RATIO * 0.3, 0.3)
    assert not usable_canonical(0.07, 0.3)  # below a quarter of beta
    assert not usable_canonical(0.2, -0.3)  # wrong sign
    assert not usable_canonical(0.0, 0.1)
    assert not usable_canonical(float("nan"), 0.1)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_topic_renders_a_clean_scenario(family: Family) -> None:
    topics = TOPICS_BY_FAMILY[family]
    assert len(topics) >= 15
    titles = set()
    for ordinal in range(len(topics)):
        scenario, data = make(family, ordinal)
        assert check_scenario(scenario, data) == [], scenario.title
        titles.add(scenario.title)
    assert len(titles) == len(topics)


def _violations(scenario: Scenario, data: pd.DataFrame, **update: object) -> list[str]:
    return check_scenario(scenario.model_copy(update=update), data)


def test_planted_forbidden_word() -> None:
    s, data = make("did")
    found = _violations(s, data, title=s.title + " (a difference-in-differences study)")
    assert any("title names the design" in v for v in found)
    found = _violations(s, data, target=s.target + " Use two-way fixed effects.")
    assert any("target names the design" in v for v in found)


def test_planted_missing_and_phantom_column() -> None:
    s, data = make("iv")
    columns = {k: v for k, v in s.columns.items() if k != "controls"}
    description = s.data_description.replace("- `controls`:", "- controls:")
    found = _violations(s, data, columns=columns, data_description=description)
    assert any("'controls' exists in the data but is not described" in v for v in found)
    assert any("no dictionary entry for 'controls'" in v for v in found)
    found = _violations(s, data, columns={**s.columns, "w": "weights"})
    assert any("'w' is described but not in the data" in v for v in found)
    found = _violations(s, data, research_question=s.research_question + " Use `weight`.")
    assert any("mentions 'weight'" in v for v in found)


def test_planted_wrong_cutoff_and_side() -> None:
    s, data = make("rdd")
    wrong = s.data_description.replace("cutoff of 0.5", "cutoff of 0.6")
    assert any("running_var >= 0.5" in v for v in _violations(s, data, data_description=wrong))
    flipped = data.assign(treated=1 - data["treated"])
    assert any("treated in the data" in v for v in check_scenario(s, flipped))
    band = s.data_description.replace("within 0.3 of the cutoff", "within 0.2 of the cutoff")
    assert any("band" in v for v in _violations(s, data, data_description=band))


def test_planted_wrong_timing() -> None:
    s, data = make("did")
    wrong = s.data_description.replace(
        "first treated period is period 5", "first treated period is period 4"
    )
    assert any("first treated period" in v for v in _violations(s, data, data_description=wrong))
    late = data.assign(post=(data["period"] >= 6).astype(int))
    late = late.assign(treat_x_post=late["treated"] * late["post"])
    found = check_scenario(s, late)
    assert any("post does not switch on" in v for v in found)
    assert any("first treated period in the data" in v for v in found)


def test_planted_wrong_window_coding_and_conversions() -> None:
    s, data = make("event_study")
    wrong = s.data_description.replace("Effect window: days 0", "Effect window: days 1")
    assert any("effect window" in v for v in _violations(s, data, data_description=wrong))
    short = data[data["event_day"] < 10]
    assert any("not every stock" in v for v in check_scenario(s, short))
    assert any("conversions" in v for v in _violations(s, data, conversions={"per_day": 1}))
    iv, iv_data = make("iv")
    recoded = iv_data.assign(z=iv_data["z"] * 2)
    assert any("z is not coded 0/1" in v for v in check_scenario(iv, recoded))
    other = iv.data_description.replace("0 otherwise.", "-1 otherwise.")
    assert any("coding of z" in v for v in _violations(iv, iv_data, data_description=other))


def test_unusable_canonical_is_a_violation() -> None:
    s, data = make("iv")
    bad = s.canonical.model_copy(update={"estimate": -s.beta})
    assert any("unusable" in v for v in _violations(s, data, canonical=bad))

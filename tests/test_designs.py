"""The design registry: every family is one complete module, and no dispatch falls back."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from causalverify.designs import DESIGNS, CodeHints, build_registry, check_design
from causalverify.estimators import (
    PUBLISHED_LAYOUT,
    REQUIRED_COLUMNS,
    canonical,
    canonical_inference,
)
from causalverify.extraction._terms import code_hints, term_score
from causalverify.families import FAMILIES, MODERN_FAMILIES, Family
from causalverify.reference import write_response
from causalverify.scenarios.dgp import COLUMNS, generate
from causalverify.scenarios.modern import naive_answer
from causalverify.scenarios.text import render_text
from causalverify.scoring import conversions_for


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_is_one_complete_design(family: Family) -> None:
    """Each family's module provides every piece, and each piece works on the family's data."""
    design = DESIGNS[family]
    assert design.family == family
    check_design(design)
    # one layout: the generator writes it, the estimators read it, the text describes it
    assert COLUMNS[family] is design.columns
    assert PUBLISHED_LAYOUT[family] is design.columns
    assert REQUIRED_COLUMNS[family] is design.required_columns
    group = design.groups[0]
    data = generate(family, dict(group.params), group.betas[0], np.random.default_rng(7))
    assert tuple(data.columns) == design.columns
    result = canonical(data, family)
    assert math.isfinite(result.estimate) and result.se > 0
    inference = canonical_inference(data, family)
    if design.inference is not None:
        assert inference is not None and inference.reference in inference.ses
    else:
        assert inference is None
    text = render_text(family, dict(group.params), ordinal=0, suite_seed=1)
    assert tuple(text.columns) == design.columns
    assert text.title in {getattr(t, "title", None) for t in design.topics}
    stated = SimpleNamespace(
        id="s001",
        facts=text.facts,
        data_description=text.data_description,
        conversions=text.conversions,
    )
    assert design.check(stated, data) == []
    answer = write_response("textbook", _Brief(family, text.facts), language="r", protocol="paper")
    assert design.prose.identification in answer
    assert design.r_code.descriptions["textbook"] in answer
    if family in MODERN_FAMILIES:
        naive = naive_answer(family, data)
        assert math.isfinite(naive) and naive != result.estimate
        assert design.analyses is not None and design.analyses.defensible
        assert design.naive_answer in [a.compute for a in design.analyses.mistakes]
    else:
        assert design.naive_answer is None and design.analyses is None
        with pytest.raises(KeyError, match="no naive answer"):
            naive_answer(family, data)
    # some printed term is the effect, the intercept never is
    scores = [term_score(t, family, CodeHints()) for t in _EFFECT_TERMS[family]]
    assert any(s is not None for s in scores), scores
    assert term_score("(Intercept)", family, CodeHints()) is None


@dataclasses.dataclass(frozen=True)
class _Brief:
    family: Family
    facts: dict[str, Any]
    id: str = "s001"
    data_file: str = "data/s001.csv"


_EFFECT_TERMS: dict[str, tuple[str, ...]] = {
    "did": ("treat_x_post", "treated:post"),
    "event_study": ("post", "event_window"),
    "iv": ("x", "fit_x"),
    "rdd": ("treated", "treatedTRUE"),
    "staggered_did": ("ATT", "overall"),
    "fuzzy_rdd": ("took_up", "fit_took_up"),
    "synthetic_control": ("ATT", "gap"),
}


def test_a_missing_family_or_piece_fails_the_registry() -> None:
    designs = list(DESIGNS.values())
    assert dict(build_registry(designs)) == dict(DESIGNS)
    with pytest.raises(KeyError, match="'rdd' has no module"):
        build_registry(d for d in designs if d.family != "rdd")
    with pytest.raises(ValueError, match="two designs"):
        build_registry([*designs, DESIGNS["iv"]])
    with pytest.raises(KeyError, match="has no topics"):
        build_registry(
            dataclasses.replace(d, topics=()) if d.family == "iv" else d for d in designs
        )
    with pytest.raises(KeyError, match="has no judge_target"):
        check_design(dataclasses.replace(DESIGNS["synthetic_control"], judge_target=""))
    with pytest.raises(KeyError, match="has no naive_answer"):
        check_design(dataclasses.replace(DESIGNS["fuzzy_rdd"], naive_answer=None))
    with pytest.raises(KeyError, match="not in its layout"):
        check_design(dataclasses.replace(DESIGNS["did"], columns=("unit_id", "period", "y")))


def test_no_dispatch_falls_back_to_another_family() -> None:
    """An unknown family is an error, not the IV scoring or the synthetic-control answer."""
    unknown = "matching"
    data = pd.DataFrame({"x": [1.0]})
    with pytest.raises(KeyError):
        term_score("x", unknown, CodeHints())  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        code_hints("x <- 1", unknown)  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        naive_answer(unknown, data)  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        render_text(unknown, {}, ordinal=0, suite_seed=0)  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        generate(unknown, {}, 0.1, np.random.default_rng(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_scales_an_estimate_may_be_reported_on_are_the_designs(family: Family) -> None:
    """Scoring accepts the scales the design names (the event study's cumulative multiples),
    and only k = 1 for a design whose estimate has one scale."""
    scales = DESIGNS[family].scales
    paper = conversions_for(family, "paper", {"per_day": 1, "cumulative_0_10": 11})
    default = conversions_for(family, "default", {})
    if scales is None:
        assert paper == default == [(None, 1)]
        return
    assert paper == [(f"k={k}", k) for k in scales.multiples]
    assert default == sorted(scales.default.items())
    text = DESIGNS[family].render_text(
        dict(DESIGNS[family].groups[0].params), ordinal=0, suite_seed=0
    )
    assert set(text.conversions.values()) <= set(scales.multiples)


def test_the_event_study_is_reported_per_day_or_cumulated_over_up_to_11_days() -> None:
    scales = DESIGNS["event_study"].scales
    assert scales is not None and scales.event_windows
    assert scales.multiples == tuple(range(1, 12)) and dict(scales.default) == {"per_day": 1}
    assert [f for f in FAMILIES if DESIGNS[f].scales is not None] == ["event_study"]

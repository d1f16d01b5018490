"""Property tests: the canonical estimates transform as the estimands do."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import estimators_synth as synth
from causalverify.estimators import canonical
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import Family

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**32 - 1)

#: the outcome column of each family
OUTCOME: dict[Family, str] = {"did": "y", "event_study": "ret", "iv": "y", "rdd": "y"}


@SETTINGS
@given(seed=seeds, family=st.sampled_from(FAMILIES))
def test_row_order_does_not_matter(seed: int, family: Family) -> None:
    data = synth.GENERATORS[family](seed % 1000)
    shuffled = data.sample(frac=1.0, random_state=np.random.default_rng(seed))
    a, b = canonical(data, family), canonical(shuffled, family)
    assert b.estimate == pytest.approx(a.estimate, abs=1e-12)
    assert b.se == pytest.approx(a.se, rel=1e-9)
    assert b.n == a.n


@SETTINGS
@given(
    seed=seeds,
    family=st.sampled_from(FAMILIES),
    scale=st.floats(min_value=0.1, max_value=10.0) | st.floats(min_value=-10.0, max_value=-0.1),
)
def test_scaling_the_outcome_scales_estimate_and_se(
    seed: int, family: Family, scale: float
) -> None:
    data = synth.GENERATORS[family](seed % 1000)
    column = OUTCOME[family]
    scaled = data.assign(**{column: data[column] * scale})
    a, b = canonical(data, family), canonical(scaled, family)
    assert b.estimate == pytest.approx(scale * a.estimate, rel=1e-9, abs=1e-12)
    assert b.se == pytest.approx(abs(scale) * a.se, rel=1e-9)


@SETTINGS
@given(seed=seeds)
def test_did_ignores_unit_and_period_shifts(seed: int) -> None:
    data = synth.did(seed % 1000)
    rng = np.random.default_rng(seed)
    unit_shift = pd.Series(rng.normal(0, 5, data["unit_id"].max() + 1))
    period_shift = pd.Series(rng.normal(0, 5, data["period"].max() + 1))
    shifted = data.assign(
        y=data["y"]
        + unit_shift[data["unit_id"]].to_numpy()
        + period_shift[data["period"]].to_numpy()
    )
    a, b = canonical(data, "did"), canonical(shifted, "did")
    assert b.estimate == pytest.approx(a.estimate, abs=1e-9)
    assert b.se == pytest.approx(a.se, rel=1e-7)


@SETTINGS
@given(seed=seeds, effect=st.floats(min_value=-2.0, max_value=2.0))
def test_adding_a_known_effect_moves_the_estimate_by_it(seed: int, effect: float) -> None:
    data = synth.rdd(seed % 1000)
    moved = data.assign(y=data["y"] + effect * data["treated"])
    a, b = canonical(data, "rdd"), canonical(moved, "rdd")
    assert b.estimate == pytest.approx(a.estimate + effect, abs=1e-9)
    assert b.se == pytest.approx(a.se, rel=1e-7)

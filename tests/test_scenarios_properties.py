"""Property tests: for any seed, generated data have the stated structure and a finite canonical."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causalverify.estimators import canonical
from causalverify.scenarios.dgp import COLUMNS, generate, read_csv_bytes, scenario_rng, to_csv_bytes
from causalverify.scenarios.grid import DEFAULT_GRID, GridEntry

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
seeds = st.integers(min_value=0, max_value=2**63 - 1)
entries = st.sampled_from(DEFAULT_GRID)
attempts = st.integers(min_value=0, max_value=5)


def _draw(entry: GridEntry, seed: int, index: int, attempt: int) -> pd.DataFrame:
    rng = scenario_rng(seed, index, attempt)
    frame = generate(entry.family, entry.params_dict(), entry.beta, rng)
    return read_csv_bytes(to_csv_bytes(frame))


def _structure(entry: GridEntry, data: pd.DataFrame) -> None:
    p = entry.params_dict()
    assert tuple(data.columns) == COLUMNS[entry.family]
    assert all(pd.api.types.is_numeric_dtype(data[c]) for c in data.columns)
    assert not data.isna().any().any()
    if entry.family == "did":
        n, t = int(p["n_units"]), int(p["n_periods"])
        assert len(data) == n * t
        assert (data.groupby("unit_id")["period"].nunique() == t).all()
        assert data["unit_id"].nunique() == n
        assert (data["treated"] == (data["unit_id"] < n // 2)).all()
        assert (data["post"] == (data["period"] >= t // 2 + 1)).all()
        for col in ("unit_id", "period", "treated", "post", "treat_x_post"):
            assert pd.api.types.is_integer_dtype(data[col])
    elif entry.family == "event_study":
        n = int(p["n_stocks"])
        assert len(data) == n * 21
        assert (data.groupby("stock_id")["event_day"].agg(list) == [list(range(-10, 11))] * n).all()
    elif entry.family == "iv":
        assert len(data) == int(p["n"]) and set(data["z"].unique()) <= {0, 1}
    else:
        assert len(data) == int(p["n"])
        assert (data["treated"] == (data["running_var"] >= 0.5)).all()
        in_band = (data["running_var"] >= 0.2) & (data["running_var"] <= 0.8)
        assert (data["near_cutoff"] == in_band).all()
        assert ((data["treated"] == 1) == (data["running_var"] >= 0.5)).all()


@SETTINGS
@given(entry=entries, seed=seeds, index=st.integers(1, 10_000), attempt=attempts)
def test_any_seed_gives_the_stated_structure(
    entry: GridEntry, seed: int, index: int, attempt: int
) -> None:
    _structure(entry, _draw(entry, seed, index, attempt))


@SETTINGS
@given(entry=entries, seed=seeds, index=st.integers(1, 10_000))
def test_any_seed_gives_a_finite_canonical(entry: GridEntry, seed: int, index: int) -> None:
    result = canonical(_draw(entry, seed, index, 0), entry.family)
    assert math.isfinite(result.estimate) and math.isfinite(result.se) and result.se > 0


@SETTINGS
@given(entry=entries, seed=seeds)
def test_generation_is_a_function_of_the_seed(entry: GridEntry, seed: int) -> None:
    a, b = _draw(entry, seed, 1, 0), _draw(entry, seed, 1, 0)
    pd.testing.assert_frame_equal(a, b)
    assert np.isfinite(a.to_numpy(dtype=float)).all()

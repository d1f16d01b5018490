"""Unit tests of causalverify.estimators: results, errors, determinism."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import causalverify.estimators as est
import estimators_synth as synth
from causalverify.errors import SuiteError
from causalverify.estimators import (
    PUBLISHED_LAYOUT,
    REQUIRED_COLUMNS,
    CanonicalResult,
    canonical,
)
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import Family
from estimators_reference import needs_reference, published_cases


def test_public_api_is_all() -> None:
    public = {name for name in dir(est) if not name.startswith("_")}
    modules = {"closed_form", "layout", "annotations"}
    assert public - modules == set(est.__all__)


@pytest.mark.parametrize("family", FAMILIES)
def test_result_is_frozen_and_complete(family: Family) -> None:
    result = canonical(synth.GENERATORS[family](3), family)
    assert isinstance(result, CanonicalResult)
    assert math.isfinite(result.estimate) and result.se > 0
    assert result.profile == "paper"
    assert dict(result.versions)["numpy"] == np.__version__
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.estimate = 0.0  # type: ignore[misc]


def test_versions_name_the_package_that_estimates() -> None:
    names = {f: dict(canonical(synth.GENERATORS[f](0), f).versions) for f in FAMILIES}
    assert "pyfixest" in names["did"]
    assert "statsmodels" in names["event_study"] and "statsmodels" in names["rdd"]
    assert "linearmodels" in names["iv"]


@pytest.mark.parametrize("family", FAMILIES)
def test_same_data_gives_bit_identical_result(family: Family) -> None:
    data = synth.GENERATORS[family](7)
    first = canonical(data, family)
    again = canonical(data.copy(), family)
    assert first == again
    assert first.estimate.hex() == again.estimate.hex()


@pytest.mark.parametrize(
    ("family", "beta"), [("did", 0.3), ("event_study", -0.02), ("iv", 0.4), ("rdd", 0.25)]
)
def test_estimate_recovers_effect_in_large_sample(family: Family, beta: float) -> None:
    sizes = {
        "did": {"units": 400},
        "event_study": {"stocks": 300},
        "iv": {"n": 20000},
        "rdd": {"n": 20000},
    }
    data = synth.GENERATORS[family](11, **sizes[family])  # type: ignore[operator]
    result = canonical(data, family)
    assert abs(result.estimate - beta) < 4 * result.se


def test_rdd_uses_only_rows_near_the_cutoff() -> None:
    data = synth.rdd(5)
    result = canonical(data, "rdd")
    assert result.n == int(data["near_cutoff"].sum()) < len(data)
    # Rows outside the bandwidth must not matter.
    far = data["near_cutoff"] == 0
    changed = data.assign(y=np.where(far, data["y"] + 100.0, data["y"]))
    assert canonical(changed, "rdd").estimate == result.estimate


def test_event_indicator_starts_on_event_day_zero() -> None:
    data = synth.event_study(2)
    shifted = data.assign(event_day=data["event_day"] + 1)
    assert canonical(shifted, "event_study").estimate != canonical(data, "event_study").estimate


def test_string_identifiers_give_the_same_estimate() -> None:
    data = synth.did(4)
    named = data.assign(unit_id="u" + data["unit_id"].astype(str))
    a, b = canonical(data, "did"), canonical(named, "did")
    assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
    assert a.se == pytest.approx(b.se, rel=1e-12)


@pytest.mark.parametrize("family", FAMILIES)
def test_missing_column_names_column_and_layout(family: Family) -> None:
    data = synth.GENERATORS[family](1)
    for col in REQUIRED_COLUMNS[family]:
        with pytest.raises(SuiteError) as info:
            canonical(data.drop(columns=col), family)
        message = str(info.value)
        assert repr(col) in message
        assert ", ".join(PUBLISHED_LAYOUT[family]) in message


def test_extra_columns_are_ignored() -> None:
    data = synth.iv(1)
    assert canonical(data.assign(extra="x"), "iv") == canonical(data, "iv")


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda d: d.assign(y=d["y"].astype(str)), "must be numeric"),
        (lambda d: d.assign(x=d["x"].where(d.index != 3)), "missing or non-finite"),
        (lambda d: d.iloc[0:0], "no rows"),
    ],
)
def test_malformed_values_raise_suite_error(mutate, fragment: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SuiteError, match=fragment):
        canonical(mutate(synth.iv(1)), "iv")


def test_missing_identifier_raises() -> None:
    data = synth.did(1).astype({"unit_id": "float"})
    data.loc[5, "unit_id"] = np.nan
    with pytest.raises(SuiteError, match="'unit_id' has missing values"):
        canonical(data, "did")


def test_rdd_without_rows_in_bandwidth_raises() -> None:
    data = synth.rdd(1).assign(near_cutoff=0)
    with pytest.raises(SuiteError, match="near_cutoff == 1"):
        canonical(data, "rdd")


def test_did_without_treatment_variation_raises() -> None:
    data = synth.did(1).assign(treat_x_post=0)
    with pytest.raises(SuiteError, match="collinear"):
        canonical(data, "did")


def test_unknown_profile_and_family_raise_value_error() -> None:
    data = synth.did(1)
    with pytest.raises(ValueError, match="profile"):
        canonical(data, "did", profile="default")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="design family"):
        canonical(data, "DID")  # type: ignore[arg-type]


def test_result_is_plain_python_types() -> None:
    result = canonical(synth.event_study(1), "event_study")
    assert type(result.estimate) is float and type(result.se) is float
    assert type(result.n) is int
    assert isinstance(pd.Series([result.estimate]).iloc[0], float)


@pytest.mark.slow
@needs_reference
def test_bit_identical_across_processes() -> None:
    """Fresh processes allocate at other addresses; the results must not depend on that."""
    script = (
        "import sys, pandas as pd\n"
        "from causalverify.estimators import canonical\n"
        "for family, path in zip(sys.argv[1::2], sys.argv[2::2]):\n"
        "    r = canonical(pd.read_csv(path), family)\n"
        "    print(family, r.estimate.hex(), r.se.hex(), r.n)\n"
    )
    args: list[str] = []
    for case in published_cases():
        args += [case.family, str(case.path)]
    runs = {
        subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=180,
            check=True,
        ).stdout
        for _ in range(2)
    }
    assert len(runs) == 1
    assert len(next(iter(runs)).splitlines()) == 15

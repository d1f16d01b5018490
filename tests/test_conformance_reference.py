"""Conformance of the ``paper`` profile with the published release's canonical values.

The published values (dgp_verification.json, ``results[].estimated`` and ``standard_error``) are
rounded to 6 decimals, so agreement is checked with an absolute tolerance of half a unit in the
last place.
"""

from __future__ import annotations

import pandas as pd
import pytest

from causalverify.estimators import canonical
from estimators_reference import Published, needs_reference, published_cases

HALF_ULP_6DP = 5e-7
CASES = published_cases()
pytestmark = needs_reference


def test_every_family_is_covered() -> None:
    assert len(CASES) == 15
    assert {c.family for c in CASES} == {"did", "event_study", "iv", "rdd"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.scenario_id)
def test_estimate_matches_published(case: Published) -> None:
    result = canonical(pd.read_csv(case.path), case.family)
    assert abs(result.estimate - case.estimated) <= HALF_ULP_6DP


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.scenario_id)
def test_standard_error_matches_published(case: Published) -> None:
    result = canonical(pd.read_csv(case.path), case.family)
    assert abs(result.se - case.standard_error) <= HALF_ULP_6DP


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.scenario_id)
def test_observation_count(case: Published) -> None:
    data = pd.read_csv(case.path)
    result = canonical(data, case.family)
    assert len(data) == case.n_observations
    # The RDD estimate uses only the rows inside the bandwidth; others use every row.
    expected = int(data["near_cutoff"].sum()) if case.family == "rdd" else len(data)
    assert result.n == expected

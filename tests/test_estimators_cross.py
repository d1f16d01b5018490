"""Two independent Python implementations of the ``paper`` estimators agree to 1e-10."""

from __future__ import annotations

import pandas as pd
import pytest

import estimators_synth as synth
from causalverify.estimators import canonical
from causalverify.estimators.closed_form import closed_form
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import Family
from estimators_reference import Published, needs_reference, published_cases

TOL = 1e-10


def _agree(data: pd.DataFrame, family: Family) -> None:
    primary, independent = canonical(data, family), closed_form(data, family)
    assert primary.estimate == pytest.approx(independent.estimate, abs=TOL, rel=TOL)
    # Same variance estimator in both: the SEs agree to the same precision.
    assert primary.se == pytest.approx(independent.se, rel=TOL)
    assert primary.n == independent.n


@needs_reference
@pytest.mark.parametrize("case", published_cases(), ids=lambda c: c.scenario_id)
def test_agree_on_reference_csvs(case: Published) -> None:
    _agree(pd.read_csv(case.path), case.family)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("family", FAMILIES)
def test_agree_on_synthetic_data(family: Family, seed: int) -> None:
    _agree(synth.GENERATORS[family](seed), family)


@pytest.mark.parametrize("seed", [0, 1])
def test_agree_on_unbalanced_panel(seed: int) -> None:
    _agree(synth.did_unbalanced(seed), "did")


def test_closed_form_detects_rank_deficiency() -> None:
    from causalverify.errors import SuiteError

    with pytest.raises(SuiteError, match="rank deficient"):
        closed_form(synth.iv(0).assign(z=0), "iv")

"""Known-answer tests of rates, intervals, rank agreement and the bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from analysis_helpers import cell, ranked_panel
from causalverify.analysis import (
    IntervalSettings,
    add_unit,
    analyze_cells,
    bootstrap_rank_ci,
    compare_rankings,
    conditional_pass,
    executed_wrong,
    kendall_spearman,
    pairwise_accuracy,
    prepare_cells,
    rank_units,
    rates_by_unit,
    rates_by_unit_family,
    wilson_interval,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (3, 7), (66, 426), (1, 1), (50, 100)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    lo, hi = wilson_interval(k, n)
    ref_lo, ref_hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref_lo, abs=1e-12)
    assert hi == pytest.approx(ref_hi, abs=1e-12)


def test_wilson_empty_and_invalid() -> None:
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def _small_table() -> pd.DataFrame:
    rows = [
        # model A: 4 cells, 3 executed, 2 right; a fifth scenario is unscoreable
        cell("s1", "A", layers="1111", rel_error=0.1, estimated=0.22),
        cell("s2", "A", layers="1111", rel_error=0.3, estimated=0.26),
        cell("s3", "A", method="IV", layers="1110", rel_error=0.9, estimated=0.38),
        cell("s4", "A", method="IV", layers="1100"),
        {**cell("s5", "A", method="IV", layers="111x", canonical=0.0), "unscoreable": 1},
        # model B: 5 cells, 1 right, one without code, one without a response
        cell("s1", "B", layers="1111", rel_error=0.0, estimated=0.2),
        cell("s2", "B", layers="1000", status="no_code"),
        cell("s3", "B", method="IV", layers="0000", status="no_response"),
        cell("s4", "B", method="IV", layers="1110", estimated=math.nan),
        cell("s5", "B", method="IV", layers="1110", rel_error=4.0, estimated=1.0),
    ]
    return add_unit(prepare_cells(pd.DataFrame(rows)), "model")


def test_rates_and_denominators_by_hand() -> None:
    rates = rates_by_unit(_small_table())
    a, b = rates["A"], rates["B"]
    assert (a["L1"].k, a["L1"].n) == (5, 5)
    assert (a["L2b"].k, a["L2b"].n) == (4, 5)  # the unscoreable cell still counts for L2b
    assert (a["L2b_plus"].k, a["L2b_plus"].n) == (2, 4)  # ... but not for L2b+
    assert (b["L1"].k, b["L2a"].k, b["L2b"].k, b["L2b_plus"].k) == (4, 3, 3, 1)
    assert b["L2b_plus"].rate == pytest.approx(0.2)
    wilson = rates_by_unit(_small_table(), settings=IntervalSettings(method="wilson"))
    assert (wilson["A"]["L2b_plus"].lo, wilson["A"]["L2b_plus"].hi) == wilson_interval(2, 4)


def test_conditional_pass_and_executed_wrong_by_hand() -> None:
    table = _small_table()
    cond = conditional_pass(table)
    assert (cond["A"].k, cond["A"].n) == (2, 3)
    assert (cond["B"].k, cond["B"].n) == (1, 3)
    wrong = executed_wrong(table)
    assert (wrong["A"].k, wrong["A"].n) == (1, 3)
    assert (wrong["B"].k, wrong["B"].n) == (2, 3)  # includes the cell with no estimate
    assert (wrong["__all__"].k, wrong["__all__"].n) == (3, 6)


def test_family_rates_by_hand() -> None:
    fam = rates_by_unit_family(_small_table())
    assert (fam["A"]["DID"]["L2b_plus"].k, fam["A"]["DID"]["L2b_plus"].n) == (2, 2)
    assert (fam["A"]["IV"]["L2b_plus"].k, fam["A"]["IV"]["L2b_plus"].n) == (0, 2)
    assert fam["B"]["IV"]["L1"].rate == pytest.approx(2 / 3)


def test_rank_statistics_match_scipy_with_ties() -> None:
    x = np.array([0.9, 0.8, 0.8, 0.5, 0.3, 0.1])
    y = np.array([0.85, 0.6, 0.7, 0.5, 0.2, 0.25])
    tau, tau_p, rho, rho_p = kendall_spearman(x, y)
    ref_tau = stats.kendalltau(x, y)
    ref_rho = stats.spearmanr(x, y)
    assert tau == pytest.approx(ref_tau.statistic)
    assert tau_p == pytest.approx(ref_tau.pvalue)
    assert rho == pytest.approx(ref_rho.statistic)
    assert rho_p == pytest.approx(ref_rho.pvalue)
    # by hand: 15 pairs, 13 concordant, 1 discordant, 1 tied in x -> tau-b = 12 / sqrt(14 * 15)
    assert tau == pytest.approx(12 / math.sqrt(14 * 15))


def test_ranking_with_itself_is_perfect() -> None:
    rates = {"a": 0.9, "b": 0.4, "c": 0.7, "d": 0.1}
    cmp = compare_rankings(rates, rates)
    assert cmp.kendall_tau == pytest.approx(1.0)
    assert cmp.spearman_rho == pytest.approx(1.0)
    assert cmp.pairwise_accuracy == 1.0
    assert cmp.top1_match and cmp.top2_match and cmp.bottom2_match


def test_pairwise_accuracy_by_hand() -> None:
    assert pairwise_accuracy(np.array([3.0, 2, 1]), np.array([3.0, 1, 2])) == pytest.approx(2 / 3)
    assert pairwise_accuracy(np.array([1.0, 1, 0]), np.array([2.0, 1, 0])) == pytest.approx(2.5 / 3)
    assert math.isnan(pairwise_accuracy(np.array([1.0, 2]), np.array([1.0, 1])))


def test_ranks_average_ties_and_reverse_order() -> None:
    assert rank_units({"a": 0.5, "b": 0.9, "c": 0.5}) == {"a": 2.5, "b": 1.0, "c": 2.5}
    cmp = compare_rankings({"a": 0.1, "b": 0.2, "c": 0.3}, {"a": 0.3, "b": 0.2, "c": 0.1})
    assert cmp.kendall_tau == pytest.approx(-1.0)
    assert not cmp.top1_match


def test_degenerate_rankings_are_nan_not_errors() -> None:
    one = compare_rankings({"a": 0.5}, {"a": 0.7})
    assert math.isnan(one.kendall_tau) and math.isnan(one.spearman_rho)
    flat = compare_rankings({"a": 0.5, "b": 0.5, "c": 0.5}, {"a": 0.1, "b": 0.2, "c": 0.3})
    assert math.isnan(flat.kendall_tau) and math.isnan(flat.kendall_p)
    assert flat.top2_match is None  # all tied: the top-two set is ambiguous


def test_bootstrap_is_deterministic_per_seed() -> None:
    table = add_unit(
        prepare_cells(ranked_panel([0.8, 0.75, 0.7, 0.6, 0.55, 0.5, 0.4], seed=3)), "model"
    )
    first = bootstrap_rank_ci(table, rng=np.random.default_rng(7), n_resamples=200)
    again = bootstrap_rank_ci(table, rng=np.random.default_rng(7), n_resamples=200)
    other = bootstrap_rank_ci(table, rng=np.random.default_rng(8), n_resamples=200)
    assert first == again
    assert first["L2b"]["n_valid"] == 200
    lo, hi = first["L2b"]["kendall_tau"]  # type: ignore[misc]
    assert -1.0 <= lo <= hi <= 1.0
    assert first["L2b"] != other["L2b"]


def test_bootstrap_resamples_whole_scenarios() -> None:
    # Two models that agree on every scenario: any scenario resample keeps them tied in every
    # layer, so no resample can define tau.
    rows = [cell(f"s{i}", m, layers=f"11{i % 2}{i % 2}") for i in range(10) for m in ("a", "b")]
    table = add_unit(prepare_cells(pd.DataFrame(rows)), "model")
    out = bootstrap_rank_ci(table, rng=np.random.default_rng(0), n_resamples=50)
    assert out["L2b"]["n_valid"] == 0


def test_summary_invariant_to_row_order() -> None:
    table = ranked_panel([0.9, 0.6, 0.4], n_scenarios=24, seed=5)
    shuffled = table.sample(frac=1.0, random_state=11)
    a = analyze_cells(table, n_resamples=100, seed=1)
    b = analyze_cells(shuffled, n_resamples=100, seed=1)
    assert a == b


def test_model_language_unit_ranks_pairs() -> None:
    rows = [cell("s1", "m", language="r"), cell("s1", "m", language="python", layers="1100")]
    rows += [cell("s2", "m", language="r"), cell("s2", "m", language="python", layers="1110")]
    pooled = analyze_cells(pd.DataFrame(rows), n_resamples=10)
    split = analyze_cells(pd.DataFrame(rows), n_resamples=10, unit="model_language")
    assert pooled["units"] == ["m"]
    assert pooled["rates"]["m"]["L2b"] == pytest.approx(0.75)
    assert split["units"] == ["m (python)", "m (r)"]
    assert split["rates"]["m (python)"]["L2b"] == pytest.approx(0.5)
    assert split["rates"]["m (r)"]["L2b_plus"] == pytest.approx(1.0)


def test_single_model_summary_has_nulls() -> None:
    rows = [cell(f"s{i}", "only", layers="111" + str(i % 2)) for i in range(6)]
    summary = analyze_cells(pd.DataFrame(rows), n_resamples=20)
    corr = summary["rank_correlation"]["L2b"]
    assert corr["kendall_tau"] is None and corr["spearman_rho"] is None
    assert corr["bootstrap_ci"]["kendall_tau"] == [None, None]
    assert summary["rates"]["only"]["L2b_plus"] == pytest.approx(0.5)


def test_missing_required_column_is_a_clear_error() -> None:
    from causalverify.analysis import CellsFormatError

    with pytest.raises(CellsFormatError, match="L2b"):
        prepare_cells(pd.DataFrame([{"scenario_id": "s1", "method": "DID", "model": "a"}]))
    with pytest.raises(CellsFormatError, match="family"):
        prepare_cells(pd.DataFrame([{**cell("s1", "a"), "method": "SYNTH_CONTROL"}]))

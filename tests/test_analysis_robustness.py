"""Tolerance sweep, leave-one-out, drop-one-family and the failure taxonomy, on hand-made tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis_helpers import cell
from causalverify.analysis import (
    add_unit,
    analyze_cells,
    classify_cell,
    drop_one_family,
    leave_one_unit_out,
    prepare_cells,
    rel_error_profile,
    taxonomy,
    tolerance_sweep,
    wrong_kind,
)


def _frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    return add_unit(prepare_cells(pd.DataFrame(rows)), "model")


def _executed(sid: str, model: str, err: float) -> dict[str, object]:
    if math.isnan(err):
        return cell(sid, model, layers="1110")
    return cell(sid, model, layers="111" + str(int(err <= 0.5)), rel_error=err, estimated=0.2)


def _sweep_table() -> pd.DataFrame:
    a_errs = [0.05, 0.2, 0.3, 0.6, 0.9, math.nan, 2.0]
    b_errs = [0.08, 0.4, 0.8, 0.95]
    rows = [_executed(f"s{i}", "A", e) for i, e in enumerate(a_errs)]
    rows.append(cell("s7", "A", layers="1100"))
    rows += [_executed(f"s{i}", "B", e) for i, e in enumerate(b_errs)]
    rows += [cell(f"s{i}", "B", layers="1100") for i in (4, 5, 6)]
    return _frame(rows)


def test_tolerance_sweep_counts_by_hand() -> None:
    sweep = tolerance_sweep(_sweep_table())
    assert list(sweep) == ["0.1", "0.25", "0.5", "0.75", "1.0"]
    assert [sweep[t]["passes"] for t in sweep] == [
        {"A": 1, "B": 1},
        {"A": 2, "B": 1},
        {"A": 3, "B": 2},
        {"A": 4, "B": 2},
        {"A": 5, "B": 4},
    ]
    assert [sweep[t]["executed_wrong"] for t in sweep] == [9, 8, 6, 5, 2]
    assert all(sweep[t]["executed"] == 11 for t in sweep)
    # A: 1/8 < B: 1/7 at 0.10 reverses the order seen at 0.50
    assert [sweep[t]["ranking_identical"] for t in sweep] == [False, True, True, True, True]


def test_sweep_boundary_is_inclusive() -> None:
    table = _frame([_executed("s1", "A", 0.5), _executed("s2", "A", 0.10)])
    sweep = tolerance_sweep(table, tolerances=(0.1, 0.5))
    assert sweep["0.1"]["passes"] == {"A": 1}
    assert sweep["0.5"]["passes"] == {"A": 2}


def _loo_table() -> pd.DataFrame:
    # L2b / L2b+ per model over four scenarios: m0 4/4, 2/4; m1 3/4, 3/4; m2 1/4, 1/4
    layers = {
        "m0": ["1111", "1111", "1110", "1110"],
        "m1": ["1111", "1111", "1111", "1100"],
        "m2": ["1111", "1100", "1100", "1100"],
    }
    return _frame(
        [cell(f"s{i}", m, layers=f) for m, fl in layers.items() for i, f in enumerate(fl)]
    )


def test_leave_one_out_by_hand() -> None:
    loo = leave_one_unit_out(_loo_table())
    assert loo["L2b"]["m0"] == pytest.approx(1.0)
    assert loo["L2b"]["m1"] == pytest.approx(1.0)
    assert loo["L2b"]["m2"] == pytest.approx(-1.0)
    assert math.isnan(loo["L1"]["m0"])  # every model has L1 = 1: undefined, not a crash


def test_drop_one_family_by_hand() -> None:
    plus = {
        "m0": {"DID": "111", "IV": "000"},
        "m1": {"DID": "100", "IV": "111"},
        "m2": {"DID": "100", "IV": "100"},
    }
    rows = []
    for model, fams in plus.items():
        for fam, flags in fams.items():
            for i, flag in enumerate(flags):
                rows.append(cell(f"{fam}{i}", model, method=fam, layers="111" + flag))
    out = drop_one_family(_frame(rows))
    without_did, without_iv = out["DID"], out["IV"]
    assert without_did["kendall_tau"] == pytest.approx(1 / 3)
    assert without_did["ranking_identical"] is False
    assert without_did["top2_preserved"] is False
    assert without_did["bottom2_preserved"] is True
    assert without_iv["kendall_tau"] == pytest.approx(0.0)
    assert without_iv["top2_preserved"] is None  # m1 and m2 tie for second place
    assert without_iv["bottom2_preserved"] is False


@pytest.mark.parametrize(
    ("ratio", "kind"),
    [
        (11.0, "window_scale"),
        (21.3, "window_scale"),
        (100.0, "window_scale"),
        (0.1, "window_scale"),
        (0.5 * 0.98, "window_scale"),
        (2.0, "window_scale"),
        (-1.0, "wrong_sign"),
        (-11.0, "wrong_sign"),
        (2.5, "other_wrong"),
        (0.3, "other_wrong"),
        (1.6, "other_wrong"),
        (40.0, "other_wrong"),
    ],
)
def test_wrong_kind(ratio: float, kind: str) -> None:
    assert wrong_kind(ratio * -0.03, -0.03) == kind


def test_taxonomy_categories_by_hand() -> None:
    rows = [
        cell("s1", "A", layers="0000", status="no_response"),
        cell("s2", "A", layers="1000", status="no_code"),
        cell("s3", "A", layers="1000", status="parse_error"),
        cell("s4", "A", layers="1100", status="missing_package", missing_package="fixest"),
        cell("s5", "A", layers="1100", status="timeout", exec_status="timeout"),
        cell("s6", "A", layers="1100", status="exec_error", exec_status="error"),
        cell("s7", "A", layers="1110", status="no_estimate"),
        cell("s8", "A", layers="1110", estimated=2.2, rel_error=10.0, status="wrong"),
        cell("s9", "A", layers="1110", estimated=-0.2, rel_error=2.0, status="wrong"),
        cell("s10", "A", layers="1110", estimated=0.5, rel_error=1.5, status="wrong"),
        cell("s11", "A", layers="1111", estimated=0.21, rel_error=0.05, status="correct"),
        cell("s12", "A", layers="0000", status="api_error"),
        {**cell("s13", "A", layers="111x", canonical=0.0), "unscoreable": 1},
        cell("s14", "B", layers="1100", exec_status="error", missing_package="rdrobust"),
    ]
    table = _frame(rows)
    cats = [classify_cell(row) for _, row in table.iterrows()]
    by_sid = dict(zip(table["scenario_id"], cats, strict=True))
    assert by_sid["s1"] == "no_response"
    assert by_sid["s12"] == "api_error"
    assert by_sid["s8"] == "window_scale"
    assert by_sid["s9"] == "wrong_sign"
    assert by_sid["s10"] == "other_wrong"
    out = taxonomy(table)
    assert out["overall"] == {
        "api_error": 1,
        "correct": 1,
        "exec:error": 1,
        "exec:missing_package": 2,
        "exec:timeout": 1,
        "no_code": 1,
        "no_estimate": 1,
        "no_response": 1,
        "other_wrong": 1,
        "parse_error": 1,
        "unscoreable": 1,
        "window_scale": 1,
        "wrong_sign": 1,
    }
    assert out["missing_packages"] == {"fixest": 1, "rdrobust": 1}
    assert out["by_unit"]["B"] == {"exec:missing_package": 1}


def test_rel_error_profile_quantiles() -> None:
    rows = [_executed(f"s{i}", "A", e) for i, e in enumerate([0.0, 0.1, 0.2, 0.3, 0.4])]
    rows.append(cell("s9", "A", layers="1100"))
    rows.append(cell("s9", "B", layers="1100"))
    prof = rel_error_profile(_frame(rows))
    assert prof["A"]["n"] == 5
    assert prof["A"]["q50"] == pytest.approx(0.2)
    assert prof["A"]["q25"] == pytest.approx(0.1)
    assert prof["A"]["mean"] == pytest.approx(0.2)
    assert prof["B"]["n"] == 0 and math.isnan(prof["B"]["q50"])


def test_fitted_right_reported_wrong_is_its_own_category_and_counted_per_model() -> None:
    rows = [
        # wrong reported value, but a fitted effect coefficient was within tolerance
        {**cell("s1", "A", layers="1110", estimated=2.2, rel_error=10.0), "fitted_right": 1},
        # nothing extracted, the right model was fitted
        {**cell("s2", "A", layers="1110"), "fitted_right": 1},
        # wrong and no fit was right: a wrong specification
        cell("s3", "A", layers="1110", estimated=0.5, rel_error=1.5),
        # correct stays correct whatever the fits
        {**cell("s4", "A", layers="1111", estimated=0.21, rel_error=0.05), "fitted_right": 1},
        {
            **cell("s5", "B", layers="1110", estimated=0.5, rel_error=1.5),
            "extraction_ambiguous": 1,
            "extraction_rule": "fit_match",
        },
    ]
    table = _frame(rows)
    by_sid = dict(
        zip(table["scenario_id"], (classify_cell(r) for _, r in table.iterrows()), strict=True)
    )
    assert by_sid == {
        "s1": "fitted_right_reported_wrong",
        "s2": "fitted_right_reported_wrong",
        "s3": "other_wrong",
        "s4": "correct",
        "s5": "other_wrong",
    }
    summary = analyze_cells(table.drop(columns="unit"), unit="model", n_resamples=20, seed=1)
    assert summary["taxonomy"]["by_unit"]["A"]["fitted_right_reported_wrong"] == 2
    assert summary["extraction"]["A"] == {
        "executed": 4,
        "ambiguous": 0,
        "fit_match": 0,
        "fitted_right_reported_wrong": 2,
    }
    assert summary["extraction"]["B"]["ambiguous"] == 1
    assert summary["extraction"]["B"]["fit_match"] == 1

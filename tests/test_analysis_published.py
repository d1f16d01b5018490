"""Reading a per-cell table in the published ``causalverify-2026`` layout (synthetic fixture)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from causalverify.analysis import CellsFormatError, analyze_cells, load_published_cells

PUBLISHED_COLUMNS = [
    "scenario_id",
    "method",
    "dgp_effect",
    "dgp_direction",
    "true_effect",
    "true_direction",
    "baseline",
    "baseline_effect",
    "baseline_direction",
    "baseline_source",
    "baseline_available",
    "canonical_status",
    "L1",
    "L2a",
    "L2b",
    "estimated",
    "rel_error",
    "L2b_plus",
    "err_excerpt",
    "model",
    "model_slug",
    "regex_estimated",
    "regex_l2b_plus",
    "judge_effect",
    "judge_rationale",
    "rel_error_judge",
    "L2b_plus_judge",
    "L2b_plus_v2",
    "es_window_match",
    "rel_error_v2",
]


def _row(sid: str, method: str, model: str, canon: float, **values: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(PUBLISHED_COLUMNS, "")
    row.update(
        scenario_id=sid,
        method=method,
        dgp_effect=canon,
        baseline_effect=canon,
        baseline_available=1,
        canonical_status="ok",
        model=model,
        model_slug=model.lower(),
        L1=1,
        L2a=1,
        L2b=1,
        L2b_plus=0,
        L2b_plus_v2=0,
    )
    row.update(values)
    return row


def write_published_fixture(path: Path) -> Path:
    """Two models over four scenarios; the v2 columns differ from the regex ones on purpose."""
    rows = [
        # Alpha: three executed; regex said wrong on s01 but the judge (v2) says right
        _row("s01", "DID", "Alpha", -0.24, estimated=3.0, rel_error=13.5, judge_effect=-0.25,
             rel_error_v2=0.0417, L2b_plus_v2=1),
        _row("s02", "EVENT_STUDY", "Alpha", 0.002, judge_effect=0.022, rel_error_v2=0.0,
             L2b_plus_v2=1, es_window_match="cumulative_0_10"),
        _row("s03", "IV", "Alpha", 0.41, judge_effect=-0.41, rel_error_v2=2.0, L2b_plus_v2=0),
        _row("s04", "RDD", "Alpha", 0.25, L2b=0, err_excerpt="Error in library(rdrobust) : "
             "there is no package called ‘rdrobust’"),
        # Beta: one right, one without code, one failing with a generic error, one no estimate
        _row("s01", "DID", "Beta", -0.24, judge_effect=-0.2, rel_error_v2=0.1667, L2b_plus_v2=1),
        _row("s02", "EVENT_STUDY", "Beta", 0.002, L2a=0, L2b=0),
        _row("s03", "IV", "Beta", 0.41, L2b=0, err_excerpt="Error: object 'x2' not found"),
        _row("s04", "RDD", "Beta", 0.25, rel_error_v2="", L2b_plus_v2=0),
    ]  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=PUBLISHED_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_published_columns_are_normalised(tmp_path: Path) -> None:
    cells = load_published_cells(write_published_fixture(tmp_path / "cells.csv"))
    assert len(cells) == 8
    alpha = cells[cells["model"] == "Alpha"].set_index("scenario_id")
    assert alpha.loc["s01", "L2b_plus"] == 1.0  # headline is L2b_plus_v2, not L2b_plus
    assert alpha.loc["s01", "estimated"] == pytest.approx(-0.25)  # judge value over regex
    assert alpha.loc["s01", "rel_error"] == pytest.approx(0.0417)
    assert alpha.loc["s02", "matched_conversion"] == "cumulative_0_10"
    assert alpha.loc["s04", "missing_package"] == "rdrobust"
    assert alpha.loc["s04", "status"] == "missing_package"
    assert set(cells["method"]) == {"DID", "EVENT_STUDY", "IV", "RDD"}
    assert set(cells["language"]) == {"r"}
    beta = cells[cells["model"] == "Beta"].set_index("scenario_id")
    assert beta.loc["s02", "status"] == "no_code"
    assert beta.loc["s03", "status"] == "exec_error"
    assert beta.loc["s04", "status"] == "no_estimate"
    assert math.isnan(beta.loc["s04", "estimated"])


def test_published_table_numbers_by_hand(tmp_path: Path) -> None:
    cells = load_published_cells(write_published_fixture(tmp_path / "cells.csv"))
    summary = analyze_cells(cells, n_resamples=50)
    assert summary["models"] == ["Alpha", "Beta"]
    assert summary["n_cells"] == 8
    assert summary["rates"]["Alpha"] == {"L1": 1.0, "L2a": 1.0, "L2b": 0.75, "L2b_plus": 0.5}
    assert summary["rates"]["Beta"] == {"L1": 1.0, "L2a": 0.75, "L2b": 0.5, "L2b_plus": 0.25}
    assert summary["conditional_pass"] == {"Alpha": pytest.approx(2 / 3, abs=1e-6), "Beta": 0.5}
    assert summary["executed_wrong"]["count"] == 2
    assert summary["executed_wrong"]["denominator"] == 5
    assert summary["tolerance_sweep"]["0.1"] == {"Alpha": 2, "Beta": 0}
    assert summary["tolerance_sweep"]["0.5"] == {"Alpha": 2, "Beta": 1}
    assert summary["taxonomy"]["overall"]["wrong_sign"] == 1
    assert summary["taxonomy"]["missing_packages"] == {"rdrobust": 1}


def test_not_a_published_table(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("scenario_id,model,L1\ns01,a,1\n", encoding="utf-8")
    with pytest.raises(CellsFormatError, match="L2b_plus_v2"):
        load_published_cells(path)
    with pytest.raises(CellsFormatError, match="cannot read"):
        load_published_cells(tmp_path / "absent.csv")

"""Cell-by-cell comparison logic on small hand-made frames (no run, no sandbox)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from causalverify.published.compare import (
    CompareError,
    compare_frames,
    match_models,
    scenario_number,
    summarize,
)

NAN = math.nan


def ours_row(sid: str, model: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = {
        "scenario_id": sid, "method": "IV", "model": model, "L2a": 1, "L2b": 1,
        "estimated": 0.5, "L2b_plus": 1.0, "baseline_effect": 0.5, "status": "correct",
        "missing_packages": "", "stderr_tail": "", "response_model": None,
    }  # fmt: skip
    row.update(values)
    return row


def theirs_row(sid: str, model: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = {
        "scenario_id": sid, "method": "IV", "model": model, "L2a": 1, "L2b": 1,
        "value": 0.5, "L2b_plus": 1.0, "baseline_effect": 0.5, "err_excerpt": "",
    }  # fmt: skip
    row.update(values)
    return row


def test_every_reason_and_grouping_by_model() -> None:
    ours = pd.DataFrame(
        [
            ours_row("s001", "replay/a:m1"),
            ours_row(
                "s002",
                "replay/a:m1",
                L2a=0,
                L2b=0,
                estimated=NAN,
                L2b_plus=0.0,
                status="parse_error",
            ),
            ours_row(
                "s003",
                "replay/a:m1",
                L2b=0,
                estimated=NAN,
                L2b_plus=0.0,
                status="exec_error",
                stderr_tail="Error: boom",
            ),
            ours_row("s004", "replay/a:m1", L2b_plus=0.0, status="wrong", baseline_effect=2.0),
            ours_row("s005", "replay/a:m1", L2b_plus=0.0, status="wrong"),
            ours_row("s001", "replay/a:m2", estimated=0.9, L2b_plus=0.0, status="wrong"),
            ours_row("s009", "replay/a:m2"),
        ]
    )
    theirs = pd.DataFrame(
        [
            theirs_row("s01", "model-one"),
            theirs_row("s02", "model-one"),
            theirs_row("s03", "model-one", err_excerpt=""),
            theirs_row("s04", "model-one"),
            theirs_row("s05", "model-one"),
            theirs_row("s06", "model-one"),
            theirs_row("s01", "model-two", value=0.5004),
        ]
    )
    comparison = compare_frames(
        ours, theirs, {"replay/a:m1": "model-one", "replay/a:m2": "model-two"}
    )
    cells = comparison.cells
    reasons = {(r.scenario_id, r.published_model): r.reason for r in cells.itertuples()}
    assert reasons == {
        ("s001", "model-one"): "",
        ("s002", "model-one"): "code differs",
        ("s003", "model-one"): "execution differs",
        ("s004", "model-one"): "canonical differs",
        ("s005", "model-one"): "scoring differs",
        ("s001", "model-two"): "extraction differs",
    }
    assert comparison.unmatched_ours == [("s009", "replay/a:m2")]
    assert comparison.unmatched_published == [("s06", "model-one")]
    summary = summarize(comparison)
    assert set(summary["all"]["by_model"]) == {"model-one", "model-two"}
    one = summary["all"]["by_model"]["model-one"]
    assert (one["L2b"]["agree"], one["L2b"]["n"]) == (3, 5)
    # values are compared only where both sides executed
    assert (one["value"]["agree"], one["value"]["n"]) == (3, 3)
    assert summary["reasons"]["execution differs"] == 1
    detail = str(comparison.cells.loc[2, "detail"])
    assert "exec_error (Error: boom)" in detail


def test_value_tolerance_and_unscoreable_cells() -> None:
    ours = pd.DataFrame([ours_row("s1", "m", estimated=0.5049), ours_row("s2", "m", L2b_plus=NAN)])
    theirs = pd.DataFrame([theirs_row("s1", "pub"), theirs_row("s2", "pub", L2b_plus=NAN)])
    loose = compare_frames(ours, theirs, {"m": "pub"}, value_rtol=0.01)
    strict = compare_frames(ours, theirs, {"m": "pub"}, value_rtol=0.001)
    assert list(loose.cells["reason"]) == ["", ""]
    assert list(strict.cells["reason"]) == ["extraction differs", ""]


def test_missing_package_and_installed_only_scope() -> None:
    ours = pd.DataFrame(
        [
            ours_row(
                "s1",
                "m",
                L2b=0,
                estimated=NAN,
                L2b_plus=0.0,
                status="missing_package",
                missing_packages="fixest",
            ),
            ours_row("s2", "m", missing_packages="rdrobust"),  # ran anyway (e.g. optional use)
            ours_row("s3", "m"),
        ]
    )
    theirs = pd.DataFrame(
        [
            theirs_row("s1", "pub"),
            theirs_row("s2", "pub"),
            theirs_row("s3", "pub", L2b=0, value=NAN, L2b_plus=0.0),
        ]
    )
    comparison = compare_frames(ours, theirs, {"m": "pub"})
    assert list(comparison.cells["reason"]) == ["missing package fixest", "", "execution differs"]
    assert list(comparison.cells["installed_only"]) == [False, False, True]
    summary = summarize(comparison)
    assert summary["installed_only"]["overall"]["cells"] == 1
    assert summary["all"]["overall"]["L2b"]["agree"] == 1


def test_model_matching() -> None:
    ours = pd.DataFrame(
        [
            ours_row("s1", "replay/out:gpt4o"),
            ours_row("s1", "replay/other", response_model="claude-x"),
            ours_row("s1", "openai/unknown"),
        ]
    )
    models = pd.DataFrame({"model": ["gpt-4o", "claude-x"], "model_slug": ["gpt4o", "claudex"]})
    assert match_models(ours, models) == {"replay/out:gpt4o": "gpt-4o", "replay/other": "claude-x"}
    assert match_models(ours, models, {"openai/unknown": "gpt-4o"})["openai/unknown"] == "gpt-4o"
    clash = pd.DataFrame({"model": ["gpt-4o", "gpt4o"], "model_slug": ["gpt4o", "x"]})
    with pytest.raises(CompareError, match="matches several published models"):
        match_models(ours.iloc[:1], clash)


def test_scenario_numbers() -> None:
    assert scenario_number("s07") == scenario_number("s007") == 7
    assert scenario_number("s100") == 100
    assert scenario_number("abc") is None

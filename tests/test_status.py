"""The one derivation of a cell's status: the runner, the scorer, calibration, the analysis of a
published table and the Inspect scorer all read it from ``causalverify.records.status``."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from causalverify.analysis import prepare_cells
from causalverify.calibration.elicit import record_from_response
from causalverify.records import (
    CellKey,
    ExecResult,
    ModelResponse,
    answer_status,
    counted_layers,
    execution_status,
    scored_status,
    status_from_layers,
)
from causalverify.runner.engine import answer_status as engine_answer_status
from causalverify.scoring import pre_scoring_status


def _result(status: str, missing: str | None = None) -> ExecResult:
    return ExecResult.model_validate(
        {
            "status": status,
            "exit_code": 1,
            "stdout": "",
            "stderr": "",
            "wall_seconds": 0.1,
            "cpu_seconds": 0.1,
            "missing_package": missing,
        }
    )


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (ModelResponse(content=None, error="HTTP 500"), "api_error"),
        (ModelResponse(content="  \n"), "no_response"),
        (ModelResponse(content=None), "no_response"),
        (ModelResponse(content="```r\n1\n```"), "ok"),
    ],
)
def test_one_reading_of_an_answer_for_runner_engine_and_calibration(
    response: ModelResponse, expected: str
) -> None:
    assert answer_status(response) == expected
    assert engine_answer_status(response) == expected  # the engine re-exports the one function
    key = CellKey(scenario_id="s001", model="m", language="r")
    calibration = record_from_response(key, "default", [], response)
    if expected != "ok":  # calibration names a failed answer as the cell does
        assert calibration.status == expected


@pytest.mark.parametrize(
    ("status", "missing", "expected"),
    [
        ("ok", None, None),
        ("error", None, "exec_error"),
        ("error", "fixest", "missing_package"),
        ("timeout", "fixest", "missing_package"),  # the package is why it failed
        ("cpu_limit", None, "timeout"),
        ("memory_limit", None, "resource_limit"),
        ("killed", None, "resource_limit"),
        ("sandbox_unavailable", None, "exec_error"),
    ],
)
def test_execution_status(status: str, missing: str | None, expected: str | None) -> None:
    assert execution_status(_result(status, missing)) == expected


def test_scored_status_order() -> None:
    assert scored_status("no_code", unscoreable=True, passed=True) == "no_code"
    assert scored_status(None, unscoreable=True, passed=True) == "unscoreable"
    assert scored_status(None, unscoreable=False, passed=None) == "no_estimate"
    assert scored_status(None, unscoreable=False, passed=True) == "correct"
    assert scored_status(None, unscoreable=False, passed=False) == "wrong"


def test_a_published_table_without_status_gets_the_one_derivation() -> None:
    rows = []
    for l1, l2a, l2b, plus, package, estimated in itertools.product(
        (0, 1), (0, 1), (0, 1), (0, 1), ("", "fixest"), (float("nan"), 0.3)
    ):
        rows.append(
            {
                "scenario_id": f"s{len(rows):03d}",
                "method": "DID",
                "model": "m",
                "L1": l1,
                "L2a": l2a,
                "L2b": l2b,
                "L2b_plus": plus,
                "missing_package": package,
                "estimated": estimated,
                "baseline_effect": 1.0 if len(rows) % 7 else 0.0,  # every 7th is unscoreable
            }
        )
    frame = prepare_cells(pd.DataFrame(rows))
    for row in frame.itertuples(index=False):
        expected = status_from_layers(
            L1=row.L1 == 1,
            L2a=row.L2a == 1,
            L2b=row.L2b == 1,
            L2b_plus=row.L2b_plus == 1,
            unscoreable=row.unscoreable == 1,
            missing_package=row.missing_package != "",
            estimated=not pd.isna(row.estimated),
        )
        assert row.status == expected
    # spot checks of the rule itself
    assert set(frame.loc[frame["unscoreable"] == 1, "status"]) == {"unscoreable"}
    executed = frame[(frame["unscoreable"] == 0) & (frame["L1"] == 1) & (frame["L2a"] == 1)]
    failed = executed[executed["L2b"] == 0]
    assert set(failed["status"]) == {"exec_error", "missing_package"}
    ran = executed[executed["L2b"] == 1]
    assert set(ran.loc[ran["L2b_plus"] == 1, "status"]) == {"correct"}
    assert set(ran.loc[(ran["L2b_plus"] == 0) & ran["estimated"].isna(), "status"]) == {
        "no_estimate"
    }


def test_pre_scoring_status_reads_the_answer_as_the_runner_does() -> None:
    from causalverify.records import CellRecord

    record = CellRecord.model_validate(
        {
            "key": {"scenario_id": "s001", "model": "m", "language": "r"},
            "family": "did",
            "difficulty": "easy",
            "beta": 1.0,
            "canonical": 1.0,
            "protocol": "default",
            "prompt": [],
            "prompt_sha256": "0" * 64,
            "response": {"content": None, "error": "HTTP 500"},
            "status": "api_error",
        }
    )
    assert pre_scoring_status(record) == "api_error"
    empty = record.model_copy(update={"response": ModelResponse(content=" ")})
    assert pre_scoring_status(empty) == "no_response"
    answered = record.model_copy(update={"response": ModelResponse(content="prose only")})
    assert pre_scoring_status(answered) == "no_code"


def test_counted_layers_leave_out_what_the_report_leaves_out() -> None:
    assert counted_layers("api_error", None) == dict.fromkeys(("L1", "L2a", "L2b", "L2b_plus"))
    assert counted_layers("no_code", None) == dict.fromkeys(("L1", "L2a", "L2b", "L2b_plus"), 0.0)

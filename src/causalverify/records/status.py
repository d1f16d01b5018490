"""The one derivation of a cell's status, and of the layers a cell counts in.

Every layer that names a cell's status reads it here: the runner while it computes a cell, the
scorer when it (re)scores one, calibration and the engine when they read a model's answer, the
analysis when a published per-cell table carries only layer flags, and the Inspect scorer.

The first failing stage names the status: the answer (``api_error``, ``no_response``), the code
(``no_code``, ``parse_error``), the execution (``missing_package``, ``timeout``,
``resource_limit``, ``exec_error``); a cell that executed is ``unscoreable`` (its canonical effect
is too close to zero to score), ``no_estimate``, ``wrong`` or ``correct``.
"""

from __future__ import annotations

from typing import Final, Literal

from causalverify.records.cells import CellRecord, CellStatus, ModelResponse, ScoreRecord
from causalverify.records.execution import ExecResult, ExecStatus

#: the reading of a model's answer: failed for good, empty, or an answer
AnswerStatus = Literal["api_error", "no_response", "ok"]

#: the status of a cell whose execution failed, by execution status
_EXEC_STATUS: Final[dict[ExecStatus, CellStatus]] = {
    "timeout": "timeout",
    "cpu_limit": "timeout",
    "memory_limit": "resource_limit",
    "output_limit": "resource_limit",
    "killed": "resource_limit",
    "error": "exec_error",
    "sandbox_unavailable": "exec_error",
}

#: the layers a cell is scored on, in order
LAYERS: Final[tuple[str, ...]] = ("L1", "L2a", "L2b", "L2b_plus")


def answer_status(response: ModelResponse) -> AnswerStatus:
    """``api_error`` when the call failed for good (no content, an error), ``no_response`` for an
    empty answer, ``ok`` otherwise."""
    if response.content is None and response.error is not None:
        return "api_error"
    return "ok" if (response.content or "").strip() else "no_response"


def execution_status(result: ExecResult) -> CellStatus | None:
    """The failure status of an execution, or None when it ran to the end (``ok``).

    ``missing_package`` when a package the script loads is not installed, ``timeout`` (wall clock
    or CPU), ``resource_limit`` (memory, output, killed), ``exec_error`` otherwise.
    """
    if result.status == "ok":
        return None
    if result.missing_package:
        return "missing_package"
    return _EXEC_STATUS.get(result.status, "exec_error")


def pre_scoring_status(record: CellRecord) -> CellStatus | None:
    """The failure status of a cell that did not execute successfully, or None if it did.

    Order: the answer (:func:`answer_status`), ``no_code``, ``parse_error``, then the execution
    (:func:`execution_status`; a cell with code but no execution is ``exec_error``).
    """
    response = record.response
    answer = answer_status(response) if response is not None else "no_response"
    if answer != "ok":
        return answer
    code = record.code
    if code is None or not (code.code or "").strip():
        return "no_code"
    if not code.parses:
        return "parse_error"
    if record.execution is None:
        return "exec_error"
    return execution_status(record.execution)


def scored_status(
    failure: CellStatus | None, *, unscoreable: bool, passed: bool | None
) -> CellStatus:
    """The status of a scored cell: its ``failure`` before scoring if any, else ``unscoreable``,
    ``no_estimate`` (``passed`` None: no estimate was compared), ``correct`` or ``wrong``."""
    if failure is not None:
        return failure
    if unscoreable:
        return "unscoreable"
    if passed is None:
        return "no_estimate"
    return "correct" if passed else "wrong"


def status_from_layers(
    *,
    L1: bool,
    L2a: bool,
    L2b: bool,
    L2b_plus: bool,
    unscoreable: bool,
    missing_package: bool,
    estimated: bool,
) -> CellStatus:
    """The status of a cell known only by its layer flags (a published per-cell table): the
    stages the flags can tell apart, in the order :func:`pre_scoring_status` reads them."""
    if unscoreable:
        return "unscoreable"
    failure: CellStatus | None = None
    if not L1:
        failure = "no_response"
    elif not L2a:
        failure = "no_code"
    elif not L2b:
        failure = "missing_package" if missing_package else "exec_error"
    if failure is None and L2b_plus:
        return "correct"
    return scored_status(failure, unscoreable=False, passed=None if not estimated else False)


def counted_layers(status: CellStatus, scores: ScoreRecord | None) -> dict[str, float | None]:
    """Each layer as the report counts the cell in it: 1.0 pass, 0.0 fail, None when the cell
    is left out of the layer's rate.

    A cell without an answer (``api_error``) is left out of every layer; an unscoreable cell is
    left out of L2b+ (it is never a fail); a cell without scores fails every layer.
    """
    if status == "api_error":
        return dict.fromkeys(LAYERS)
    values: dict[str, float | None] = {
        layer: float(bool(getattr(scores, layer))) if scores is not None else 0.0
        for layer in LAYERS
    }
    if status == "unscoreable" or (scores is not None and scores.unscoreable):
        values["L2b_plus"] = None
    return values

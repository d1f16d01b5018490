"""Deriving a cell's status from its stages (the first failing stage names the status)."""

from __future__ import annotations

from causalverify.records import CellRecord, CellStatus

_EXEC_STATUS: dict[str, CellStatus] = {
    "timeout": "timeout",
    "cpu_limit": "timeout",
    "memory_limit": "resource_limit",
    "output_limit": "resource_limit",
    "killed": "resource_limit",
    "error": "exec_error",
    "sandbox_unavailable": "exec_error",
}


def pre_scoring_status(record: CellRecord) -> CellStatus | None:
    """The failure status of a cell that did not execute successfully, or None if it did.

    Order: ``api_error`` (provider error), ``no_response`` (no or empty answer), ``no_code``,
    ``parse_error``, then the execution: ``missing_package``, ``timeout`` (wall clock or CPU),
    ``resource_limit`` (memory, output, killed), ``exec_error`` (anything else that is not ok).
    """
    response = record.response
    if response is not None and response.error is not None:
        return "api_error"
    if response is None or not (response.content or "").strip():
        return "no_response"
    code = record.code
    if code is None or not (code.code or "").strip():
        return "no_code"
    if not code.parses:
        return "parse_error"
    execution = record.execution
    if execution is None:
        return "exec_error"
    if execution.status == "ok":
        return None
    if execution.missing_package:
        return "missing_package"
    return _EXEC_STATUS.get(execution.status, "exec_error")

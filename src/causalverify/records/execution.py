"""What running a script produced: its status, output, resources and fit log.

These records cross process and disk boundaries (the sandbox returns them, the run store and
releases keep them); the sandbox that produces them lives in :mod:`causalverify.sandbox`.
A failing user program is an :class:`ExecResult` with a status, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from causalverify.records._text import Text

ExecStatus = Literal[
    "ok",
    "error",
    "timeout",
    "cpu_limit",
    "memory_limit",
    "output_limit",
    "killed",
    "sandbox_unavailable",
]


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Resource limits for one execution."""

    wall_seconds: float = 120.0
    cpu_seconds: float = 60.0
    memory_mb: int = 2048
    max_processes: int = 64
    max_output_bytes: int = 1_000_000


class FitTerm(BaseModel):
    """One coefficient of a fitted model, as the fit log recorded it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    term: Text
    estimate: float | None
    std_error: float | None = None


class FitEntry(BaseModel):
    """One model the script fitted (see :mod:`causalverify.sandbox.fitlog`).

    ``function`` names the estimation function (``stats::lm``, ``linearmodels.IV2SLS``, ...);
    ``iv`` is set for instrumental-variables fits, with the ``endogenous`` regressors when known;
    ``rd`` for a regression-discontinuity estimator.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: Text
    terms: list[FitTerm]
    nobs: float | None = None
    iv: bool = False
    rd: bool = False
    endogenous: list[Text] = Field(default_factory=list)


class ExecResult(BaseModel):
    """What happened when a script ran."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: ExecStatus
    exit_code: int | None
    stdout: Text
    stderr: Text
    wall_seconds: float
    cpu_seconds: float
    peak_memory_mb: float | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    sandboxed: bool = True
    #: set when the failure is caused by an R/Python package that is not installed
    missing_package: Text | None = None
    detail: Text = ""
    #: every model the script fitted, in order (untrusted: written by the script's process)
    fits: list[FitEntry] = Field(default_factory=list)
    #: what was dropped from the fit log and why ("" when nothing was)
    fits_note: Text = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

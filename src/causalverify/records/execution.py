"""What running a script produced: its status, output, resources, fit log and output origins.

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
    ``rd`` for a regression-discontinuity estimator, and ``fuzzy`` for a fuzzy one (``rdrobust``
    with ``fuzzy =``: its estimate is the ratio of the outcome's jump to the treatment's). ``vcov`` says how the logged standard errors
    were computed, in the package's own words, where the package exposes it (statsmodels'
    ``cov_type``, linearmodels' covariance estimator, pyfixest's vcov type and cluster variables,
    ``lm_robust``'s ``se_type``, fixest's vcov, the ``vcov.`` argument of ``lmtest::coeftest``
    as written; ``classical`` for fits whose ``vcov()`` is always the classical one); None
    when unknown. See :func:`causalverify.estimators.vcov_kind` for reading it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: Text
    terms: list[FitTerm]
    nobs: float | None = None
    iv: bool = False
    rd: bool = False
    fuzzy: bool = False
    endogenous: list[Text] = Field(default_factory=list)
    vcov: Text | None = None


class OutputOrigin(BaseModel):
    """The code that wrote one run of stdout (see :mod:`causalverify.sandbox.outputs`).

    ``start``/``end`` are offsets into ``ExecResult.stdout`` (characters) and
    ``first_line``/``last_line`` the stdout lines they cover (1-based, as ``str.splitlines``
    counts them). ``function`` is the function that wrote (R: ``cat``, ``print``,
    ``print.default``, ``writeLines``; Python: the callee as written, ``print``,
    ``sys.stdout.write``, ``df.info``); ``line`` and ``code`` the script's line and text of the
    innermost call of the script that led to it; ``call`` the written function's call as it was
    evaluated (R); ``top_line`` the script's top-level statement; ``object`` the class of what R
    printed. Untrusted: written by the script's process.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: int
    end: int
    first_line: int
    last_line: int
    function: Text = ""
    line: int | None = None
    code: Text = ""
    call: Text = ""
    top_line: int | None = None
    object: Text = ""


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
    #: which code wrote each run of stdout, in order (untrusted, like the fit log)
    outputs: list[OutputOrigin] = Field(default_factory=list)
    #: what was dropped from the output records and why ("" when nothing was)
    outputs_note: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

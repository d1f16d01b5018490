"""Turning what the supervisor saw into an ``ExecResult`` status."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from typing import Final

from causalverify.sandbox._process import Outcome
from causalverify.sandbox.base import ExecResult, ExecStatus, Limits
from causalverify.sandbox.fitlog import parse_fit_log, parse_installs
from causalverify.sandbox.outputs import parse_outputs
from causalverify.sandbox.spec import cpu_rlimit

_R_MISSING = re.compile(r"there is no package called [‘'`\"]([A-Za-z0-9._]+)[’'`\"]")
_PY_MISSING = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")

_MEMORY_PATTERNS = re.compile(
    r"cannot allocate vector of size|cannot allocate memory block|"
    r"Error: cannot allocate|vector memory (exhausted|limit)|std::bad_alloc|"
    r"\bMemoryError\b|_ArrayMemoryError|Unable to allocate [0-9.]+ [KMGT]?i?B|"
    r"Cannot allocate memory|memory exhausted|out of memory",
    re.IGNORECASE,
)
_FORK_PATTERNS = re.compile(
    r"Resource temporarily unavailable|unable to fork|cannot fork|fork failed|"
    r"can't start new thread|BlockingIOError",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True)
class RunFacts:
    """Facts beyond the process outcome that decide the status."""

    limits: Limits
    sandboxed: bool
    #: the process-count limit refused at least one fork (None: unknown)
    process_limit_hit: bool | None = None
    #: bwrap reports a signalled child as exit status 128 + signal number
    signal_in_exit_code: bool = False


def missing_package(stderr: str) -> str | None:
    """Name of the R package / top-level Python module whose absence made the script fail."""
    m = _R_MISSING.search(stderr)
    if m:
        return m.group(1)
    m = _PY_MISSING.search(stderr)
    if m:
        return m.group(1).split(".")[0]
    return None


def _signal_of(outcome: Outcome, facts: RunFacts) -> int | None:
    if outcome.term_signal is not None:
        return outcome.term_signal
    code = outcome.exit_code
    if facts.signal_in_exit_code and code is not None and 128 < code < 128 + 65:
        return code - 128
    return None


#: a SIGKILL that the harness did not send ends a run at its CPU limit when the run had used at
#: least this share of the limit. The kernel counts CPU for the limit in whole clock ticks, each
#: charged to the process running when it fires; on a busy machine, with many switches between
#: processes, that count runs ahead of the exact time ``wait4`` reports (measured: killed at the
#: 1 s limit with 0.895 s reported, with eight processes on two cores). The self-test's CPU probe
#: takes the same share (:func:`causalverify.sandbox.selftest.cpu_verdict`).
CPU_KILL_SHARE: Final = 0.5


def _status(outcome: Outcome, facts: RunFacts, stderr: str) -> tuple[ExecStatus, str]:
    limits = facts.limits
    if outcome.reason == "timeout":
        return (
            "timeout",
            f"wall-clock limit of {limits.wall_seconds:g} s reached; process tree killed",
        )
    if outcome.reason == "output_limit":
        return (
            "output_limit",
            f"output exceeded {limits.max_output_bytes} bytes; process tree killed",
        )
    sig = _signal_of(outcome, facts)
    cpu_exhausted = outcome.cpu_seconds >= CPU_KILL_SHARE * cpu_rlimit(limits)
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_exhausted):
        return "cpu_limit", f"CPU limit of {limits.cpu_seconds:g} s reached"
    if outcome.exit_code == 0 and sig is None:
        return "ok", ""
    if _MEMORY_PATTERNS.search(stderr):
        return "memory_limit", f"allocation refused (memory limit {limits.memory_mb} MB)"
    if facts.process_limit_hit or (
        facts.process_limit_hit is None and _FORK_PATTERNS.search(stderr)
    ):
        return "killed", f"process limit of {limits.max_processes} reached (fork refused)"
    if sig is not None:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return "killed", f"terminated by signal {name}"
    return "error", f"exit status {outcome.exit_code}"


def to_result(outcome: Outcome, facts: RunFacts) -> ExecResult:
    """Build the ``ExecResult`` for an outcome."""
    stdout = outcome.stdout.decode("utf-8", errors="replace")
    stderr = outcome.stderr.decode("utf-8", errors="replace")
    status, detail = _status(outcome, facts, stderr)
    missing = missing_package(stderr) if status == "error" else None
    if missing is not None:
        detail = f"package not installed: {missing}"
    elif status == "error" and (attempted := parse_installs(outcome.side)):
        # the script called install.packages() for a package that is not installed (R's error,
        # "unable to install packages", does not say which when the name is a variable)
        missing = attempted[0]
        detail = (
            f"package not installed: {missing} (the script tried to install it while running; "
            "the sandbox has no network)"
        )
    if not facts.sandboxed:
        detail = ("UNSAFE: executed without a sandbox. " + detail).strip()
    fits, fits_note = parse_fit_log(outcome.side, truncated=outcome.side_truncated)
    outputs, outputs_note = parse_outputs(outcome.side, stdout, truncated=outcome.side_truncated)
    return ExecResult(
        status=status,
        exit_code=outcome.exit_code,
        stdout=stdout,
        stderr=stderr,
        wall_seconds=round(outcome.wall_seconds, 6),
        cpu_seconds=round(outcome.cpu_seconds, 6),
        peak_memory_mb=outcome.peak_memory_mb,
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=outcome.stderr_truncated,
        sandboxed=facts.sandboxed,
        missing_package=missing,
        detail=detail,
        fits=fits,
        fits_note=fits_note,
        outputs=outputs,
        outputs_note=outputs_note,
    )


def unavailable(detail: str, *, sandboxed: bool = True) -> ExecResult:
    """The result of a run that could not start."""
    return ExecResult(
        status="sandbox_unavailable",
        exit_code=None,
        stdout="",
        stderr="",
        wall_seconds=0.0,
        cpu_seconds=0.0,
        sandboxed=sandboxed,
        detail=detail,
    )

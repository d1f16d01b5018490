"""The sandbox self-test on a busy machine, and against a sandbox whose CPU limit is missing.

The CPU check decides from what the probe measured (the limit it runs under, the signal that
ended it, the CPU time it used), not from how long that took: with more CPU-bound processes than
cores it still passes; with the CPU limit really absent it still fails.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

from causalverify.sandbox.base import ExecResult, Limits, Sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.selftest import cpu_check, cpu_verdict, run_selftest

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

#: more CPU-bound processes than the two cores the project is sized for
COMPETITORS = 6


@pytest.fixture
def busy_machine() -> Iterator[list[subprocess.Popen[bytes]]]:
    """COMPETITORS processes spinning on the CPU for as long as the test runs.

    Each is a session of its own, as other programs on a busy machine are: the kernel shares the
    CPU between sessions first (its automatic task groups), so spinners in the test's session
    would compete with the test alone and leave the sandbox's probe, a session of its own, a
    whole core."""
    spin = [sys.executable, "-c", "while True: pass"]
    procs = [subprocess.Popen(spin, start_new_session=True) for _ in range(COMPETITORS)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


class WithoutCpuLimit(BwrapSandbox):
    """The real sandbox with one protection taken away: no ``RLIMIT_CPU`` is applied (cold or
    warm: both take their limits from :meth:`rlimits`)."""

    def rlimits(self, limits: Limits) -> dict[str, int]:
        return {k: v for k, v in super().rlimits(limits).items() if k != "RLIMIT_CPU"}


@needs_bwrap
@pytest.mark.sandbox
@pytest.mark.slow
def test_the_self_test_passes_on_a_busy_machine(
    sandbox: Sandbox, busy_machine: list[subprocess.Popen[bytes]]
) -> None:
    checks = run_selftest(sandbox)
    assert all(p.poll() is None for p in busy_machine)  # they competed to the end
    assert [c for c in checks if not c.ok] == []
    cpu = next(c for c in checks if c.name == "CPU")
    assert "stopped at the CPU limit" in cpu.detail and "limit inside: 1 1" in cpu.detail


@needs_bwrap
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_the_cpu_check_fails_without_the_cpu_limit(warm: bool) -> None:
    box = WithoutCpuLimit(warm=warm)
    try:
        check = cpu_check(box)
    finally:
        box.close()
    assert not check.ok
    assert check.detail.startswith("failed twice: ")
    assert check.detail.count("the probe runs without a 1 s CPU limit") == 2, check.detail
    assert check.detail.count("limit inside: -1 -1") == 2  # RLIM_INFINITY, as on the host


def _result(status: str, exit_code: int | None, stdout: str, cpu: float, wall: float) -> ExecResult:
    return ExecResult(
        status=status,  # type: ignore[arg-type]
        exit_code=exit_code,
        stdout=stdout,
        stderr="",
        wall_seconds=wall,
        cpu_seconds=cpu,
    )


@pytest.mark.parametrize(
    ("res", "held"),
    [
        # the limit fired: SIGKILL, whatever the status the classifier chose from the CPU time
        (_result("cpu_limit", 137, "1 1\n", 0.97, 4.4), True),
        (_result("killed", 137, "1 1\n", 0.83, 3.5), True),
        (_result("killed", -9, "1 1\n", 1.01, 30.0), True),
        # the wall budget ran out first on a busy machine: neither held nor missing
        (_result("timeout", 137, "1 1\n", 0.4, 60.0), None),
        # no limit inside, a limit that never acted, or a kill that was not the limit's
        (_result("ok", 0, "-1 -1\n", 0.05, 0.5), False),
        (_result("killed", 137, "1 1\noverran 2.0\n", 2.0, 3.2), False),
        (_result("ok", 0, "1 1\noverran 2.0\n", 2.0, 3.2), False),
        (_result("timeout", 137, "-1 -1\n", 0.4, 60.0), False),
        (_result("timeout", 137, "1 1\n", 2.5, 60.0), False),
        (_result("killed", 137, "1 1\n", 0.1, 0.2), False),
        (_result("killed", 137, "", 0.9, 3.0), False),
        (_result("error", 1, "1 1\n", 0.9, 3.0), False),
    ],
)
def test_the_cpu_verdict_rests_on_what_was_measured(res: ExecResult, held: bool | None) -> None:
    assert cpu_verdict(res, limit=1)[0] is held

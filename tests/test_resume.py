"""Kill ``causalverify run`` with SIGKILL at several points, resume it, and compare the final store
with an uninterrupted run of the same configuration (the same cells of the session's shared run of
the reference panel)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from causalverify.errors import StoreError
from causalverify.store import RunStore, stable_view
from run_e2e_helpers import PanelRun, needs_r_and_sandbox, only_language

pytestmark = needs_r_and_sandbox

_CLI = "from causalverify.cli import main; main()"


def _count(run_dir: Path) -> int:
    try:
        with RunStore.open(run_dir) as store:
            return store.count_cells()
    except StoreError:  # the run has not created its store yet
        return 0


def _kill_after(command: list[str], run_dir: Path, cells: int, timeout: float = 120.0) -> int:
    """Start the run, SIGKILL it once the store holds ``cells`` cells; return the count after."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while _count(run_dir) < cells:
            if proc.poll() is not None:
                stderr = proc.stderr.read() if proc.stderr is not None else b""
                raise AssertionError(f"the run ended before it was killed: {stderr.decode()}")
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    return _count(run_dir)


#: agents whose R cells end differently (correct, a missing package, no estimate): 12 cells, each
#: a few seconds of R, so a kill reliably lands with cells still to run
MODELS = ("reference/textbook", "reference/fragile", "reference/mute")


def test_killed_and_resumed_run_equals_an_uninterrupted_one(
    tmp_path: Path, reference_panel: PanelRun
) -> None:
    """Killed right after its first stored cell, resumed, the resumed run killed again half-way,
    and resumed once more, the run ends with exactly the cells of an uninterrupted run: none
    missing, none stored twice, each equal to the uninterrupted one's. (Each start of the command
    costs seconds of imports and set-up, so the kills are few and the run is small.)"""
    reference = tuple(r for r in only_language(reference_panel, "r") if r.key.model in MODELS)
    run_dir = tmp_path / "run"
    command = [
        sys.executable,
        "-c",
        _CLI,
        "run",
        "--suite",
        str(reference_panel.config.suite_dir),
        "--out",
        str(run_dir),
        "--models",
        ",".join(MODELS),
        "--languages",
        "r",
        "--workers",
        "2",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--quiet",
    ]
    counts = [_kill_after(command, run_dir, cells) for cells in (1, 6)]
    assert counts[0] >= 1 and counts[1] >= 6
    assert counts[1] < len(reference), "killed too late to test resuming mid-way"
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert finished.returncode == 0, finished.stderr
    with RunStore.open(run_dir) as store:
        resumed = list(store.iter_cells())
        meta = store.meta()
        (rows,) = store._conn.execute("SELECT COUNT(*) FROM cells").fetchone()
    assert rows == len(resumed) == len(reference) == 12
    assert [r.key for r in resumed] == [r.key for r in reference]
    for got, want in zip(resumed, reference, strict=True):
        assert stable_view(got) == stable_view(want), got.key
    assert meta["command_line"][:2] == ["causalverify", "run"]

"""A shared offline run of the reference panel, built once per test session.

The run covers one scenario per family (the ``smoke`` suite) with every agent in R and in Python
(64 cells). ``test_run_e2e`` checks what it contains, ``test_resume`` compares a killed-and-resumed
run against its R cells, ``test_dask`` compares runs on Dask workers with it, and
``test_explorer`` writes its report beside the store and opens it in a browser.
``tests/conftest.py`` hands it to tests as the session fixture ``reference_panel`` (and the suite
as ``smoke_suite_dir``). No test changes its cells: the one that reruns it asserts that the rerun
adds and changes nothing, and runs that differ write to folders of their own.
"""

from __future__ import annotations

import functools
import os
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from filelock import FileLock

from causalverify.models import ModelAccess
from causalverify.runner import RunConfig, RunSummary, run_benchmark
from causalverify.scenarios import build_suite
from causalverify.store import CellRecord, RunStore

needs_r_and_sandbox = [
    pytest.mark.r,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript is not installed"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


F = TypeVar("F", bound=Callable[..., Any])


def with_marks(marks: list[pytest.MarkDecorator]) -> Callable[[F], F]:
    """Apply several marks to one test."""

    def apply(test: F) -> F:
        for mark in marks:
            test = mark(test)
        return test

    return apply


@dataclass(frozen=True)
class PanelRun:
    """A finished run: its configuration, summary and stored records."""

    config: RunConfig
    summary: RunSummary
    records: tuple[CellRecord, ...]


def _finish(config: RunConfig) -> PanelRun:
    summary = run_benchmark(config)
    with RunStore.open(config.out_dir) as store:
        return PanelRun(config, summary, tuple(store.iter_cells()))


@functools.cache
def smoke_suite(root: Path) -> Path:
    """The smoke suite (one scenario per family), built once under ``root``."""
    with FileLock(root / "suite.lock"):
        if not (root / "suite.done").exists():
            build_suite(root / "suite", suite="smoke")
            (root / "suite.done").touch()
    return root / "suite"


@functools.cache
def reference_panel(root: Path) -> PanelRun:
    """All eight reference agents, in R and Python, on the smoke suite (64 cells).

    Made once under ``root``, whichever test worker asks first; the others read what it kept."""
    kept = root / "panel.pickle"
    with FileLock(root / "panel.lock"):
        if kept.exists():
            panel: PanelRun = pickle.loads(kept.read_bytes())
            return panel
        panel = _finish(
            RunConfig(
                suite_dir=smoke_suite(root),
                out_dir=root / "panel",
                workers=2,
                access=ModelAccess(cache_path=root / "cache.sqlite"),
            )
        )
        kept.write_bytes(pickle.dumps(panel))
        return panel


def only_language(run: PanelRun, language: str) -> tuple[CellRecord, ...]:
    """The run's records in one language, in the store's order."""
    return tuple(r for r in run.records if r.key.language == language)


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """A folder shared by every test of the session (by all its workers, under pytest-xdist)."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' folders share this one
    root = base / "reference-panel"
    root.mkdir(exist_ok=True)
    return root

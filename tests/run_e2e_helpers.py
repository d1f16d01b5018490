"""A shared offline run of the reference panel, built once per test session.

``test_run_e2e`` checks what it contains; ``test_resume`` compares a killed-and-resumed run
against it. The run covers one scenario per family (the ``smoke`` suite): every agent in R, and
the ``textbook`` agent in Python too (a separate run folder).
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from causalverify.runner import REFERENCE_PANEL, RunConfig, RunSummary, run_benchmark
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
    build_suite(root / "suite", suite="smoke")
    return root / "suite"


@functools.cache
def panel_r(root: Path) -> PanelRun:
    """All seven reference agents, in R, on the smoke suite (28 cells)."""
    return _finish(
        RunConfig(
            suite_dir=smoke_suite(root),
            out_dir=root / "panel-r",
            languages=("r",),
            workers=2,
            cache_path=root / "cache.sqlite",
        )
    )


@functools.cache
def textbook_python(root: Path) -> PanelRun:
    """The textbook agent in Python on the smoke suite (4 cells)."""
    return _finish(
        RunConfig(
            suite_dir=smoke_suite(root),
            out_dir=root / "textbook-python",
            models=(REFERENCE_PANEL[0],),
            languages=("python",),
            workers=2,
            cache_path=root / "cache.sqlite",
        )
    )


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """A folder shared by every test of the session."""
    root = factory.getbasetemp() / "reference-panel"
    root.mkdir(exist_ok=True)
    return root

"""Frozen releases: a run folder written out so anyone can verify and rescore it without a model.

``freeze_run`` writes the release (suite, records, scores, report, environment, datasheet,
Croissant metadata, ``SHA256SUMS``); ``verify_release`` checks every hash, rescores from the
stored executions and, optionally, re-runs them in the sandbox; ``open_cells_source`` reads a run
folder or a release through one interface, so ``score``, ``report`` and ``analyze`` accept both.
See docs/RELEASES.md.
"""

from __future__ import annotations

from causalverify.release._freeze import FreezeResult, ReportSettings, freeze_run
from causalverify.release._layout import RELEASE_SCHEMA, is_release
from causalverify.release._records import read_records
from causalverify.release._reexecute import CellAgreement, ReexecutionReport, reexecute_cells
from causalverify.release._source import (
    CellsSource,
    ReleaseSource,
    load_cells,
    open_cells_source,
    run_dir_for,
    unfreeze,
)
from causalverify.release._verify import VerifyReport, verify_release

__all__ = [
    "RELEASE_SCHEMA",
    "CellAgreement",
    "CellsSource",
    "FreezeResult",
    "ReexecutionReport",
    "ReleaseSource",
    "ReportSettings",
    "VerifyReport",
    "freeze_run",
    "is_release",
    "load_cells",
    "open_cells_source",
    "read_records",
    "reexecute_cells",
    "run_dir_for",
    "unfreeze",
    "verify_release",
]

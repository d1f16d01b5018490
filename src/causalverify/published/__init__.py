"""Reproducing the published benchmark: import its suite, replay its answers, compare its cells.

::

    import_suite(release, out, fmt="causalverify-2026") -> ImportReport   (suite + defects.csv)
    find_defects(published, family, data, canonical) -> list[Defect]
    compare_run(run_dir, cells_csv, fmt="causalverify-2026") -> Comparison

Replaying the published answers needs nothing from here: ``causalverify run --suite SUITE
--models replay/<outputs dir> --protocol paper --profile paper --languages r``.
"""

from __future__ import annotations

from causalverify.published._release import (
    FORMATS,
    PublishedScenario,
    read_release,
    read_scenario,
)
from causalverify.published.defects import DEFECT_COLUMNS, Defect, defects_csv, find_defects
from causalverify.published.importer import DEFECTS_FILE, SOURCE, ImportReport, import_suite

__all__ = [
    "DEFECTS_FILE",
    "DEFECT_COLUMNS",
    "FORMATS",
    "SOURCE",
    "Defect",
    "ImportReport",
    "PublishedScenario",
    "defects_csv",
    "find_defects",
    "import_suite",
    "read_release",
    "read_scenario",
]

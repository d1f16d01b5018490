"""A small published-format release assembled at test time from fixtures and reference CSVs.

The scenario texts and cached answers under ``fixtures/published`` are written for these tests in
the published schemas; the CSVs are the authors' realised data from the reference folder, copied
into the release layout when a test runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from estimators_reference import REFERENCE_DIR as REFERENCE
from estimators_reference import require_reference

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "published"

SCENARIOS = ("s01", "s11", "s19", "s25", "s46", "s82")
EXP_B = Path("experiments") / "exp_b"


def make_release(root: Path, scenarios: tuple[str, ...] = SCENARIOS) -> Path:
    """Write a release folder (scenarios, data, outputs) under ``root`` and return it (the test
    skips in a clone without the published data)."""
    require_reference()
    for sub in ("scenarios", "data", "outputs"):
        (root / EXP_B / sub).mkdir(parents=True, exist_ok=True)
    for sid in scenarios:
        shutil.copyfile(
            FIXTURES / "scenarios" / f"{sid}.json", root / EXP_B / "scenarios" / f"{sid}.json"
        )
        shutil.copyfile(
            REFERENCE / "data" / f"{sid}_data.csv", root / EXP_B / "data" / f"{sid}_data.csv"
        )
        for answer in (FIXTURES / "outputs").glob(f"{sid}_*.json"):
            shutil.copyfile(answer, root / EXP_B / "outputs" / answer.name)
    return root

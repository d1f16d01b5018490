"""Locating the published reference data (a sibling folder of the checkout)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from causalverify.families import Family, parse_family

REFERENCE_DIR = (
    Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "causalverify-2026"
)
#: the published release's data sits beside the checkout (``../shared``); a plain clone lacks it
HAVE_REFERENCE = (REFERENCE_DIR / "dgp_verification.json").is_file()
#: marks a test that reads the published data: skipped, and named, in a clone without it; in CI
#: its absence stops the session instead (``conftest.py``)
REASON = "needs the published reference data in ../shared/reference/causalverify-2026"
needs_reference = pytest.mark.skipif(not HAVE_REFERENCE, reason=REASON)


def require_reference() -> Path:
    """The reference folder; skips the calling test (with the reason) in a clone without it.

    Helpers that read the published data call this, so every test using them skips cleanly; in
    CI the data's absence stops the session instead (``conftest.py``).
    """
    if not HAVE_REFERENCE:
        pytest.skip(REASON)
    return REFERENCE_DIR


@dataclass(frozen=True)
class Published:
    """One reference CSV with its published canonical values."""

    scenario_id: str
    family: Family
    path: Path
    estimated: float
    standard_error: float
    n_observations: int


def published_cases() -> list[Published]:
    """Every CSV in the reference data folder with its entry in dgp_verification.json.

    Empty when the folder is absent (tests that use it carry :data:`needs_reference`).
    """
    verification = REFERENCE_DIR / "dgp_verification.json"
    if not HAVE_REFERENCE:
        return []
    results = {r["scenario_id"]: r for r in json.loads(verification.read_text())["results"]}
    cases = []
    for path in sorted((REFERENCE_DIR / "data").glob("*_data.csv")):
        sid = path.name.removesuffix("_data.csv")
        entry = results[sid]
        cases.append(
            Published(
                scenario_id=sid,
                family=parse_family(entry["method_family"]),
                path=path,
                estimated=float(entry["estimated"]),
                standard_error=float(entry["standard_error"]),
                n_observations=int(entry["n_observations"]),
            )
        )
    return cases

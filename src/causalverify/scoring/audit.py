"""The extraction audit: a blinded, family-stratified sample sheet and human-vs-extractor agreement.

The sheet holds an opaque cell id, the family, the code and the stdout, and an empty
``human_effect`` column; it shows no model name, score, extracted value or canonical estimate.
Cells the extractor left undecided are drawn first (they are where a human reading is worth
most); the sheet's order does not say which they are.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from causalverify.extraction import extract_estimate
from causalverify.families import FAMILIES
from causalverify.records import DEFAULT_TOLERANCE, CellRecord
from causalverify.scoring._declared import declared_token, is_undecided
from causalverify.scoring._layers import Profile, is_unscoreable
from causalverify.scoring._rescore import match_cell

if TYPE_CHECKING:
    import pandas as pd

SHEET_COLUMNS = ("cell_id", "family", "code", "stdout", "human_effect")
AGREE_RTOL = 1e-6


def cell_id(record: CellRecord) -> str:
    """An opaque, stable id of a cell (hides the model name from the auditor)."""
    raw = "\x1f".join(str(x) for x in record.key.as_tuple())
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _executed(records: Iterable[CellRecord]) -> list[CellRecord]:
    ok = [r for r in records if r.execution is not None and r.execution.ok and r.code is not None]
    return sorted(ok, key=lambda r: r.key.as_tuple())


def _allocate(n: int, available: dict[str, int]) -> dict[str, int]:
    """Equal shares per family, capped by availability, leftovers to families with spare cells."""
    take = dict.fromkeys(available, 0)
    remaining = n
    while remaining > 0:
        open_families = [f for f in FAMILIES if f in available and take[f] < available[f]]
        if not open_families:
            break
        for family in open_families:
            if remaining == 0:
                break
            take[family] += 1
            remaining -= 1
    return take


def sample_sheet(records: Iterable[CellRecord], *, n: int, seed: int) -> pd.DataFrame:
    """Draw a family-stratified, seeded sample of executed cells as a blinded sheet; the cells
    whose extraction is undecided are drawn first, the rest of the sample from the others.

    Parameters
    ----------
    records
        The run's cells.
    n
        Sample size (fewer if the run has fewer executed cells).
    seed
        Seed of the draw; the same run and seed give the same sheet.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SHEET_COLUMNS`, rows in a seeded random order.
    """
    import pandas as pd

    rng = np.random.default_rng(np.random.SeedSequence([seed, n]))
    cells = _executed(records)
    undecided = [r for r in cells if is_undecided(r)]
    chosen = _stratified(undecided, n, rng)
    rest = [r for r in cells if not is_undecided(r)]
    chosen += _stratified(rest, n - len(chosen), rng)
    order = rng.permutation(len(chosen))
    rows = [_sheet_row(chosen[i]) for i in order]
    return pd.DataFrame(rows, columns=list(SHEET_COLUMNS))


def _stratified(cells: Sequence[CellRecord], n: int, rng: np.random.Generator) -> list[CellRecord]:
    """A family-stratified draw of up to ``n`` of ``cells`` (all of them when there are fewer)."""
    if n <= 0 or not cells:
        return []
    by_family: dict[str, list[CellRecord]] = {}
    for record in cells:
        by_family.setdefault(record.family, []).append(record)
    take = _allocate(n, {f: len(v) for f, v in by_family.items()})
    chosen: list[CellRecord] = []
    for family in FAMILIES:
        pool = by_family.get(family, [])
        idx = rng.permutation(len(pool))[: take.get(family, 0)]
        chosen.extend(pool[i] for i in sorted(idx))
    return chosen


def _sheet_row(record: CellRecord) -> dict[str, object]:
    assert record.code is not None and record.execution is not None
    return {
        "cell_id": cell_id(record),
        "family": record.family,
        "code": record.code.code or "",
        "stdout": record.execution.stdout,
        "human_effect": "",
    }


@dataclass(frozen=True, kw_only=True)
class Agreement:
    """Agreement between the auditor's values and the extractor's on the sheet's cells."""

    n: int
    numeric_agree: int
    n_scoreable: int
    passfail_agree: int
    disagreements: tuple[str, ...]

    @property
    def numeric_rate(self) -> float:
        return self.numeric_agree / self.n if self.n else math.nan

    @property
    def passfail_rate(self) -> float:
        return self.passfail_agree / self.n_scoreable if self.n_scoreable else math.nan


def same_value(a: float | None, b: float | None) -> bool:
    """Both null, or within 1e-6 relative of each other."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= AGREE_RTOL * max(abs(a), abs(b), 1e-12)


def agreement(
    records: Sequence[CellRecord],
    human: dict[str, float | None],
    *,
    profile: Profile = "default",
    tolerance: float = DEFAULT_TOLERANCE,
) -> Agreement:
    """Compare human-read effects (cell id -> value or None) with the deterministic extractor.

    Pass/fail agreement is over scoreable cells: each value is scored against the canonical
    under ``profile`` and ``tolerance`` (a missing value fails).
    """
    by_id = {cell_id(r): r for r in records}
    unknown = sorted(set(human) - set(by_id))
    if unknown:
        raise ValueError(
            f"the sheet names cells that are not in this run: {', '.join(unknown[:5])}"
        )
    numeric = passfail = scoreable = 0
    notes: list[str] = []
    for cid in sorted(human):
        record = by_id[cid]
        ours = _our_value(record)
        theirs = human[cid]
        if same_value(ours, theirs):
            numeric += 1
        else:
            notes.append(f"{cid}: human {theirs!r}, extractor {ours!r}")
        if not is_unscoreable(record.canonical):
            scoreable += 1
            passfail += _passes(record, ours, profile, tolerance) == _passes(
                record, theirs, profile, tolerance
            )
    return Agreement(
        n=len(human),
        numeric_agree=numeric,
        n_scoreable=scoreable,
        passfail_agree=passfail,
        disagreements=tuple(notes),
    )


def _our_value(record: CellRecord) -> float | None:
    assert record.code is not None and record.execution is not None
    rec = extract_estimate(
        code=record.code.code or "",
        stdout=record.execution.stdout,
        family=record.family,
        fits=record.execution.fits,
        declared=declared_token(record),
        outputs=record.execution.outputs,
    )
    return rec.value


def _passes(record: CellRecord, value: float | None, profile: Profile, tolerance: float) -> bool:
    if value is None:
        return False
    match = match_cell(record, value, profile=profile, tolerance=tolerance)
    return match.passed

"""The human audit of the consensus labels: a blinded, stratified sheet and its agreement."""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import pandas as pd

from causalverify.papers.records import PaperRecord
from causalverify.papers.scorers import normalise_direction, normalise_method
from causalverify.papers.stats import cohen_kappa

SHEET_COLUMNS: Final[tuple[str, ...]] = (
    "audit_id",
    "paper_id",
    "title",
    "authors",
    "year",
    "journal",
    "research_question",
    "data_description",
    "institutional_context",
    "human_method",
    "human_direction",
)


def _allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Proportional allocation (largest remainders), at least one per non-empty stratum."""
    total = sum(sizes.values())
    n = min(n, total)
    quota = {k: n * v / total for k, v in sizes.items()}
    take = {k: min(sizes[k], max(1, math.floor(q))) for k, q in quota.items()}
    order = sorted(sizes, key=lambda k: (-(quota[k] - math.floor(quota[k])), k))
    while sum(take.values()) > n:
        k = max((k for k in take if take[k] > 1), key=lambda k: (take[k] - quota[k], k))
        take[k] -= 1
    i = 0
    while sum(take.values()) < n:
        k = order[i % len(order)]
        if take[k] < sizes[k]:
            take[k] += 1
        i += 1
    return take


def audit_sheet(
    labels: pd.DataFrame, papers: tuple[PaperRecord, ...], *, n: int, seed: int
) -> pd.DataFrame:
    """A blinded labelling sheet of ``n`` papers, stratified by method agreement level.

    The sheet shows only what a labeller model saw (title, citation, the three fields) and two
    empty columns to fill in; the labels, levels and models are left out.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    strata = {str(k): g["paper_id"].tolist() for k, g in labels.groupby("method_level")}
    take = _allocate({k: len(v) for k, v in strata.items()}, n)
    chosen: list[str] = []
    for level in sorted(strata):
        ids = strata[level]
        chosen.extend(ids[i] for i in sorted(rng.choice(len(ids), take[level], replace=False)))
    by_id = {p.id: p for p in papers}
    order = rng.permutation(len(chosen))
    rows = []
    for number, idx in enumerate(order, start=1):
        p = by_id[chosen[int(idx)]]
        rows.append(
            {
                "audit_id": f"a{number:03d}",
                "paper_id": p.id,
                "title": p.title,
                "authors": "; ".join(p.authors),
                "year": p.year,
                "journal": p.journal,
                "research_question": p.research_question,
                "data_description": p.data_description,
                "institutional_context": p.institutional_context,
                "human_method": "",
                "human_direction": "",
            }
        )
    return pd.DataFrame(rows, columns=list(SHEET_COLUMNS))


def _agreement(human: pd.Series, label: pd.Series) -> dict[str, Any]:
    agree = int((human == label).sum())
    n = len(human)
    kappa = cohen_kappa(human.tolist(), label.tolist())
    return {"n": n, "agree": agree, "rate": agree / n if n else math.nan, "kappa": kappa}


def audit_agreement(sheet: pd.DataFrame, labels: pd.DataFrame) -> dict[str, Any]:
    """Agreement and Cohen's kappa of the human labels with the labels used, per layer.

    Rows with an unreadable human label or no consensus label are counted and left out.

    Returns
    -------
    dict
        ``{"method": {"overall": {...}, "by_level": {level: {...}}, "skipped": k}, "direction":
        ...}`` with ``n``, ``agree``, ``rate`` and ``kappa`` in each entry.
    """
    merged = sheet.merge(labels, on="paper_id", how="left")
    out: dict[str, Any] = {}
    for layer, parse in (("method", normalise_method), ("direction", normalise_direction)):
        human = merged[f"human_{layer}"].map(
            lambda v, parse=parse: parse(str(v)) if pd.notna(v) else None
        )
        usable = human.notna() & merged[f"{layer}_label"].notna()
        part = merged[usable].assign(human=human[usable])
        out[layer] = {
            "overall": _agreement(part["human"], part[f"{layer}_label"]),
            "by_level": {
                str(level): _agreement(g["human"], g[f"{layer}_label"])
                for level, g in part.groupby(f"{layer}_level", sort=True)
            },
            "skipped": int((~usable).sum()),
        }
    return out

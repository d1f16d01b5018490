"""Rescoring a stored run: every cell re-extracted and re-scored, written back, plus scores.csv."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from causalverify.records import DEFAULT_TOLERANCE
from causalverify.runner.budget import BoundedScorer, ScoringBudget
from causalverify.scoring import Extractor, Profile
from causalverify.store import RunStore, cells_frame
from causalverify.store.sqlite import writer_lock

if TYPE_CHECKING:
    import pandas as pd

SCORES_FILE = "scores.csv"


def score_run(
    run_dir: Path,
    *,
    profile: Profile = "default",
    tolerance: float = DEFAULT_TOLERANCE,
    extractor: Extractor = "deterministic",
    budget: ScoringBudget | None = None,
) -> pd.DataFrame:
    """Rescore every cell of the run at ``run_dir`` and write ``run_dir/scores.csv``.

    No model is called and nothing is executed. Each cell is scored under ``budget`` (a
    :class:`~causalverify.runner.budget.BoundedScorer`), as in a run. The rescored records replace the stored ones,
    the run metadata records the scoring settings under ``rescored`` (the run's own settings are
    left as they were), and the per-cell table is written with a
    fixed row order and float format, so two rescorings give byte-identical files.

    Returns
    -------
    pandas.DataFrame
        The per-cell table (``causalverify.store.cells_frame``) that was written.

    Raises
    ------
    StoreError
        If ``run_dir`` holds no run store.
    """
    with RunStore.open(run_dir) as store, writer_lock(run_dir), BoundedScorer(budget) as scorer:
        records = [
            scorer(r, profile=profile, tolerance=tolerance, extractor=extractor)
            for r in store.iter_cells()
        ]
        # The run's own settings (what a resumed `run` must repeat) stay as they are; a rescoring
        # with other settings is recorded beside them, and reports show it. Cells and that note
        # are written in one transaction: all of them or, if the process dies, none.
        chosen = {"profile": profile, "tolerance": tolerance, "extractor": extractor}
        meta = store.run_meta()
        recorded = {
            "profile": meta.profile,
            "tolerance": meta.tolerance,
            "extractor": meta.extractor,
        }
        own = {k: recorded[k] if meta.has(k) else chosen[k] for k in chosen}
        store.put_cells(records, meta={"rescored": chosen if chosen != own else None})
    frame = cells_frame(records)
    write_scores_csv(frame, run_dir / SCORES_FILE)
    return frame


def write_scores_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write the per-cell table deterministically (floats at ``repr`` precision, ``\\n`` ends)."""
    text = frame.to_csv(index=False, lineterminator="\n")
    path.write_text(text, encoding="utf-8")


def model_table(frame: pd.DataFrame) -> list[dict[str, object]]:
    """Per-model layer rates (L2b+ over scoreable cells) and the unscoreable count.

    Cells without an answer (``api_error``) are in ``unanswered`` and in no rate.
    """
    rows: list[dict[str, object]] = []
    for model, everything in frame.groupby("model", sort=True):
        group = everything[everything["status"] != "api_error"]
        scoreable = group[group["unscoreable"] == 0]
        plus = float(scoreable["L2b_plus"].mean()) if len(scoreable) else math.nan
        rows.append(
            {
                "model": str(model),
                "cells": len(everything),
                "unanswered": len(everything) - len(group),
                "L1": float(group["L1"].mean()) if len(group) else math.nan,
                "L2a": float(group["L2a"].mean()) if len(group) else math.nan,
                "L2b": float(group["L2b"].mean()) if len(group) else math.nan,
                "L2b+": plus,
                "unscoreable": int(group["unscoreable"].sum()),
                "no_estimate": int((group["status"] == "no_estimate").sum()),
            }
        )
    return rows

"""The ``experiment_a`` summary of a run folder (what the report shows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from causalverify.papers.analysis import (
    DEFAULT_SCORER,
    instability,
    label_frame,
    layer_rates,
    level_counts,
    load_results,
    prediction_frame,
    rank_contrast,
    reference_agreement,
    rid_comparison,
    score_frame,
    scorers_present,
)
from causalverify.papers.scorers import Scorer


def l2b_plus_by_model(cells: pd.DataFrame) -> dict[str, float]:
    """Experiment B L2b+ rate per model over scoreable cells (languages pooled)."""
    part = cells[cells["unscoreable"] == 0]
    return {str(m): float((g["L2b_plus"] == 1).mean()) for m, g in part.groupby("model")}


def experiment_a_summary(
    run_dir: Path, *, cells: pd.DataFrame | None = None, scorer: Scorer = DEFAULT_SCORER
) -> dict[str, Any] | None:
    """Summarise the Experiment A results of ``run_dir``; ``None`` when it has none.

    Parameters
    ----------
    run_dir
        The run folder (``papers.sqlite``).
    cells
        The Experiment B per-cell frame of the same run, for the L4 vs L2b+ rank contrast.
    scorer
        The scorer of the headline L3/L4, the rank contrast and the RID comparison.
    """
    results = load_results(run_dir)
    if results is None or not results.answers:
        return None
    labels, source = label_frame(results)
    scored = score_frame(prediction_frame(results), labels)
    rates = layer_rates(scored)
    summary: dict[str, Any] = {
        "scorer": scorer,
        "scorers": scorers_present(scored),
        "label_source": source,
        "labellers": list(results.meta.get("labellers") or []),
        "judge": results.meta.get("judge"),
        "papers": len(results.papers),
        "models": sorted(rates),
        "agreement_levels": level_counts(labels),
        "reference_agreement": reference_agreement(labels),
        "layers": rates,
        "instability": instability(scored),
    }
    if cells is not None and len(cells):
        l4 = {m: v[scorer]["L4"]["rate"] for m, v in rates.items() if scorer in v}
        summary["rank_contrast"] = rank_contrast(l4, l2b_plus_by_model(cells))
    rid = results.meta.get("rid")
    if rid and (scored["arm"] == "rid").any():
        summary["rid"] = {
            "seed": rid["seed"],
            "papers": rid["papers"],
            "models": rid_comparison(scored, rid["papers"], scorer=scorer),
        }
    return summary

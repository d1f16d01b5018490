"""The Experiment A section of the report: its summary entry and two figures.

Present only when the run folder holds Experiment A results (``causalverify papers run``);
every figure is drawn from ``summary.json["experiment_a"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from causalverify.papers.summary import experiment_a_summary
from causalverify.report._figures import _RC, _save, new_figure, wrap_name


def experiment_a_entry(run_dir: Path, cells: pd.DataFrame | None) -> dict[str, Any] | None:
    """The ``experiment_a`` summary of a run folder, or ``None`` when it has no results."""
    return experiment_a_summary(run_dir, cells=cells)


def _bars(ax: Any, labels: list[str], series: dict[str, list[float]]) -> None:
    width = 0.8 / max(1, len(series))
    x = np.arange(len(labels))
    for i, (name, values) in enumerate(series.items()):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=name)
    ax.set_xticks(x, [wrap_name(name) for name in labels], rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.legend(frameon=False, fontsize=8)


def scorer_figure(entry: Mapping[str, Any], path: Path) -> Path:
    """L4 per model under each scorer (how much the text score moves with the scorer)."""
    models = list(entry["layers"])
    series = {
        s: [entry["layers"][m].get(s, {}).get("L4", {}).get("rate", np.nan) for m in models]
        for s in entry["scorers"]
    }
    fig = new_figure((1.0 * len(models) + 3.0, 3.6))
    ax = fig.subplots()
    _bars(ax, models, series)
    ax.set_ylabel("L4 (direction agreement)")
    ax.set_title("Experiment A: L4 by scorer")
    fig.tight_layout()
    return _save(fig, path)


def rid_figure(entry: Mapping[str, Any], path: Path) -> Path:
    """L4 per model in the standard and the RID arm on the same papers."""
    rows = {m: v["L4"] for m, v in entry["rid"]["models"].items() if "L4" in v}
    models = list(rows)
    series = {
        arm: [rows[m][arm] / rows[m]["n"] if rows[m]["n"] else np.nan for m in models]
        for arm in ("standard", "rid")
    }
    fig = new_figure((1.0 * len(models) + 3.0, 3.6))
    ax = fig.subplots()
    _bars(ax, models, series)
    for i, m in enumerate(models):
        ax.annotate(f"p={rows[m]['p_mcnemar']:.2g}", (i, 0.98), ha="center", va="top", fontsize=7)
    ax.set_ylabel(f"L4 ({entry['scorer']}), paired papers")
    ax.set_title("RID pre-commitment ablation (exact McNemar p)")
    fig.tight_layout()
    return _save(fig, path)


def write_experiment_a_figures(entry: dict[str, Any] | None, folder: Path) -> dict[str, Path]:
    """Draw the Experiment A figures of a summary's ``experiment_a`` section, if it has one."""
    if not entry:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    import matplotlib as mpl

    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        out["experiment_a_scorers"] = scorer_figure(entry, folder / "experiment_a_scorers.png")
        if entry.get("rid", {}).get("models"):
            out["experiment_a_rid"] = rid_figure(entry, folder / "experiment_a_rid.png")
    return out

"""The calibration section of the report: the metrics table and the reliability diagrams.

Present only when the run store holds calibration rows (``causalverify calibrate``); everything
shown is read from ``summary.json["calibration"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from causalverify.calibration import load_calibration, summarize_calibration
from causalverify.records import Summary
from causalverify.report._figures import _RC, _save, new_figure, wrap_name
from causalverify.report._tables import Table, num, pct

CAPTION: Final[str] = (
    "Reliability diagrams: accuracy (L2b+) against mean stated confidence in 10 equal-width "
    "bins, per model; marker area grows with the number of cells; the diagonal is perfect "
    "calibration."
)
_HEADER: Final[tuple[str, ...]] = (
    "model",
    "confidence",
    "n",
    "missing",
    "accuracy",
    "mean conf.",
    "ECE [95% CI]",
    "gap",
    "P(conf>0.8 | wrong)",
    "Brier",
    "AUROC",
    "missingness p",
)


def calibration_summary(
    run_dir: Path, *, seed: int, n_resamples: int, models: Sequence[str] | None = None
) -> dict[str, Any] | None:
    """The ``calibration`` summary of a run folder, or None when it holds no calibration rows."""
    frame = load_calibration(run_dir)
    if frame is None:
        return None
    order = None
    if models is not None:
        order = [m for m in models if m in set(frame["model"])]
        order += sorted(set(frame["model"]) - set(order))
    return summarize_calibration(frame, seed=seed, n_resamples=n_resamples, models=order)


def _ece(entry: Mapping[str, Any]) -> str:
    ci = entry.get("ece_ci")
    if entry.get("ece") is None:
        return "–"
    return f"{num(entry['ece'])} [{num(ci[0])}, {num(ci[1])}]" if ci else num(entry["ece"])


def _missingness(entry: Mapping[str, Any]) -> str:
    test = entry["missingness"]
    return num(test["p"]) if test["p"] is not None else "–"


def calibration_tables(calibration: Mapping[str, Any]) -> list[Table]:
    """One table per calibration protocol (rows: model × confidence type)."""
    tables = []
    for protocol, block in calibration["protocols"].items():
        rows = []
        for model in block.get("model_order", sorted(block["models"])):
            entry = block["models"][model]
            for kind in calibration["confidence_types"]:
                t = entry["types"][kind]
                rows.append(
                    (
                        model,
                        kind,
                        str(t["n"]),
                        str(t["n_missing"]),
                        pct(t["accuracy"]),
                        num(t["mean_confidence"]),
                        _ece(t),
                        num(t["confidence_gap"]),
                        pct(t["p_high_given_wrong"]),
                        num(t["brier"]),
                        num(t["auroc"]),
                        _missingness(t),
                    )
                )
        tables.append(
            Table(
                key=f"calibration-{protocol}",
                title=f"Calibration: stated confidence against L2b+ ({protocol} prompt)",
                header=_HEADER,
                rows=tuple(rows),
                note=(
                    f"ECE over {calibration['bins']} equal-width bins with a "
                    f"{calibration['n_resamples']}-resample within-model bootstrap interval; gap ="
                    " mean confidence when correct minus when wrong; missingness p: χ² test "
                    "(Yates) that a missing confidence is unrelated to correctness, – when "
                    "undefined (no missing values, or one class only). Unscoreable cells excluded."
                ),
            )
        )
    return tables


def reliability_figure(calibration: Mapping[str, Any], protocol: str, path: Path) -> Path:
    """Draw the reliability diagrams of one protocol (one panel per confidence type)."""
    kinds = list(calibration["confidence_types"])
    block = calibration["protocols"][protocol]
    models = {m: block["models"][m] for m in block.get("model_order", sorted(block["models"]))}
    import matplotlib as mpl

    fig = new_figure((4.0 * len(kinds) + 2.2, 4.0))
    axes = fig.subplots(1, len(kinds), sharey=True)
    for ax, kind in zip(np.atleast_1d(axes), kinds, strict=True):
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        for i, (model, entry) in enumerate(models.items()):
            bins = [b for b in entry["types"][kind]["bins"] if b["n"]]
            if not bins:
                continue
            x = [b["mean_confidence"] for b in bins]
            y = [b["accuracy"] for b in bins]
            color = mpl.colormaps["tab10"](i % 10)
            ax.plot(x, y, color=color, linewidth=1, label=wrap_name(model))
            ax.scatter(x, y, s=[10 + 6 * b["n"] ** 0.5 for b in bins], color=color)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel(f"{kind} confidence")
        ax.set_title(kind)
    np.atleast_1d(axes)[0].set_ylabel("accuracy (L2b+)")
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    if not handles:
        for ax in np.atleast_1d(axes)[1:]:
            handles, labels = ax.get_legend_handles_labels()
            if handles:
                break
    fig.suptitle(f"Calibration ({protocol} prompt)")
    fig.tight_layout(rect=(0, 0, 0.85, 1))
    fig.legend(
        handles, labels, fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(0.85, 0.5)
    )
    return _save(fig, path)


def write_calibration_figures(summary: Summary, folder: Path) -> dict[str, Path]:
    """Draw the reliability diagrams when the summary has a calibration section."""
    calibration = summary.calibration
    if not calibration:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    import matplotlib as mpl

    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        for protocol in calibration["protocols"]:
            name = f"calibration_{protocol}"
            out[name] = reliability_figure(calibration, protocol, folder / f"{name}.png")
    return out

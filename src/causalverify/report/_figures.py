"""Report figures drawn with matplotlib's Agg canvas, written as byte-reproducible PNGs.

No pyplot state is used: each figure is a fresh :class:`matplotlib.figure.Figure`. PNGs carry no
software or date metadata, so the same inputs give the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from causalverify.records import DEFAULT_TOLERANCE, Summary
from causalverify.records.summary import RateDetail

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI: Final[int] = 100
LAYER_LABELS: Final[dict[str, str]] = {"L1": "L1", "L2a": "L2a", "L2b": "L2b", "L2b_plus": "L2b+"}
FIGURES: Final[tuple[str, ...]] = (
    "cascade",
    "tolerance_sweep",
    "rel_error_cdf",
    "family_heatmap",
    "rank_agreement",
)
_RC: Final[dict[str, Any]] = {
    "svg.hashsalt": "causalverify",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def new_figure(figsize: tuple[float, float]) -> Figure:
    """A matplotlib figure of ``figsize`` inches (matplotlib is imported on first use only)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize)


def _save(fig: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    return path


def wrap_name(name: str, width: int = 20) -> str:
    """A unit's name as a figure label: broken over lines after ``/``, ``-``, ``_``, ``:`` or a
    space so no line is much longer than ``width`` (a long model name never pushes the axes out
    of the figure)."""
    lines, line = [], ""
    for piece in re.findall(r"[^/\-_: ]*[/\-_: ]?", name):
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    lines.append(line)
    return "\n".join(part for part in lines if part)


def _units_by_plus(summary: Summary) -> list[str]:
    return list(summary.order)


def _rate(value: float | None) -> float:
    return np.nan if value is None else float(value)


def _plus_rate(by_layer: Mapping[str, RateDetail] | None) -> float | None:
    """The L2b+ rate of a group of cells (None when the group has none)."""
    entry = (by_layer or {}).get("L2b_plus")
    return None if entry is None else entry.rate


def cascade(summary: Summary, path: Path) -> Path:
    """Grouped bars of L1 → L2a → L2b → L2b+ rates per unit, best L2b+ first."""
    units = _units_by_plus(summary)
    fig = new_figure((max(5.0, 1.1 * len(units) + 2), 3.6))
    ax = fig.add_subplot()
    width = 0.8 / len(LAYER_LABELS)
    x = np.arange(len(units))
    for i, (layer, label) in enumerate(LAYER_LABELS.items()):
        values = [_rate(summary.rates[u][layer]) for u in units]
        ax.bar(x + (i - 1.5) * width, values, width, label=label)
    ax.set_xticks(x, [wrap_name(u) for u in units], rotation=20, ha="right")
    ax.set_ylim(0, 1.2)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel("pass rate")
    ax.set_title("Execution cascade")
    ax.legend(ncols=4, loc="upper center", frameon=False)
    fig.tight_layout()
    return _save(fig, path)


def tolerance_sweep(summary: Summary, path: Path) -> Path:
    """L2b+ rate per unit as the relative-error tolerance varies."""
    detail = summary.tolerance_sweep_detail
    tolerances = sorted(detail, key=float)
    fig = new_figure((5.5, 3.6))
    ax = fig.add_subplot()
    for unit in _units_by_plus(summary):
        ys = [_rate(detail[t].rates.get(unit)) for t in tolerances]
        ax.plot([float(t) for t in tolerances], ys, marker="o", label=wrap_name(unit))
    ax.axvline(DEFAULT_TOLERANCE, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("tolerance on relative error")
    ax.set_ylabel("L2b+ rate")
    ax.set_ylim(0, 1.05)
    ax.set_title("Tolerance sweep")
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return _save(fig, path)


#: the CDF's left edge, below the clip at 1e-4 (zero errors)
_CDF_LEFT = 3e-5


def rel_error_cdf(summary: Summary, cells: pd.DataFrame, path: Path) -> Path:
    """Empirical CDF of the relative error of executed cells, per unit (log scale)."""
    usable = cells[(cells["L2b"] == 1) & (cells["unscoreable"] == 0) & cells["rel_error"].notna()]
    fig = new_figure((5.5, 3.6))
    ax = fig.add_subplot()
    for unit in _units_by_plus(summary):
        errs = np.sort(usable.loc[usable["unit"] == unit, "rel_error"].to_numpy(dtype=float))
        if errs.size:
            errs = np.clip(errs, 1e-4, 1e4)
            # from 0 left of the axis' first value to 1 at its right end, so that a unit whose
            # every error is 0 (clipped to 1e-4) is a visible step, not a line under the frame
            x = np.concatenate([[_CDF_LEFT], errs, [1e4]])
            y = np.concatenate([[0.0], np.arange(1, errs.size + 1) / errs.size, [1.0]])
            ax.step(x, y, where="post", label=wrap_name(unit))
    ax.set_xscale("log")
    ax.set_xlim(_CDF_LEFT, 1e4)
    ax.set_ylim(-0.03, 1.05)
    ax.axvline(DEFAULT_TOLERANCE, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("relative error |est - canonical| / |canonical| (clipped to 1e-4..1e4)")
    ax.set_ylabel("share of executed cells")
    ax.set_title("Relative-error CDF")
    if ax.get_legend_handles_labels()[0]:  # no line at all when no executed cell has an error
        ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return _save(fig, path)


def family_heatmap(summary: Summary, path: Path) -> Path:
    """Unit × design family heatmap of L2b+ rates, annotated."""
    units = _units_by_plus(summary)
    families = list(summary.families)
    by_family = summary.rates_by_family
    grid = np.array(
        [[_rate(_plus_rate(by_family.get(u, {}).get(f))) for f in families] for u in units]
    )
    fig = new_figure((1.3 * len(families) + 3, 0.45 * len(units) + 1.6))
    ax = fig.add_subplot()
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for (i, j), value in np.ndenumerate(grid):
        text = "–" if np.isnan(value) else f"{value:.2f}"
        ax.text(j, i, text, ha="center", va="center", color="white" if value < 0.6 else "black")
    ax.set_xticks(range(len(families)), families)
    ax.set_yticks(range(len(units)), [wrap_name(u) for u in units])
    ax.set_title("L2b+ rate by design family")
    fig.colorbar(image, ax=ax, fraction=0.05)
    fig.tight_layout()
    return _save(fig, path)


def rank_points(summary: Summary) -> dict[tuple[float, float], list[str]]:
    """``(L2b rank, L2b+ rank) -> units`` at that point, best first: tied units share one
    point and one label, so their names are never drawn over each other."""
    ranks_b = summary.rankings["L2b"].ranks
    ranks_p = summary.rankings["L2b_plus"].ranks
    points: dict[tuple[float, float], list[str]] = {}
    for unit in _units_by_plus(summary):
        points.setdefault((ranks_b[unit], ranks_p[unit]), []).append(unit)
    return points


def rank_agreement(summary: Summary, path: Path) -> Path:
    """Each unit's L2b rank against its L2b+ rank; the diagonal is perfect agreement."""
    n = len(_units_by_plus(summary))
    fig = new_figure((4.6, 4.2))
    ax = fig.add_subplot()
    ax.plot([0.5, n + 0.5], [0.5, n + 0.5], color="grey", linestyle=":", linewidth=1)
    for (x, y), together in rank_points(summary).items():
        ax.scatter(x, y, s=30 + 10 * (len(together) - 1))
        ax.annotate("\n".join(wrap_name(u) for u in together), (x, y), fontsize=7, xytext=(4, 3),
                    textcoords="offset points", va="top")  # fmt: skip
    tau = summary.rank_correlation["L2b"].kendall_tau
    shown = "n/a" if tau is None or n < 4 else f"{tau:.2f}"  # too few models for a τ
    ax.set_title(f"L2b rank vs L2b+ rank (Kendall τ = {shown})")
    ax.set_xlim(n + 0.5, 0.5)
    ax.set_ylim(n + 0.5, 0.5)
    ax.set_xlabel("rank by L2b (execution)")
    ax.set_ylabel("rank by L2b+ (correct estimate)")
    fig.tight_layout()
    return _save(fig, path)


def write_figures(summary: Summary, cells: pd.DataFrame, folder: Path) -> dict[str, Path]:
    """Draw every report figure into ``folder``; returns ``name -> path``."""
    folder.mkdir(parents=True, exist_ok=True)
    import matplotlib as mpl

    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        return {
            "cascade": cascade(summary, folder / "cascade.png"),
            "tolerance_sweep": tolerance_sweep(summary, folder / "tolerance_sweep.png"),
            "rel_error_cdf": rel_error_cdf(summary, cells, folder / "rel_error_cdf.png"),
            "family_heatmap": family_heatmap(summary, folder / "family_heatmap.png"),
            "rank_agreement": rank_agreement(summary, folder / "rank_agreement.png"),
        }

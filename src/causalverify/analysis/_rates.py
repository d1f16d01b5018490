"""Pass rates with scenario-clustered intervals, conditional pass rates and executed-but-wrong
counts.

Denominators: L1, L2a and L2b count every cell of a unit; L2b+ counts only scoreable cells
(unscoreable cells are reported separately and are never a fail). Intervals treat the scenario as
the cluster (see :mod:`._clustered`); :class:`Proportion` and :func:`proportion` keep the plain
Wilson interval for counts whose units are independent (papers, calibration). The conditional rate
P(L2b+ | L2b) and the executed-but-wrong share use the scoreable cells that executed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from causalverify.analysis._clustered import IntervalSettings, Rate, clustered_rate, wilson_bounds
from causalverify.analysis._frame import LAYERS


@dataclass(frozen=True, kw_only=True)
class Proportion:
    """A count over a denominator with its Wilson interval (``nan`` when the denominator is 0)."""

    k: int
    n: int
    rate: float
    lo: float
    hi: float

    def as_dict(self) -> dict[str, float | int]:
        """Plain dict for JSON output."""
        return {"k": self.k, "n": self.n, "rate": self.rate, "lo": self.lo, "hi": self.hi}


def wilson_interval(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    k, n
        Successes and trials, ``0 <= k <= n``.
    confidence
        Two-sided coverage.

    Returns
    -------
    tuple of float
        ``(lo, hi)``; ``(nan, nan)`` when ``n == 0``.
    """
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    return wilson_bounds(k, n, confidence=confidence)


def proportion(k: int, n: int) -> Proportion:
    """A :class:`Proportion` with its 95% Wilson interval."""
    lo, hi = wilson_interval(k, n)
    return Proportion(k=k, n=n, rate=k / n if n else math.nan, lo=lo, hi=hi)


#: optional per-cell bounds of L2b+ for cells the extractor left undecided (NaN elsewhere)
PLUS_BOUNDS: tuple[str, str] = ("L2b_plus_lower", "L2b_plus_upper")


def layer_counts(cells: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """``layer -> (passes, denominator)`` for one group of cells."""
    scoreable = cells["unscoreable"] == 0
    out = {layer: (int(cells[layer].sum()), len(cells)) for layer in LAYERS[:3]}
    out["L2b_plus"] = (int((cells["L2b_plus"] == 1).sum()), int(scoreable.sum()))
    return out


def _plus_rate(cells: pd.DataFrame, settings: IntervalSettings | None, salt: str) -> Rate:
    """L2b+ over the given scoreable cells; undecided cells (bounds present) enter as bounds."""
    values = cells["L2b_plus"].astype(float)
    lower = upper = None
    if all(col in cells.columns for col in PLUS_BOUNDS):
        undecided = cells[PLUS_BOUNDS[1]].notna() & (cells["L2b"] == 1)
        values = values.where(~undecided, np.nan)
        lower, upper = cells[PLUS_BOUNDS[0]].fillna(0.0), cells[PLUS_BOUNDS[1]].fillna(0.0)
    return clustered_rate(
        values.fillna(0.0) if lower is None else values,
        cells["scenario_id"],
        settings=settings,
        salt=salt,
        lower=lower,
        upper=upper,
    )


def layer_rates(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None, salt: str = ""
) -> dict[str, Rate]:
    """``layer -> Rate`` for one group of cells: L1, L2a, L2b over every cell, L2b+ over the
    scoreable ones, each clustered by scenario."""
    out = {
        layer: clustered_rate(
            cells[layer].astype(float), cells["scenario_id"], settings=settings, salt=salt + layer
        )
        for layer in LAYERS[:3]
    }
    scoreable = cells[cells["unscoreable"] == 0]
    out["L2b_plus"] = _plus_rate(scoreable, settings, salt + "L2b_plus")
    return out


def rates_by_unit(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, dict[str, Rate]]:
    """Per ranked unit (column ``unit``): a :class:`Rate` for every layer."""
    return {
        str(unit): layer_rates(group, settings=settings, salt=f"{unit}|")
        for unit, group in cells.groupby("unit", sort=True)
    }


def rates_by_unit_family(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, dict[str, dict[str, Rate]]]:
    """Per unit and design family (``method``): a :class:`Rate` for every layer."""
    return _rates_by(cells, "method", settings)


def rates_by_unit_language(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, dict[str, dict[str, Rate]]]:
    """Per unit and language: a :class:`Rate` for every layer."""
    return _rates_by(cells, "language", settings)


def _rates_by(
    cells: pd.DataFrame, column: str, settings: IntervalSettings | None
) -> dict[str, dict[str, dict[str, Rate]]]:
    out: dict[str, dict[str, dict[str, Rate]]] = {}
    for (unit, value), group in cells.groupby(["unit", column], sort=True):
        out.setdefault(str(unit), {})[str(value)] = layer_rates(
            group, settings=settings, salt=f"{unit}|{column}={value}|"
        )
    return out


def _executed_scoreable(cells: pd.DataFrame) -> pd.DataFrame:
    return cells[(cells["L2b"] == 1) & (cells["unscoreable"] == 0)]


def conditional_pass(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, Rate]:
    """P(L2b+ | L2b) per unit: passes among scoreable cells that executed."""
    executed = _executed_scoreable(cells)
    return {
        str(unit): _plus_rate(executed[executed["unit"] == unit], settings, f"{unit}|cond")
        for unit in sorted(cells["unit"].unique())
    }


def executed_wrong(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, Rate]:
    """Executed but wrong (L2b = 1 and L2b+ = 0, including "no estimate"), per unit and overall.

    Returns
    -------
    dict
        ``unit -> Rate`` plus the key ``"__all__"`` for the pooled count.
    """
    executed = _executed_scoreable(cells)
    out: dict[str, Rate] = {}

    def wrong(group: pd.DataFrame, salt: str) -> Rate:
        values = (group["L2b_plus"] == 0).astype(float)
        return clustered_rate(values, group["scenario_id"], settings=settings, salt=salt)

    for unit in sorted(cells["unit"].unique()):
        out[str(unit)] = wrong(executed[executed["unit"] == unit], f"{unit}|wrong")
    out["__all__"] = wrong(executed, "all|wrong")
    return out


def unscoreable_counts(cells: pd.DataFrame) -> dict[str, int]:
    """Number of unscoreable cells per unit."""
    counts = cells.groupby("unit", sort=True)["unscoreable"].sum()
    return {str(u): int(v) for u, v in counts.items()}


def rate_matrix(cells: pd.DataFrame, units: list[str]) -> dict[str, np.ndarray]:
    """``layer -> rates`` aligned to ``units`` (NaN for a unit without cells)."""
    rates = rates_by_unit(cells)
    return {
        layer: np.array([rates[u][layer].rate if u in rates else math.nan for u in units])
        for layer in LAYERS
    }

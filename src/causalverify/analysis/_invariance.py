"""Language invariance: does a model's correctness depend on the language it writes?

For a run with both languages, each model's R and Python cells are paired on the same scenario
and sample. Per layer (L2b, and L2b+ over pairs whose scenario is scoreable) it reports both
rates, the paired difference (Python minus R), the discordant pairs ``b`` (R passes, Python
fails) and ``c`` (Python passes, R fails), the exact two-sided McNemar p-value (a binomial test of
``min(b, c)`` in ``b + c`` trials with p = 1/2) and the share of pairs where the languages
disagree.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def mcnemar_exact(b: int, c: int) -> float | None:
    """Exact two-sided McNemar p-value of ``b`` and ``c`` discordant pairs (None when none)."""
    if b + c == 0:
        return None
    from scipy.stats import binomtest

    return float(binomtest(min(b, c), b + c, 0.5).pvalue)


def _layer(r: pd.Series, py: pd.Series) -> dict[str, Any]:
    n = len(r)
    b = int(((r == 1) & (py == 0)).sum())
    c = int(((r == 0) & (py == 1)).sum())
    rate_r = float(r.mean()) if n else None
    rate_py = float(py.mean()) if n else None
    return {
        "n": n,
        "r": rate_r,
        "python": rate_py,
        "difference": None if rate_r is None or rate_py is None else rate_py - rate_r,
        "b_r_only": b,
        "c_python_only": c,
        "p_mcnemar": mcnemar_exact(b, c),
        "disagree": (b + c) / n if n else None,
    }


def language_invariance(cells: pd.DataFrame) -> dict[str, Any] | None:
    """Per model, the paired R-against-Python comparison; None unless both languages ran."""
    if set(cells["language"].unique()) < {"r", "python"}:
        return None
    keys = ["scenario_id", "sample"]
    out: dict[str, Any] = {}
    for model in sorted(cells["model"].unique()):
        own = cells[cells["model"] == model]
        r = own[own["language"] == "r"].set_index(keys)
        py = own[own["language"] == "python"].set_index(keys)
        both = r.index.intersection(py.index)
        if both.empty:
            continue
        r, py = r.loc[both], py.loc[both]
        scoreable = (r["unscoreable"] == 0) & (py["unscoreable"] == 0)
        out[model] = {
            "pairs": len(both),
            "L2b": _layer(r["L2b"].astype(int), py["L2b"].astype(int)),
            "L2b_plus": _layer(
                r.loc[scoreable, "L2b_plus"].astype(int), py.loc[scoreable, "L2b_plus"].astype(int)
            ),
        }
    return out or None

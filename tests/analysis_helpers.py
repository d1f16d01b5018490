"""Hand-made per-cell tables for the analysis and report tests."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

FAMILIES = ("DID", "EVENT_STUDY", "IV", "RDD")


def cell(
    scenario: str,
    model: str,
    *,
    method: str = "DID",
    layers: str = "1111",
    rel_error: float = math.nan,
    estimated: float = math.nan,
    canonical: float = 0.2,
    status: str = "",
    exec_status: str = "",
    missing_package: str = "",
    language: str = "r",
) -> dict[str, Any]:
    """One cell; ``layers`` gives L1, L2a, L2b, L2b+ as a 4-character 0/1 string ("x" = NaN)."""
    flags = [math.nan if c == "x" else float(c) for c in layers]
    return {
        "scenario_id": scenario,
        "method": method,
        "difficulty": "easy",
        "model": model,
        "language": language,
        "sample": 0,
        "dgp_effect": canonical,
        "baseline_effect": canonical,
        "L1": int(flags[0]),
        "L2a": int(flags[1]),
        "L2b": int(flags[2]),
        "L2b_plus": flags[3],
        "estimated": estimated,
        "rel_error": rel_error,
        "unscoreable": 0,
        "status": status,
        "exec_status": exec_status,
        "missing_package": missing_package,
    }


def ranked_panel(
    pass_probs: Sequence[float], *, n_scenarios: int = 40, seed: int = 0
) -> pd.DataFrame:
    """A random panel: model ``m<i>`` executes with probability p and is then right with p."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_scenarios):
        method = FAMILIES[s % 4]
        canonical = 0.2 if s % 2 else -0.3
        for i, p in enumerate(pass_probs):
            ran = rng.random() < p
            if not ran:
                rows.append(cell(f"s{s:03d}", f"m{i}", method=method, layers="1100"))
                continue
            err = float(abs(rng.normal(0, 0.5 if rng.random() < p else 3.0)))
            rows.append(
                cell(
                    f"s{s:03d}",
                    f"m{i}",
                    method=method,
                    layers="111" + ("1" if err <= 0.5 else "0"),
                    rel_error=err,
                    estimated=canonical * (1 + err),
                    canonical=canonical,
                )
            )
    return pd.DataFrame(rows)

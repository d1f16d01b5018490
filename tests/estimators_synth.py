"""Small seeded data sets in the published CSV layouts, for the estimator tests.

These are deliberately simple stand-ins for the suite generators, so the estimator tests do not
depend on the scenario code: each family's DGP has a known effect ``beta``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def did(seed: int, *, units: int = 40, periods: int = 10, beta: float = 0.3) -> pd.DataFrame:
    """Balanced panel: half the units treated from the middle period on."""
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(1, units + 1), periods)
    period = np.tile(np.arange(1, periods + 1), units)
    treated = (unit <= units // 2).astype(int)
    post = (period > periods // 2).astype(int)
    y = (
        rng.normal(0, 1, units)[unit - 1]
        + 0.1 * period
        + beta * treated * post
        + rng.normal(0, 0.5, len(unit))
    )
    return pd.DataFrame(
        {
            "unit_id": unit,
            "period": period,
            "treated": treated,
            "post": post,
            "treat_x_post": treated * post,
            "y": np.round(y, 6),
        }
    )


def did_unbalanced(seed: int) -> pd.DataFrame:
    """A DID panel with a random fifth of the unit-periods missing."""
    full = did(seed)
    keep = np.random.default_rng(seed + 1).random(len(full)) > 0.2
    return full.loc[keep].reset_index(drop=True)


def event_study(seed: int, *, stocks: int = 30, beta: float = -0.02) -> pd.DataFrame:
    """Stock-days from -20 to 20 around the event; a constant daily abnormal return after it."""
    rng = np.random.default_rng(seed)
    days = np.arange(-20, 21)
    stock = np.repeat(np.arange(1, stocks + 1), len(days))
    day = np.tile(days, stocks)
    loading = rng.uniform(0.6, 1.4, stocks)
    mkt = rng.normal(0, 0.01, len(stock))
    ret = loading[stock - 1] * mkt + beta * (day >= 0) + rng.normal(0, 0.02, len(stock))
    return pd.DataFrame(
        {
            "stock_id": stock,
            "event_day": day,
            "ret": np.round(ret, 6),
            "mkt_ret": np.round(mkt, 6),
            "beta": np.round(loading[stock - 1], 4),
        }
    )


def iv(seed: int, *, n: int = 400, beta: float = 0.4) -> pd.DataFrame:
    """Binary instrument, endogenous x, one control, heteroskedastic errors."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    controls = rng.normal(0, 1, n)
    u = rng.normal(0, 1, n)
    x = 0.8 * z + 0.3 * controls + 0.5 * u + rng.normal(0, 1, n)
    y = beta * x + 0.2 * controls + u * (1 + 0.5 * np.abs(controls))
    return pd.DataFrame(
        {"y": np.round(y, 6), "x": np.round(x, 6), "z": z, "controls": np.round(controls, 6)}
    )


def rdd(seed: int, *, n: int = 600, beta: float = 0.25) -> pd.DataFrame:
    """Running variable on [0, 1], cutoff 0.5, treated above; bandwidth 0.3."""
    rng = np.random.default_rng(seed)
    running = rng.uniform(0, 1, n)
    treated = (running >= 0.5).astype(int)
    y = 0.5 * running + beta * treated + rng.normal(0, 0.15 * (1 + running), n)
    near = (np.abs(running - 0.5) <= 0.3).astype(int)
    return pd.DataFrame(
        {
            "running_var": np.round(running, 6),
            "treated": treated,
            "y": np.round(y, 6),
            "near_cutoff": near,
        }
    )


GENERATORS = {"did": did, "event_study": event_study, "iv": iv, "rdd": rdd}

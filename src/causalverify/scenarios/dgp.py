"""Data-generating processes of the four design families (BENCHMARK.md §2.1).

Each generator takes its size parameters, the true effect ``beta`` and a
:class:`numpy.random.Generator`; it never touches global random state. The draw order inside each
generator is fixed (documented per function), so the same generator state always gives the same
data. Values are rounded as in the published CSVs: 4 decimals for ``y``, ``x``, ``controls``,
``running_var`` and ``beta``; 6 decimals for ``ret`` and ``mkt_ret``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Final

import numpy as np
import pandas as pd

from causalverify.families import Family
from causalverify.scenarios._numbers import cutoff_flags, rounded
from causalverify.scenarios.modern import COLUMNS as MODERN_COLUMNS
from causalverify.scenarios.modern import generate_modern

#: Column layout of each family's CSV, in the published order.
COLUMNS: Final[dict[Family, tuple[str, ...]]] = {
    "did": ("unit_id", "period", "treated", "post", "treat_x_post", "y"),
    "event_study": ("stock_id", "event_day", "ret", "mkt_ret", "beta"),
    "iv": ("y", "x", "z", "controls"),
    "rdd": ("running_var", "treated", "y", "near_cutoff"),
    **MODERN_COLUMNS,  # type: ignore[dict-item]
}

#: Event days of every stock (inclusive) and the first day the effect is present.
EVENT_WINDOW: Final[tuple[int, int]] = (-10, 10)
EFFECT_START: Final[int] = 0
#: RDD cutoff and half-width of the ``near_cutoff`` band.
CUTOFF: Final[float] = 0.5
BANDWIDTH: Final[float] = 0.3


_r = rounded


def did_treat_start(n_periods: int) -> int:
    """First treated period of a panel with ``n_periods`` periods (``T/2 + 1``: 5 for 8, 6 for 10)."""
    return n_periods // 2 + 1


def generate_did(
    *, n_units: int, n_periods: int, sigma: float, beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Balanced panel; the first half of units is treated from period ``T/2 + 1`` on.

    Draw order: unit effects ``N(0, 0.3²)`` for units ``0..n-1``, then the idiosyncratic noise
    ``N(0, sigma²)`` in row order (period by period, units within a period).

    Returns
    -------
    pandas.DataFrame
        Columns ``unit_id, period, treated, post, treat_x_post, y``; rows ordered by period,
        then unit.
    """
    unit_effect = rng.normal(0.0, 0.3, n_units)
    noise = rng.normal(0.0, sigma, n_units * n_periods)
    unit_id = np.tile(np.arange(n_units, dtype=np.int64), n_periods)
    period = np.repeat(np.arange(1, n_periods + 1, dtype=np.int64), n_units)
    treated = (unit_id < n_units // 2).astype(np.int64)
    post = (period >= did_treat_start(n_periods)).astype(np.int64)
    treat_x_post = treated * post
    y = 0.5 * treated + 0.4 * post + beta * treat_x_post + unit_effect[unit_id] + noise
    return pd.DataFrame(
        {
            "unit_id": unit_id,
            "period": period,
            "treated": treated,
            "post": post,
            "treat_x_post": treat_x_post,
            "y": _r(y, 4),
        }
    )


def generate_event_study(
    *, n_stocks: int, sigma: float, beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Stock returns around an event with a constant per-day effect ``beta`` on days 0..+10.

    Draw order: stock betas ``U(0.7, 1.4)``, stock alphas ``N(0, 0.001²)``, market returns
    ``N(0.0003, 0.01²)`` in row order, then noise ``N(0, sigma²)`` in row order.

    Returns
    -------
    pandas.DataFrame
        Columns ``stock_id, event_day, ret, mkt_ret, beta``; rows ordered by stock, then day.
    """
    days = np.arange(EVENT_WINDOW[0], EVENT_WINDOW[1] + 1, dtype=np.int64)
    n_rows = n_stocks * days.size
    stock_beta = rng.uniform(0.7, 1.4, n_stocks)
    alpha = rng.normal(0.0, 0.001, n_stocks)
    mkt_ret = rng.normal(0.0003, 0.01, n_rows)
    noise = rng.normal(0.0, sigma, n_rows)
    stock_id = np.repeat(np.arange(n_stocks, dtype=np.int64), days.size)
    event_day = np.tile(days, n_stocks)
    effect = beta * (event_day >= EFFECT_START)
    ret = alpha[stock_id] + stock_beta[stock_id] * mkt_ret + effect + noise
    return pd.DataFrame(
        {
            "stock_id": stock_id,
            "event_day": event_day,
            "ret": _r(ret, 6),
            "mkt_ret": _r(mkt_ret, 6),
            "beta": _r(stock_beta[stock_id], 4),
        }
    )


def generate_iv(*, n: int, sigma: float, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    """Cross-section with a binary shifter ``z`` of an endogenous regressor ``x``.

    Draw order: ``z ~ Bernoulli(0.5)``, confounder ``u ~ N(0, 1)``, first-equation noise
    ``N(0, 0.3²)``, ``controls ~ N(0, 1)``, outcome noise ``N(0, sigma²)``.

    Returns
    -------
    pandas.DataFrame
        Columns ``y, x, z, controls``.
    """
    z = rng.binomial(1, 0.5, n).astype(np.int64)
    u = rng.normal(0.0, 1.0, n)
    x = 0.6 * z + 0.5 * u + rng.normal(0.0, 0.3, n)
    controls = rng.normal(0.0, 1.0, n)
    y = beta * x + 0.6 * u + rng.normal(0.0, sigma, n)
    return pd.DataFrame({"y": _r(y, 4), "x": _r(x, 4), "z": z, "controls": _r(controls, 4)})


def rdd_flags(running_var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``treated`` and ``near_cutoff`` of 4-decimal running values, compared exactly.

    The comparison is done on integers (ten-thousandths), so a value printed as ``0.8`` is inside
    the band ``[0.2, 0.8]`` exactly as the scenario text says, free of binary rounding.
    """
    return cutoff_flags(running_var, CUTOFF, BANDWIDTH)


def generate_rdd(*, n: int, sigma: float, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    """Cross-section treated at and above the cutoff 0.5 of a uniform running variable.

    Draw order: ``running_var ~ U(0, 1)``, then noise ``N(0, sigma²)``. The running variable is
    rounded to 4 decimals before ``treated`` and ``near_cutoff`` are derived from it, so the flags
    agree with the printed values.

    Returns
    -------
    pandas.DataFrame
        Columns ``running_var, treated, y, near_cutoff``.
    """
    running_var = _r(rng.uniform(0.0, 1.0, n), 4)
    noise = rng.normal(0.0, sigma, n)
    treated, near = rdd_flags(running_var)
    y = 0.3 * running_var + beta * treated + noise
    return pd.DataFrame(
        {"running_var": running_var, "treated": treated, "y": _r(y, 4), "near_cutoff": near}
    )


def generate(
    family: Family, params: Mapping[str, float | int], beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Dispatch to the family's generator.

    Parameters
    ----------
    family : Family
        The design family.
    params : Mapping
        Size and noise parameters: did ``n_units, n_periods, sigma``; event_study
        ``n_stocks, sigma``; iv and rdd ``n, sigma``.
    beta : float
        The true effect.
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    pandas.DataFrame
        The realised data in the family's published layout.
    """
    sigma = float(params["sigma"])
    if family == "did":
        return generate_did(
            n_units=int(params["n_units"]),
            n_periods=int(params["n_periods"]),
            sigma=sigma,
            beta=beta,
            rng=rng,
        )
    if family == "event_study":
        return generate_event_study(
            n_stocks=int(params["n_stocks"]), sigma=sigma, beta=beta, rng=rng
        )
    if family == "iv":
        return generate_iv(n=int(params["n"]), sigma=sigma, beta=beta, rng=rng)
    if family == "rdd":
        return generate_rdd(n=int(params["n"]), sigma=sigma, beta=beta, rng=rng)
    if family in MODERN_COLUMNS:
        return generate_modern(family, params, beta, rng)
    raise ValueError(f"unknown design family {family!r}")


def scenario_rng(suite_seed: int, index: int, attempt: int) -> np.random.Generator:
    """The generator of one draw: ``PCG64(SeedSequence([suite_seed, index, attempt]))``."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence([suite_seed, index, attempt]))
    )


def to_csv_bytes(data: pd.DataFrame) -> bytes:
    """Serialise data as published: header, no index, LF line ends, shortest float repr.

    Produces the same bytes as ``data.to_csv(index=False, lineterminator="\\n")`` for integer and
    float columns (Python's shortest round-trip ``repr``), several times faster.
    """
    columns = [data[name].tolist() for name in data.columns]
    lines = [",".join(map(str, data.columns))]
    lines.extend(",".join(map(repr, row)) for row in zip(*columns, strict=True))
    lines.append("")
    return "\n".join(lines).encode("utf-8")


def read_csv_bytes(raw: bytes) -> pd.DataFrame:
    """Read CSV bytes back exactly as a model's script would read the file."""
    return pd.read_csv(io.BytesIO(raw))

"""An independent numpy implementation of the ``paper`` canonical estimators.

It shares no code with the designs' canonical estimators (``canonical`` in the textbook design
modules of :mod:`causalverify.designs`) beyond column validation, so it stays out of them: fixed
effects are swept out by exact group means and dummy columns, coefficients come from the normal
equations, and every variance estimator is written out as its sandwich formula. Tests
use it to cross-check :func:`causalverify.estimators.canonical`; it is also a readable statement
of the formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from causalverify.designs import CanonicalResult, package_versions
from causalverify.designs.rdd import CUTOFF
from causalverify.errors import SuiteError
from causalverify.estimators.layout import validate_columns
from causalverify.families import Family

Array = npt.NDArray[np.float64]


def _col(data: pd.DataFrame, name: str) -> Array:
    return np.asarray(data[name].to_numpy(dtype=float), dtype=np.float64)


def _ols(y: Array, x: Array) -> tuple[Array, Array, Array]:
    """Return (beta, residuals, (X'X)^-1) from the normal equations.

    Cross products use ``einsum`` (plain loops, no threaded BLAS), so the cost stays predictable
    on a busy machine; the designs here are well conditioned, so the normal equations lose
    nothing measurable.
    """
    xtx = np.einsum("ni,nj->ij", x, x)
    scale = np.sqrt(np.diag(xtx))
    if np.any(scale == 0) or np.linalg.eigvalsh(xtx / np.outer(scale, scale))[0] < 1e-12:
        raise SuiteError("the design matrix is rank deficient: the data do not identify the effect")
    xtx_inv = np.linalg.inv(xtx)
    beta = np.linalg.solve(xtx, np.einsum("ni,n...->i...", x, y))
    return beta, y - x @ beta, xtx_inv


def _dummies(codes: pd.Series) -> Array:
    """Indicator columns for every level except the first."""
    levels, inverse = np.unique(codes.to_numpy(), return_inverse=True)
    out = np.zeros((len(codes), len(levels)), dtype=np.float64)
    out[np.arange(len(codes)), inverse] = 1.0
    return out[:, 1:]


def _result(estimate: float, se: float, n: int, method: str) -> CanonicalResult:
    return CanonicalResult(
        estimate=float(estimate),
        se=float(se),
        n=n,
        method=method,
        profile="paper",
        versions=package_versions("numpy", "pandas"),
    )


def _unit_demean(values: Array, units: pd.Series) -> Array:
    """Subtract unit means column by column (exact one-way fixed effects, any panel)."""
    _, inverse = np.unique(units.to_numpy(), return_inverse=True)
    counts = np.bincount(inverse).astype(np.float64)
    sums = np.zeros((counts.size, values.shape[1]))
    np.add.at(sums, inverse, values)
    return values - (sums / counts[:, None])[inverse]


def did(data: pd.DataFrame) -> CanonicalResult:
    """TWFE by least squares: unit effects swept out exactly, period effects as dummy columns;
    SE with ``n - 2`` residual df."""
    y = _col(data, "y")
    n = len(y)
    raw = np.column_stack([y, _col(data, "treat_x_post"), _dummies(data["period"])])
    swept = _unit_demean(raw, data["unit_id"])
    beta, resid, xtx_inv = _ols(swept[:, 0], swept[:, 1:])
    # (X'X)^-1[0,0] is 1 / (x~'x~) for the partialled-out regressor (Frisch-Waugh-Lovell).
    se = np.sqrt(resid @ resid / (n - 2) * xtx_inv[0, 0])
    return _result(
        beta[0], se, n, "numpy TWFE: unit means swept out, period dummies; iid SE, df n-2"
    )


def event_study(data: pd.DataFrame) -> CanonicalResult:
    """Pooled OLS with a post-event indicator; CR1 cluster-robust SE by stock."""
    y = _col(data, "ret")
    n = len(y)
    x = np.column_stack(
        [np.ones(n), _col(data, "mkt_ret"), (_col(data, "event_day") >= 0).astype(np.float64)]
    )
    beta, resid, bread = _ols(y, x)
    _, groups = np.unique(data["stock_id"].to_numpy(), return_inverse=True)
    n_groups = int(groups.max()) + 1
    scores = np.zeros((n_groups, x.shape[1]))
    np.add.at(scores, groups, x * resid[:, None])
    k = x.shape[1]
    factor = n_groups / (n_groups - 1) * (n - 1) / (n - k)
    vcov = factor * bread @ (scores.T @ scores) @ bread
    return _result(beta[2], np.sqrt(vcov[2, 2]), n, "numpy pooled OLS; CR1 SE by stock")


def iv(data: pd.DataFrame) -> CanonicalResult:
    """Just-identified 2SLS from the projection on the instruments; HC0 SE."""
    y = _col(data, "y")
    n = len(y)
    exog = np.column_stack([np.ones(n), _col(data, "controls")])
    x = np.column_stack([_col(data, "x"), exog])
    z = np.column_stack([_col(data, "z"), exog])
    # First stage: fitted values of every regressor on the instruments.
    first, _, _ = _ols(x, z)
    x_hat = z @ first
    beta, _, bread = _ols(y, x_hat)
    resid = y - x @ beta
    meat = (x_hat * resid[:, None] ** 2).T @ x_hat
    vcov = bread @ meat @ bread
    return _result(beta[0], np.sqrt(vcov[0, 0]), n, "numpy 2SLS; HC0 SE")


def rdd(data: pd.DataFrame) -> CanonicalResult:
    """Local linear OLS with an interaction on ``near_cutoff == 1``; HC3 SE."""
    keep = _col(data, "near_cutoff") == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the RDD estimator has no data")
    y = _col(data, "y")[keep]
    treated = _col(data, "treated")[keep]
    centred = _col(data, "running_var")[keep] - CUTOFF
    x = np.column_stack([np.ones(len(y)), treated, centred, centred * treated])
    beta, resid, bread = _ols(y, x)
    leverage = np.einsum("ij,jk,ik->i", x, bread, x)
    meat = (x * (resid / (1.0 - leverage))[:, None] ** 2).T @ x
    vcov = bread @ meat @ bread
    return _result(beta[1], np.sqrt(vcov[1, 1]), len(y), "numpy local linear OLS; HC3 SE")


_IMPLEMENTATIONS: Final[dict[Family, Callable[[pd.DataFrame], CanonicalResult]]] = {
    "did": did,
    "event_study": event_study,
    "iv": iv,
    "rdd": rdd,
}


def closed_form(data: pd.DataFrame, family: Family) -> CanonicalResult:
    """Compute the ``paper`` canonical estimate with plain numpy linear algebra.

    Parameters
    ----------
    data : pandas.DataFrame
        The data in the family's published CSV layout.
    family : {"did", "event_study", "iv", "rdd"}
        The design family.

    Returns
    -------
    CanonicalResult
        Same estimand and variance estimator as :func:`causalverify.estimators.canonical`.

    Raises
    ------
    SuiteError
        If a required column is missing or malformed, or the design is rank deficient.
    """
    validate_columns(data, family)
    return _IMPLEMENTATIONS[family](data)

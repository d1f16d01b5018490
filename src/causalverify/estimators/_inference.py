"""Canonical inference: the canonical estimate's standard error under each variance estimator a
competent analysis of the design may use, on the realised data.

Variants (``n`` observations, ``G`` clusters, ``e`` the residuals; every SE is of the canonical
estimate of profile ``paper``):

- DID (two-way fixed effects; clusters: units) and event study (pooled market model; clusters:
  stocks):

  - ``cr1``: cluster-robust, ``G/(G-1) * (n-1)/(n-K)`` as fixest and Stata's ``reghdfe`` compute
    it: fixed effects nested in the clusters (the unit effects) are not counted in ``K``
    (pyfixest's default). The reference variant.
  - ``cr1_dummies`` (DID): the same with every fixed-effect dummy counted in ``K`` (R's
    ``lm(... + factor(unit))`` with ``sandwich::vcovCL(type = "HC1")``, ``estimatr``'s
    ``se_type = "stata"``, Stata's ``areg``).
  - ``hc1``: heteroskedasticity-robust, ``n/(n-K)``, ``K`` the full rank with the dummies.
  - ``classical``: ``e'e/(n-K)``, ``K`` the full rank (``lm`` with dummies, fixest ``iid``).
  - ``classical_within`` (DID): ``e'e/(n-2)``, the regression on the within-transformed data
    with an intercept (the published canonical's SE).

- IV (just-identified 2SLS, residuals from the structural equation): ``hc1`` (``n/(n-K)``, the
  reference), ``hc0`` (the published canonical's) and ``classical`` (``e'e/(n-K)``).
- RDD (local linear inside ``near_cutoff``): ``hc1`` (the reference) and ``hc3`` (the published
  canonical's).

The modern families have no variants here (None).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs.did import DEMEAN_TOL
from causalverify.designs.rdd import CUTOFF
from causalverify.errors import SuiteError
from causalverify.estimators.layout import validate_columns
from causalverify.families import Family
from causalverify.records import CanonicalInference

#: the variant the plausible band and the significance call use, by family
REFERENCE: Final[dict[str, str]] = {"did": "cr1", "event_study": "cr1", "iv": "hc1", "rdd": "hc1"}


def canonical_inference(data: pd.DataFrame, family: Family) -> CanonicalInference | None:
    """The canonical SE of ``data`` under each variant of the family (module docstring).

    Returns None for the families without variants (the modern designs).

    Raises
    ------
    SuiteError
        If a required column is missing or the data do not identify the effect.
    """
    compute = _FAMILIES.get(family)
    if compute is None:
        return None
    validate_columns(data, family)
    ses = compute(data)
    if not all(math.isfinite(v) and v > 0 for v in ses.values()):
        raise SuiteError(f"the {family} canonical standard errors are not finite: {ses}")
    return CanonicalInference(ses=ses, reference=REFERENCE[family])


def _cluster_meat(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``sum_g s_g s_g'`` of the score rows summed within each cluster."""
    codes, _ = pd.factorize(groups, sort=True)
    sums = np.zeros((int(codes.max()) + 1, scores.shape[1]))
    np.add.at(sums, codes, scores)
    meat: np.ndarray = sums.T @ sums
    return meat


def _ols_ses(
    x: np.ndarray, y: np.ndarray, column: int, *, groups: np.ndarray | None, rank: int
) -> dict[str, float]:
    """SE of coefficient ``column`` of OLS of ``y`` on ``x``: classical and HC1 with ``rank``
    parameters, CR1 with ``x``'s own columns (plus nothing absorbed) when ``groups`` is given."""
    n = len(y)
    bread = np.linalg.inv(x.T @ x)
    beta = bread @ (x.T @ y)
    e = y - x @ beta
    scores = x * e[:, None]
    out = {
        "classical": float(math.sqrt(float(e @ e) / (n - rank) * bread[column, column])),
        "hc1": float(
            math.sqrt((bread @ (scores.T @ scores) @ bread)[column, column] * n / (n - rank))
        ),
    }
    if groups is not None:
        g = len(np.unique(groups))
        k = x.shape[1]
        v = bread @ _cluster_meat(scores, groups) @ bread
        out["cr1"] = float(math.sqrt(v[column, column] * g / (g - 1) * (n - 1) / (n - k)))
    return out


def _did(data: pd.DataFrame) -> dict[str, float]:
    from pyfixest.core import demean

    n = len(data)
    yx = np.column_stack(
        [data["y"].to_numpy(dtype=float), data["treat_x_post"].to_numpy(dtype=float)]
    )
    units = data["unit_id"].to_numpy()
    codes = np.column_stack(
        [pd.factorize(data[col], sort=True)[0] for col in ("unit_id", "period")]
    ).astype(np.uint64)
    within, converged = demean(yx, codes, np.ones(n), tol=DEMEAN_TOL)
    if not converged:  # pragma: no cover - MAP converges on any finite panel
        raise SuiteError("the two-way demeaning did not converge")
    y, x = within[:, 0], within[:, 1]
    sxx = math.fsum(x * x)
    e = y - math.fsum(x * y) / sxx * x
    ssr = math.fsum(e * e)
    n_units = len(np.unique(units))
    n_periods = len(np.unique(data["period"].to_numpy()))
    rank = n_units + n_periods  # the effect, an intercept and (n_units-1) + (n_periods-1) dummies
    hc0 = math.fsum((x * e) ** 2) / sxx**2
    sums = pd.Series(x * e).groupby(pd.factorize(units, sort=True)[0]).sum().to_numpy()
    cr0 = math.fsum(sums * sums) / sxx**2
    g = n_units
    cluster = g / (g - 1) * (n - 1)
    return {
        # the unit effects are nested in the unit clusters: K counts the effect and the periods
        "cr1": math.sqrt(cr0 * cluster / (n - 1 - n_periods)),
        "cr1_dummies": math.sqrt(cr0 * cluster / (n - rank)),
        "hc1": math.sqrt(hc0 * n / (n - rank)),
        "classical": math.sqrt(ssr / (n - rank) / sxx),
        "classical_within": math.sqrt(ssr / (n - 2) / sxx),
    }


def _event_study(data: pd.DataFrame) -> dict[str, float]:
    ret = data["ret"].to_numpy(dtype=float)
    post = (data["event_day"].to_numpy(dtype=float) >= 0).astype(float)
    x = np.column_stack([np.ones_like(ret), data["mkt_ret"].to_numpy(dtype=float), post])
    return _ols_ses(x, ret, 2, groups=data["stock_id"].to_numpy(), rank=3)


def _iv(data: pd.DataFrame) -> dict[str, float]:
    y = data["y"].to_numpy(dtype=float)
    ones = np.ones_like(y)
    controls = data["controls"].to_numpy(dtype=float)
    x = np.column_stack([data["x"].to_numpy(dtype=float), ones, controls])
    z = np.column_stack([data["z"].to_numpy(dtype=float), ones, controls])
    n, k = x.shape
    # the fitted regressors: projection of x on the instruments
    xhat = z @ np.linalg.lstsq(z, x, rcond=None)[0]
    bread = np.linalg.inv(xhat.T @ x)
    beta = bread @ (xhat.T @ y)
    e = y - x @ beta  # structural residuals (the actual x, not its fitted value)
    scores = xhat * e[:, None]
    hc0 = (bread @ (scores.T @ scores) @ bread.T)[0, 0]
    classical = float(e @ e) / (n - k) * np.linalg.inv(xhat.T @ xhat)[0, 0]
    return {
        "hc1": math.sqrt(hc0 * n / (n - k)),
        "hc0": math.sqrt(hc0),
        "classical": math.sqrt(classical),
    }


def _rdd(data: pd.DataFrame) -> dict[str, float]:
    keep = data["near_cutoff"].to_numpy(dtype=float) == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the RDD estimator has no data")
    y = data["y"].to_numpy(dtype=float)[keep]
    treated = data["treated"].to_numpy(dtype=float)[keep]
    centred = data["running_var"].to_numpy(dtype=float)[keep] - CUTOFF
    x = np.column_stack([np.ones_like(y), treated, centred, centred * treated])
    n, k = x.shape
    bread = np.linalg.inv(x.T @ x)
    e = y - x @ (bread @ (x.T @ y))
    leverage = np.einsum("ij,jk,ik->i", x, bread, x)
    hc1 = _sandwich(x, bread, e**2)[1, 1] * n / (n - k)
    hc3 = _sandwich(x, bread, (e / (1 - leverage)) ** 2)[1, 1]
    return {"hc1": math.sqrt(hc1), "hc3": math.sqrt(hc3)}


def _sandwich(x: np.ndarray, bread: np.ndarray, weights: np.ndarray) -> np.ndarray:
    out: np.ndarray = bread @ ((x * weights[:, None]).T @ x) @ bread
    return out


_FAMILIES: Final = {"did": _did, "event_study": _event_study, "iv": _iv, "rdd": _rdd}


#: how a variance estimator is written (fit log, ``VCOV:`` lines), first match wins
_KINDS: Final = (
    ("cluster", ("cluster", "crv", "cr0", "cr1", "cr2", "cr3", "vcovcl", " by ")),
    ("classical", ("classical", "nonrobust", "iid", "unadjusted", "homoskedastic", "spherical")),
    ("hc0", ("hc0", "debiased=false")),
    ("hc1", ("hc1", "hetero", "stata", "debiased=true")),
    ("hc2", ("hc2",)),
    ("hc3", ("hc3",)),
)


def vcov_kind(text: str | None) -> str | None:
    """The kind of variance estimator a description names: ``cluster``, ``hc0``..``hc3``,
    ``classical``, or None (unknown).

    Reads the fit log's ``vcov`` (:class:`~causalverify.records.FitEntry`) and a script's
    ``VCOV:`` line alike: ``CRV1 by unit_id``, ``vcovCL, cluster = ~id``, ``stata by id`` are
    ``cluster``; linearmodels' ``robust; debiased=False`` is ``hc0``, ``... True`` ``hc1``;
    ``stata`` without clusters and pyfixest's ``hetero`` are ``hc1``.
    """
    if not text:
        return None
    low = f" {text.lower()} "
    for kind, needles in _KINDS:
        if any(needle in low for needle in needles):
            return kind
    return None

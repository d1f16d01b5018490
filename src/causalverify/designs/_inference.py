"""Variance machinery shared by the designs' canonical standard-error variants."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True, kw_only=True)
class SeVariants:
    """The canonical estimate's standard error under each variance estimator a competent analysis
    of the design may use (:func:`causalverify.estimators.canonical_inference`)."""

    #: the SE of each variant (``cr1``, ``hc1``, ``classical`` ...) on a realised data set
    compute: Callable[[pd.DataFrame], dict[str, float]]
    #: the variant the plausible band and the significance call use
    reference: str


def cluster_meat(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``sum_g s_g s_g'`` of the score rows summed within each cluster."""
    codes, _ = pd.factorize(groups, sort=True)
    sums = np.zeros((int(codes.max()) + 1, scores.shape[1]))
    np.add.at(sums, codes, scores)
    meat: np.ndarray = sums.T @ sums
    return meat


def ols_ses(
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
        v = bread @ cluster_meat(scores, groups) @ bread
        out["cr1"] = float(math.sqrt(v[column, column] * g / (g - 1) * (n - 1) / (n - k)))
    return out


def sandwich(x: np.ndarray, bread: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``bread X' diag(weights) X bread``: the heteroskedasticity-robust covariance's sandwich."""
    out: np.ndarray = bread @ ((x * weights[:, None]).T @ x) @ bread
    return out

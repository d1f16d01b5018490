"""Intervals for rates whose cells are clustered by scenario, and for paired differences.

A scenario's cells (its languages, samples and repair turns) share the scenario's difficulty, so
they are not independent draws: the *scenario* is the unit of resampling and of variance. Three
interval methods are offered (:data:`CI_METHODS`):

``cluster`` (the default)
    The share of passing cells with the cluster-robust standard error of a mean (the sandwich
    estimator with the small-sample factor C/(C−1), as ``statsmodels`` computes for OLS on a
    constant with ``cov_type="cluster"``) and a t interval on C−1 degrees of freedom, clipped to
    [0, 1]. When the scenarios show no variation at all (every scenario has the same share, e.g.
    0 of n or n of n) the standard error is 0 and says nothing; the interval is then Wilson's on
    the number of scenarios, as if each scenario were one observation (``method`` records
    ``cluster-wilson``).
``bootstrap``
    A percentile interval over resamples of scenarios drawn with replacement (all cells of a drawn
    scenario come along), seeded by :class:`IntervalSettings`.
``wilson``
    Wilson's score interval treating every cell as independent: right only for a single-sample,
    single-language, single-turn view.

Cells whose outcome is undecided (e.g. an extraction whose candidates do not all pass or all
fail) enter as bounds: pass ``values`` with NaN there and ``lower``/``upper`` with the worst and
best outcome; the interval then runs from the lower bound's low end to the upper bound's high end.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

CiMethod = Literal["cluster", "bootstrap", "wilson"]
CI_METHODS: Final[tuple[str, ...]] = ("cluster", "bootstrap", "wilson")
#: the seed of every resampling analysis unless one is given
DEFAULT_SEED: Final[int] = 20260
N_RESAMPLES: Final[int] = 1000

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class IntervalSettings:
    """How intervals are computed: method, coverage, and the bootstrap's seed and resamples."""

    method: CiMethod = "cluster"
    confidence: float = 0.95
    seed: int = DEFAULT_SEED
    n_resamples: int = N_RESAMPLES

    def rng(self, salt: str) -> np.random.Generator:
        """A generator for one named quantity: the same (seed, salt) always draws the same
        resamples, whatever else was computed before."""
        return np.random.default_rng([self.seed, zlib.crc32(salt.encode("utf-8"))])

    def as_dict(self) -> dict[str, Any]:
        """What ``summary.json["intervals"]`` records."""
        out: dict[str, Any] = {
            "method": self.method,
            "confidence": self.confidence,
            "cluster": "scenario",
        }
        if self.method == "bootstrap":
            out.update(seed=self.seed, n_resamples=self.n_resamples)
        return out


@dataclass(frozen=True, kw_only=True)
class Rate:
    """A share of cells with its interval.

    ``k`` passes of ``n`` cells in ``clusters`` scenarios. With undecided cells, ``k`` and
    ``rate`` count them as fails and ``k_upper``/``rate_upper`` as passes; ``lo`` is the lower
    bound's low end and ``hi`` the upper bound's high end. ``se`` is the clustered standard error
    (of the lower bound); ``method`` the interval actually used.
    """

    k: int
    n: int
    clusters: int
    rate: float
    lo: float
    hi: float
    se: float
    method: str
    undecided: int = 0
    k_upper: int | None = None
    rate_upper: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        out: dict[str, Any] = {
            "k": self.k,
            "n": self.n,
            "clusters": self.clusters,
            "rate": self.rate,
            "lo": self.lo,
            "hi": self.hi,
            "se": self.se,
            "method": self.method,
        }
        if self.undecided:
            out.update(undecided=self.undecided, k_upper=self.k_upper, rate_upper=self.rate_upper)
        return out


def wilson_bounds(k: float, n: float, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for ``k`` successes in ``n`` trials (``k`` may be fractional)."""
    if n <= 0:
        return (math.nan, math.nan)
    from scipy import stats

    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def cluster_codes(clusters: Sequence[object] | pd.Series | np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes 0..C−1 of the cluster labels and C."""
    labels = np.asarray(clusters).astype(str)
    uniques, codes = np.unique(labels, return_inverse=True)
    return np.asarray(codes, dtype=np.int64).ravel(), len(uniques)


def clustered_se(values: FloatArray, codes: np.ndarray, n_clusters: int) -> float:
    """Cluster-robust standard error of the mean of ``values`` (C/(C−1) factor; NaN if C < 2)."""
    n = len(values)
    if n == 0 or n_clusters < 2:
        return math.nan
    resid = values - values.mean()
    sums = np.bincount(codes, weights=resid, minlength=n_clusters)
    var = n_clusters / (n_clusters - 1) * float(np.sum(sums**2)) / (n * n)
    return math.sqrt(max(var, 0.0))


def t_quantile(confidence: float, n_clusters: int) -> float:
    """The two-sided t critical value on C−1 degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(1 - (1 - confidence) / 2, n_clusters - 1))


def _resample_weights(rng: np.random.Generator, n_clusters: int, n_resamples: int) -> FloatArray:
    """How often each cluster is drawn in each resample (``n_resamples × C``)."""
    draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    weights = np.zeros((n_resamples, n_clusters))
    rows = np.repeat(np.arange(n_resamples), n_clusters)
    np.add.at(weights, (rows, draws.ravel()), 1.0)
    return weights


def _percentile(values: FloatArray, confidence: float) -> tuple[float, float]:
    valid = values[~np.isnan(values)]
    if valid.size == 0:
        return (math.nan, math.nan)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(valid, [alpha, 1 - alpha])
    return (float(lo), float(hi))


def _one_interval(
    y: FloatArray,
    codes: np.ndarray,
    n_clusters: int,
    settings: IntervalSettings,
    weights: FloatArray | None,
) -> tuple[float, float, float, str]:
    """``(lo, hi, se, method used)`` for the mean of ``y``."""
    p = float(y.mean())
    se = clustered_se(y, codes, n_clusters)
    if settings.method == "wilson":
        lo, hi = wilson_bounds(float(y.sum()), len(y), confidence=settings.confidence)
        return (lo, hi, se, "wilson")
    if settings.method == "bootstrap" and weights is not None:
        num = np.bincount(codes, weights=y, minlength=n_clusters)
        den = np.bincount(codes, minlength=n_clusters).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = (weights @ num) / (weights @ den)
        lo, hi = _percentile(rates, settings.confidence)
        return (lo, hi, se, "bootstrap")
    if math.isnan(se):
        return (math.nan, math.nan, se, "cluster")
    if se == 0.0:
        lo, hi = wilson_bounds(p * n_clusters, n_clusters, confidence=settings.confidence)
        return (lo, hi, se, "cluster-wilson")
    half = t_quantile(settings.confidence, n_clusters) * se
    return (max(0.0, p - half), min(1.0, p + half), se, "cluster")


def clustered_rate(
    values: Sequence[float] | np.ndarray | pd.Series,
    clusters: Sequence[object] | np.ndarray | pd.Series,
    *,
    settings: IntervalSettings | None = None,
    salt: str = "",
    lower: Sequence[float] | np.ndarray | pd.Series | None = None,
    upper: Sequence[float] | np.ndarray | pd.Series | None = None,
) -> Rate:
    """The share of passing cells and its interval, cells clustered by ``clusters``.

    Parameters
    ----------
    values
        One 0/1 outcome per counted cell; NaN marks an undecided cell (then ``lower`` and
        ``upper`` give its worst and best outcome; without them NaN counts as a fail).
    clusters
        The scenario of each cell.
    settings
        Interval method and coverage (default: clustered t interval, 95%).
    salt
        Names the quantity, so its bootstrap draws do not depend on what was computed before.
    lower, upper
        Per-cell bounds for undecided cells (ignored where ``values`` is not NaN).

    Returns
    -------
    Rate
        NaN rate and interval when there is no cell.
    """
    settings = settings or IntervalSettings()
    y = np.asarray(values, dtype=float)
    undecided = np.isnan(y)
    low = np.where(undecided, 0.0 if lower is None else np.asarray(lower, dtype=float), y)
    high = np.where(undecided, 0.0 if upper is None else np.asarray(upper, dtype=float), y)
    low = np.nan_to_num(low, nan=0.0)
    high = np.nan_to_num(high, nan=0.0)
    n_undecided = int(undecided.sum()) if upper is not None else 0
    codes, n_clusters = cluster_codes(clusters)
    n = len(y)
    if n == 0:
        nan = math.nan
        return Rate(k=0, n=0, clusters=0, rate=nan, lo=nan, hi=nan, se=nan, method="none")
    weights = None
    if settings.method == "bootstrap":
        weights = _resample_weights(settings.rng(salt), n_clusters, settings.n_resamples)
    lo, hi_low, se, method = _one_interval(low, codes, n_clusters, settings, weights)
    hi = hi_low
    if n_undecided:
        _, hi, _, _ = _one_interval(high, codes, n_clusters, settings, weights)
    return Rate(
        k=int(low.sum()),
        n=n,
        clusters=n_clusters,
        rate=float(low.mean()),
        lo=lo,
        hi=hi,
        se=se,
        method=method,
        undecided=n_undecided,
        k_upper=int(high.sum()) if n_undecided else None,
        rate_upper=float(high.mean()) if n_undecided else None,
    )


@dataclass(frozen=True, kw_only=True)
class Difference:
    """A paired difference (B − A) of 0/1 outcomes over ``n`` pairs in ``clusters`` scenarios.

    ``a_only`` pairs pass for A alone, ``b_only`` for B alone. ``p`` is the exact two-sided
    scenario sign-flip test (:func:`sign_flip_p`); ``null_se`` the standard error of the mean
    difference under that null, which gives the minimum detectable difference.
    """

    n: int
    clusters: int
    rate_a: float
    rate_b: float
    diff: float
    lo: float
    hi: float
    se: float
    p: float
    a_only: int
    b_only: int
    null_se: float
    method: str

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return {
            "n": self.n,
            "clusters": self.clusters,
            "rate_a": self.rate_a,
            "rate_b": self.rate_b,
            "difference": self.diff,
            "lo": self.lo,
            "hi": self.hi,
            "se": self.se,
            "p": self.p,
            "a_only": self.a_only,
            "b_only": self.b_only,
            "null_se": self.null_se,
            "method": self.method,
        }


def sign_flip_p(cluster_sums: Sequence[int] | np.ndarray) -> float:
    """Exact two-sided p-value of a scenario sign-flip (paired permutation) test.

    Under the null that A and B are exchangeable within each scenario, each scenario's summed
    difference ``D_g`` is equally likely to have either sign; the statistic is ``T = Σ D_g``. The
    null distribution of ``Σ ±D_g`` is built exactly by convolution (the ``D_g`` are integers),
    and ``p = P(|T*| ≥ |T|)``. With one pair per scenario this is the exact McNemar test.
    Returns 1.0 when no scenario differs.
    """
    d = np.abs(np.asarray(cluster_sums, dtype=np.int64))
    observed = abs(int(np.asarray(cluster_sums, dtype=np.int64).sum()))
    d = d[d > 0]
    if d.size == 0:
        return 1.0
    total = int(d.sum())
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0  # index total is a sum of 0
    for a in d:
        a = int(a)
        shifted = np.zeros_like(dist)
        shifted[a:] += dist[:-a]
        shifted[:-a] += dist[a:]
        dist = 0.5 * shifted
    values = np.arange(-total, total + 1)
    return float(min(1.0, dist[np.abs(values) >= observed].sum()))


def paired_difference(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    clusters: Sequence[object] | np.ndarray | pd.Series,
    *,
    settings: IntervalSettings | None = None,
    salt: str = "",
) -> Difference:
    """The mean of ``b − a`` over pairs of 0/1 outcomes, with its clustered interval and the
    exact scenario sign-flip p-value.

    The interval is the clustered t interval on C−1 degrees of freedom (``cluster`` and
    ``wilson``, which has no paired form) or the scenario bootstrap (``bootstrap``), clipped to
    [−1, 1]. When every scenario differs by the same amount (no discordant pair at all, say) the
    clustered SE is 0; the interval is then Wilson's for the share of scenarios that differ
    (``method: "cluster-wilson"``), so "no difference seen in 40 scenarios" reads as ±9 pp, not
    as exactly 0.
    """
    settings = settings or IntervalSettings()
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    d = y - x
    codes, n_clusters = cluster_codes(clusters)
    n = len(d)
    if n == 0:
        nan = math.nan
        return Difference(
            n=0,
            clusters=0,
            rate_a=nan,
            rate_b=nan,
            diff=nan,
            lo=nan,
            hi=nan,
            se=nan,
            p=nan,
            a_only=0,
            b_only=0,
            null_se=nan,
            method="none",
        )
    mean = float(d.mean())
    se = clustered_se(d, codes, n_clusters)
    sums = np.bincount(codes, weights=d, minlength=n_clusters)
    null_se = math.sqrt(float(np.sum(sums**2))) / n
    if settings.method == "bootstrap":
        weights = _resample_weights(settings.rng(salt), n_clusters, settings.n_resamples)
        den = np.bincount(codes, minlength=n_clusters).astype(float)
        lo, hi = _percentile((weights @ sums) / (weights @ den), settings.confidence)
        method = "bootstrap"
    elif math.isnan(se):
        lo, hi, method = math.nan, math.nan, "cluster"
    elif se == 0.0:
        # every scenario differs by the same amount (typically: no pair is discordant); the
        # clustered SE is 0 and says nothing, so bound the share of scenarios that differ by
        # Wilson's interval on the scenarios instead of claiming an exact difference
        w_lo, w_hi = wilson_bounds(
            abs(mean) * n_clusters, n_clusters, confidence=settings.confidence
        )
        if mean == 0:
            lo, hi = -w_hi, w_hi
        else:
            lo, hi = (w_lo, w_hi) if mean > 0 else (-w_hi, -w_lo)
        method = "cluster-wilson"
    else:
        half = t_quantile(settings.confidence, n_clusters) * se
        lo, hi, method = max(-1.0, mean - half), min(1.0, mean + half), "cluster"
    return Difference(
        n=n,
        clusters=n_clusters,
        rate_a=float(x.mean()),
        rate_b=float(y.mean()),
        diff=mean,
        lo=lo,
        hi=hi,
        se=se,
        p=sign_flip_p(np.rint(sums).astype(np.int64)),
        a_only=int(((x == 1) & (y == 0)).sum()),
        b_only=int(((x == 0) & (y == 1)).sum()),
        null_se=null_se,
        method=method,
    )


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (NaN stays NaN, not counted)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(len(p), math.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    order = valid[np.argsort(p[valid], kind="stable")]
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        out[idx] = running
    return [float(v) for v in out]


def minimum_detectable_difference(
    null_se: float, n_clusters: int, *, alpha: float = 0.05, power: float = 0.80
) -> float:
    """The smallest true difference a two-sided test at ``alpha`` detects with ``power``:
    ``(t[1−α/2] + t[power]) · SE`` on C−1 degrees of freedom (NaN when C < 2)."""
    if n_clusters < 2 or math.isnan(null_se):
        return math.nan
    df = n_clusters - 1
    from scipy import stats

    return float((stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * null_se)

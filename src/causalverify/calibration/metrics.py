"""Calibration metrics of stated confidences against 0/1 correctness (L2b+).

Pure functions over two equally long arrays: ``confidence`` (floats in [0, 1], no missing values)
and ``correct`` (0/1). Undefined values (an empty class, no data) are ``None``, never NaN.

Binning: 10 equal-width bins, left-closed ``[k/10, (k+1)/10)``, with 1.0 in the last bin. The bin
of a value is ``floor(round(10 * c, 9))`` so that decimal edges such as 0.3 or 0.7 fall in the
bin they name despite binary floating point (``np.digitize`` on ``linspace`` edges puts 0.3 in
the bin below).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

N_BINS: Final[int] = 10
HIGH_CONFIDENCE: Final[float] = 0.8


@dataclass(frozen=True)
class Bin:
    """One reliability bin: its edges, size, mean confidence and accuracy (None when empty)."""

    lo: float
    hi: float
    n: int
    mean_confidence: float | None
    accuracy: float | None


@dataclass(frozen=True)
class MissingnessTest:
    """Is a missing confidence unrelated to correctness? A 2×2 χ² test (Yates-corrected).

    ``table`` is ``[[present & wrong, present & correct], [missing & wrong, missing & correct]]``.
    ``chi2``, ``p`` and ``fisher_p`` are None when a row or column of the table is empty (the
    test is undefined); ``note`` says why, or warns about small expected counts.
    """

    table: tuple[tuple[int, int], tuple[int, int]]
    chi2: float | None
    dof: int | None
    p: float | None
    fisher_p: float | None
    min_expected: float | None
    note: str


def _arrays(
    confidence: ArrayLike, correct: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    conf = np.asarray(confidence, dtype=np.float64).ravel()
    corr = np.asarray(correct, dtype=np.int64).ravel()
    if conf.shape != corr.shape:
        raise ValueError(f"confidence has {conf.size} values, correct has {corr.size}")
    if conf.size and (np.isnan(conf).any() or conf.min() < 0.0 or conf.max() > 1.0):
        raise ValueError("confidences must be in [0, 1] with no missing values")
    if corr.size and not np.isin(corr, (0, 1)).all():
        raise ValueError("correct must hold only 0 and 1")
    return conf, corr


def bin_index(confidence: ArrayLike, n_bins: int = N_BINS) -> NDArray[np.int64]:
    """The 0-based bin of each confidence (1.0 goes to the last bin)."""
    conf = np.asarray(confidence, dtype=np.float64)
    idx = np.floor(np.round(conf * n_bins, 9)).astype(np.int64)
    return np.clip(idx, 0, n_bins - 1)


def reliability_bins(confidence: ArrayLike, correct: ArrayLike, n_bins: int = N_BINS) -> list[Bin]:
    """Every bin's size, mean confidence and accuracy (the reliability diagram's data)."""
    conf, corr = _arrays(confidence, correct)
    idx = bin_index(conf, n_bins)
    out = []
    for b in range(n_bins):
        mask = idx == b
        n = int(mask.sum())
        out.append(
            Bin(
                lo=b / n_bins,
                hi=(b + 1) / n_bins,
                n=n,
                mean_confidence=float(conf[mask].mean()) if n else None,
                accuracy=float(corr[mask].mean()) if n else None,
            )
        )
    return out


def ece(confidence: ArrayLike, correct: ArrayLike, n_bins: int = N_BINS) -> float | None:
    """Expected calibration error: ``Σ_b (n_b / n) · |accuracy_b − mean confidence_b|``."""
    conf, corr = _arrays(confidence, correct)
    if conf.size == 0:
        return None
    idx = bin_index(conf, n_bins)
    gap = np.bincount(idx, weights=corr - conf, minlength=n_bins)
    return float(np.abs(gap).sum() / conf.size)


def ece_bootstrap(
    confidence: ArrayLike,
    correct: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    level: float = 0.95,
    n_bins: int = N_BINS,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the ECE, resampling the given cells with replacement.

    Parameters
    ----------
    confidence, correct
        One model's cells (the resampling is within model).
    rng
        The generator (seeded by the caller).
    n_resamples, level, n_bins
        Resamples, the interval's coverage, bins.

    Returns
    -------
    (float, float) or None
        The ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles; None without data.
    """
    conf, corr = _arrays(confidence, correct)
    n = conf.size
    if n == 0:
        return None
    draws = rng.integers(0, n, size=(n_resamples, n))
    flat = bin_index(conf, n_bins)[draws] + n_bins * np.arange(n_resamples)[:, None]
    gaps = np.bincount(
        flat.ravel(), weights=(corr - conf)[draws].ravel(), minlength=n_bins * n_resamples
    )
    values = np.abs(gaps.reshape(n_resamples, n_bins)).sum(axis=1) / n
    lo, hi = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def brier(confidence: ArrayLike, correct: ArrayLike) -> float | None:
    """Brier score: the mean of ``(confidence − correct)²``."""
    conf, corr = _arrays(confidence, correct)
    return float(np.mean((conf - corr) ** 2)) if conf.size else None


def confidence_gap(confidence: ArrayLike, correct: ArrayLike) -> float | None:
    """Mean confidence when correct minus mean confidence when wrong (None if a class is empty)."""
    conf, corr = _arrays(confidence, correct)
    if not (corr == 1).any() or not (corr == 0).any():
        return None
    return float(conf[corr == 1].mean() - conf[corr == 0].mean())


def p_confident_when_wrong(
    confidence: ArrayLike, correct: ArrayLike, threshold: float = HIGH_CONFIDENCE
) -> float | None:
    """P(confidence > threshold | wrong); None when no cell is wrong."""
    conf, corr = _arrays(confidence, correct)
    wrong = conf[corr == 0]
    return float((wrong > threshold).mean()) if wrong.size else None


def auroc(confidence: ArrayLike, correct: ArrayLike) -> float | None:
    """Area under the ROC curve of confidence as a score for correctness.

    The probability that a random correct cell has a higher confidence than a random wrong one,
    ties counting one half (the Mann-Whitney U statistic over ``n_correct · n_wrong``). None
    when either class is empty.
    """
    conf, corr = _arrays(confidence, correct)
    n_pos, n_neg = int((corr == 1).sum()), int((corr == 0).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    _, inverse, counts = np.unique(conf, return_inverse=True, return_counts=True)
    below = np.cumsum(counts) - counts  # values strictly smaller
    ranks = (below + (counts + 1) / 2.0)[inverse]  # average 1-based ranks
    u = ranks[corr == 1].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def missingness_test(missing: ArrayLike, correct: ArrayLike) -> MissingnessTest:
    """χ² test of independence between a confidence being missing and the cell being correct.

    Uses :func:`scipy.stats.chi2_contingency` (Yates' continuity correction on a 2×2 table)
    and reports Fisher's exact p beside it for small tables.
    """
    from scipy.stats import chi2_contingency, fisher_exact

    miss = np.asarray(missing, dtype=bool).ravel()
    corr = np.asarray(correct, dtype=np.int64).ravel()
    if miss.shape != corr.shape:
        raise ValueError(f"missing has {miss.size} values, correct has {corr.size}")
    table = np.array(
        [[int(((miss == m) & (corr == c)).sum()) for c in (0, 1)] for m in (False, True)],
        dtype=np.int64,
    )
    frozen = ((int(table[0, 0]), int(table[0, 1])), (int(table[1, 0]), int(table[1, 1])))
    reason = _degenerate(table)
    if reason is not None:
        return MissingnessTest(frozen, None, None, None, None, None, reason)
    result = chi2_contingency(table)
    expected = np.asarray(result.expected_freq)
    fisher = fisher_exact(table)
    min_expected = float(expected.min())
    note = "ok" if min_expected >= 5 else "expected counts below 5: prefer Fisher's exact p"
    return MissingnessTest(
        frozen,
        _finite(float(result.statistic)),
        int(result.dof),
        _finite(float(result.pvalue)),
        _finite(float(fisher.pvalue)),
        min_expected,
        note,
    )


def _degenerate(table: NDArray[np.int64]) -> str | None:
    if table.sum() == 0:
        return "undefined: no cells"
    if table[1].sum() == 0:
        return "undefined: no missing confidences"
    if table[0].sum() == 0:
        return "undefined: every confidence is missing"
    if table[:, 1].sum() == 0:
        return "undefined: no correct cells"
    if table[:, 0].sum() == 0:
        return "undefined: no wrong cells"
    return None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None

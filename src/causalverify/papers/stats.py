"""Agreement statistics of Experiment A: Cohen's kappa and the exact McNemar test."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels of the same items.

    Parameters
    ----------
    a, b
        Labels of the same items, in the same order.

    Returns
    -------
    float
        ``(p_o - p_e) / (1 - p_e)``; ``nan`` with no items, or when chance agreement is 1
        (both raters used one and the same label for every item).

    Raises
    ------
    ValueError
        If the sequences differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"raters labelled different numbers of items ({len(a)} vs {len(b)})")
    n = len(a)
    if n == 0:
        return math.nan
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected == 1.0:
        return math.nan
    return (observed - expected) / (1.0 - expected)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    Parameters
    ----------
    b, c
        Pairs right in the first arm only and right in the second arm only.

    Returns
    -------
    float
        ``min(1, 2 * P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``; 1.0 when there are
        no discordant pairs.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    from scipy import stats

    return float(min(1.0, 2.0 * stats.binom.cdf(min(b, c), n, 0.5)))

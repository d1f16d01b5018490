"""Layer L2c: the reported inference (standard error, interval, significance) against the
canonical inference. Pure functions; see docs/SCORING.md.

- ``se_tier``: ``matches`` when the reported SE is within :data:`MATCH_WITHIN` (2%) of a canonical
  variant (the closest is named), ``plausible`` when it is within :data:`PLAUSIBLE` (0.8-1.25x)
  of the reference variant (the clustered SE for clustered designs, HC1 otherwise), ``wrong``
  otherwise, ``unread`` when no SE was read (never guessed, never ``wrong``). In a clustered
  design (reference ``cr1``: DID, event study) only the clustered variants (``cr*``) match: an
  SE whose closest variant is an unclustered one (``hc1``, ``classical``, ...) is ``wrong``, and
  that variant is named. Panel errors that are nearly independent in one data set make the
  unclustered SE land close to the clustered one, so the band alone would call the method that
  ignores the panel ``plausible``; the closest variant says which method the number came from.
- ``ci_covers``: the reported interval covers the DGP's effect (None without an interval).
- ``significance_agrees``: the 5% call (``|estimate / SE| > 1.96``, or without an SE the interval
  excluding 0) agrees with the canonical estimate's under the reference variant.
- ``L2c``: L2b+ and a ``matches`` or ``plausible`` SE.

A reported SE, interval and estimate on another scale than the canonical (an event study's
cumulative effect over k days) are divided by k before they are compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from causalverify.records import CanonicalInference, SeTier

MATCH_WITHIN: Final = 0.02
PLAUSIBLE: Final = (0.8, 1.25)
Z_05: Final = 1.96
#: slack so that a ratio of exactly a bound passes despite rounding
_SLACK: Final = 1e-12


@dataclass(frozen=True, kw_only=True)
class InferenceScore:
    """How a cell's reported inference compares with the canonical one."""

    tier: SeTier
    variant: str | None
    ratio: float | None
    ci_covers: bool | None
    significance_agrees: bool | None


def _usable(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def clustered(variant: str) -> bool:
    """Whether a variant's name is a cluster-robust one (``cr1``, ``cr1_dummies``)."""
    return variant.startswith("cr")


def _closeness(se: float, inference: CanonicalInference) -> list[tuple[float, int, str]]:
    """``(relative distance, preference, name)`` per variant. Equal distances (variants whose
    SEs coincide, as HC1 and classical can on a balanced panel) go to the reference, then a
    clustered variant, then the first name: never to the order the variants were stored in."""
    return [
        (abs(se / v - 1.0), 0 if n == inference.reference else 1 if clustered(n) else 2, n)
        for n, v in inference.ses.items()
    ]


def se_tier(se: float | None, inference: CanonicalInference) -> tuple[SeTier, str | None]:
    """The tier of a reported SE (already on the canonical's scale) and the matched variant
    (named for ``matches``, and for ``wrong`` when the SE is an unclustered variant of a
    clustered design)."""
    if se is None or not math.isfinite(se) or se <= 0:
        return "unread", None
    rel, _, name = min(_closeness(se, inference))
    if rel <= MATCH_WITHIN + _SLACK:
        if clustered(inference.reference) and not clustered(name):
            return "wrong", name
        return "matches", name
    ratio = se / inference.ses[inference.reference]
    if PLAUSIBLE[0] - _SLACK <= ratio <= PLAUSIBLE[1] + _SLACK:
        return "plausible", None
    return "wrong", None


def significant(
    estimate: float | None, se: float | None, ci: tuple[float, float] | None
) -> bool | None:
    """The 5% call: ``|estimate / se| > 1.96``; without an SE, the interval excluding 0."""
    if _usable(estimate) and _usable(se) and se is not None and se > 0:
        assert estimate is not None
        return abs(estimate / se) > Z_05
    if ci is not None and all(math.isfinite(b) for b in ci):
        return min(ci) > 0 or max(ci) < 0
    return None


def score_inference(
    *,
    estimate: float | None,
    se: float | None,
    ci: tuple[float, float] | None,
    canonical: float,
    inference: CanonicalInference,
    target: float | None,
    scale: float = 1.0,
) -> InferenceScore:
    """Compare a reported SE and interval with the canonical inference.

    Parameters
    ----------
    estimate, se, ci
        What the script reported (None: not read), on its own scale.
    canonical
        The canonical point estimate.
    inference
        The canonical SE under each variant and the reference variant.
    target
        The population effect the DGP defines (the scenario's β), on the canonical's scale;
        None when the design defines none.
    scale
        The multiple of the canonical the reported estimate is on (1, or k for an event study's
        cumulative effect over k days).
    """
    k = abs(scale) if scale else 1.0
    se_c = se / k if _usable(se) and se is not None else None
    est_c = estimate / scale if _usable(estimate) and estimate is not None and scale else None
    ci_c = None
    if ci is not None and all(math.isfinite(b) for b in ci):
        lo, hi = sorted((ci[0] / scale, ci[1] / scale)) if scale else sorted(ci)
        ci_c = (lo, hi)
    tier, variant = se_tier(se_c, inference)
    reference = inference.ses[inference.reference]
    ratio = se_c / reference if se_c is not None and se_c > 0 else None
    covers = None
    if ci_c is not None and target is not None and math.isfinite(target):
        covers = ci_c[0] <= target <= ci_c[1]
    reported = significant(est_c, se_c, ci_c)
    agrees = None if reported is None else reported == (abs(canonical / reference) > Z_05)
    return InferenceScore(
        tier=tier, variant=variant, ratio=ratio, ci_covers=covers, significance_agrees=agrees
    )


def l2c(l2b_plus: bool | None, tier: SeTier | None) -> bool | None:
    """Right point and right inference: L2b+ and an SE that matches or is plausible."""
    if l2b_plus is None:
        return None
    return l2b_plus and tier in ("matches", "plausible")

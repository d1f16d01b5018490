"""Layers L1, L2a, L2b and L2b+ (BENCHMARK §2.4) and the scale conversions of the two profiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from causalverify.designs import DESIGNS
from causalverify.families import Family

Profile = Literal["paper", "default"]
Extractor = Literal["deterministic", "judge", "both"]

#: |canonical| below this makes a cell unscoreable (excluded from rates, counted separately)
UNSCOREABLE_BELOW: Final = 1e-9
#: slack on the inclusive tolerance so that a relative error of exactly tau passes despite rounding
TOLERANCE_SLACK: Final = 1e-12


@dataclass(frozen=True, kw_only=True)
class Match:
    """How an estimate compares with the canonical, on the best accepted scale."""

    rel_error: float
    passed: bool
    conversion: str | None
    #: a declared cumulative scale the estimate would pass on, not applied because no printed
    #: label says the figure is cumulative (``default`` profile)
    refused: str | None = None


def conversions_for(
    family: Family, profile: Profile, declared: dict[str, int], *, labelled: bool = True
) -> list[tuple[str | None, int]]:
    """The accepted (name, multiple) scales, in tie-breaking order.

    A design whose estimate has one scale accepts k = 1 only. A design reported on several
    (the event study's cumulative effects, its :class:`~causalverify.designs.ReportedScales`)
    accepts each of its multiples under ``paper`` (named ``k=<k>``, labelled or not, as
    published: k = 1..11 for event studies) and only the scenario's declared conversions under
    ``default`` (the design's default, per-day, when the scenario declares none); a declared
    cumulative scale (k > 1) only for a figure ``labelled`` as cumulative, as the prompt says.
    """
    reported = DESIGNS[family].scales
    if reported is None:
        return [(None, 1)]
    if profile == "paper":
        return [(f"k={k}", k) for k in reported.multiples]
    scales = declared or reported.default
    if not labelled:
        scales = {name: k for name, k in scales.items() if k == 1} or reported.default
    return sorted(scales.items(), key=lambda item: (item[1], item[0]))


def match_estimate(
    estimate: float,
    canonical: float,
    *,
    family: Family,
    profile: Profile,
    tolerance: float,
    declared: dict[str, int],
    labelled: bool = True,
) -> Match:
    """Compare ``estimate`` with ``canonical`` on the accepted scale closest to it.

    ``rel_error = |estimate - k*canonical| / |k*canonical|`` for the best k; it passes when
    ``rel_error <= tolerance`` (inclusive). Ties between scales go to the smaller multiple.
    ``labelled``: the output labels the figure as cumulative (a declared cumulative scale
    applies only then; see :func:`conversions_for`). An unlabelled figure that would pass on
    such a scale names it in ``refused``.
    """
    best = _best(estimate, canonical, conversions_for(family, profile, declared, labelled=labelled))
    passed = best.rel_error <= tolerance + TOLERANCE_SLACK
    refused = None
    if not passed and not labelled:
        other = _best(estimate, canonical, conversions_for(family, profile, declared))
        if other.rel_error <= tolerance + TOLERANCE_SLACK:
            refused = other.conversion
    return Match(
        rel_error=best.rel_error, passed=passed, conversion=best.conversion, refused=refused
    )


def _best(estimate: float, canonical: float, scales: list[tuple[str | None, int]]) -> Match:
    """The scale whose multiple of ``canonical`` is closest to ``estimate`` (not yet judged)."""
    best: Match | None = None
    for name, k in scales:
        target = k * canonical
        rel = abs(estimate - target) / abs(target)
        if best is None or rel < best.rel_error:
            best = Match(rel_error=rel, passed=False, conversion=name)
    assert best is not None
    return best


def is_unscoreable(canonical: float) -> bool:
    """True when the canonical estimate is too close to zero for a relative error."""
    return abs(canonical) < UNSCOREABLE_BELOW

"""What a modern-design scenario must separate: the declared analyses of each design and the
acceptance of a draw.

A benchmark scenario passes every correct standard analysis and fails the design's
characteristic mistakes. So a modern draw is kept only when, on the realised data,

- the canonical is at least :data:`MIN_Z` standard errors from zero,
- every *defensible* analysis of the design lands within :data:`TOLERANCE` (relative, inclusive,
  as L2b+ scores) of the canonical, and
- every *mistake* lands outside it.

Each design declares its analyses in its module (``ANALYSES`` in :mod:`causalverify.designs`),
computed by the suite's own Python; the build records each rejected attempt with its reasons and
each accepted draw's distances in the suite's build log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

import pandas as pd

from causalverify.designs import DESIGNS, Analysis, DesignAnalyses
from causalverify.estimators import CanonicalResult
from causalverify.families import MODERN_FAMILIES, Family

__all__ = [
    "ANALYSES",
    "MIN_Z",
    "TOLERANCE",
    "Analysis",
    "DesignAnalyses",
    "Verdict",
    "distance",
    "judge_draw",
]

#: the default scoring tolerance (relative error, inclusive)
TOLERANCE: Final[float] = 0.5
#: the canonical must be at least this many standard errors from zero
MIN_Z: Final[float] = 3.0


def _declared(family: Family) -> DesignAnalyses:
    analyses = DESIGNS[family].analyses
    if analyses is None:  # pragma: no cover - the registry requires them of a modern design
        raise KeyError(f"design {family!r} declares no analyses")
    return analyses


#: the declared analyses of each modern design (from its design module)
ANALYSES: Final[Mapping[str, DesignAnalyses]] = MappingProxyType(
    {family: _declared(family) for family in MODERN_FAMILIES}
)


@dataclass(frozen=True)
class Verdict:
    """The acceptance of one draw: each analysis's relative distance to the canonical (by name),
    and the reasons to reject it (none: accepted)."""

    z: float
    distances: dict[str, float]
    reasons: tuple[str, ...]

    @property
    def accepted(self) -> bool:
        return not self.reasons


def distance(value: float, canonical: float) -> float:
    """Relative distance to the canonical, as L2b+ scores it."""
    return abs(value - canonical) / abs(canonical)


def judge_draw(family: str, data: pd.DataFrame, result: CanonicalResult) -> Verdict:
    """Run the design's declared analyses on ``data`` and say whether the draw separates them."""
    design = ANALYSES[family]
    estimate = result.estimate
    z = abs(estimate) / result.se if result.se > 0 else float("inf")
    reasons: list[str] = []
    if z < MIN_Z:
        reasons.append(f"canonical only {z:.2f} standard errors from zero")
    distances: dict[str, float] = {}
    for analysis in design.defensible:
        d = distances[analysis.name] = distance(analysis.compute(data), estimate)
        if not d <= TOLERANCE:
            reasons.append(f"defensible {analysis.name} misses ({d:.3f})")
    for analysis in design.mistakes:
        d = distances[analysis.name] = distance(analysis.compute(data), estimate)
        if d <= TOLERANCE:
            reasons.append(f"mistake {analysis.name} passes ({d:.3f})")
    return Verdict(z=z, distances=distances, reasons=tuple(reasons))

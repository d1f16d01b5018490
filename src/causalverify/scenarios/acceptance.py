"""What a modern-design scenario must separate: the declared analyses of each design and the
acceptance of a draw.

A benchmark scenario passes every correct standard analysis and fails the design's
characteristic mistakes. So a modern draw is kept only when, on the realised data,

- the canonical is at least :data:`MIN_Z` standard errors from zero,
- every *defensible* analysis of the design lands within :data:`TOLERANCE` (relative, inclusive,
  as L2b+ scores) of the canonical, and
- every *mistake* lands outside it.

The lists below are the design's declared analyses, computed by the suite's own Python
(:mod:`causalverify.estimators._alternatives`); the build records each rejected attempt with its
reasons and each accepted draw's distances in the suite's build log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Final

import pandas as pd

from causalverify.designs.fuzzy_rdd import sharp_jump
from causalverify.designs.staggered_did import twfe
from causalverify.designs.synthetic_control import donor_average
from causalverify.estimators import CanonicalResult
from causalverify.estimators import _alternatives as alt

#: the default scoring tolerance (relative error, inclusive)
TOLERANCE: Final[float] = 0.5
#: the canonical must be at least this many standard errors from zero
MIN_Z: Final[float] = 3.0


@dataclass(frozen=True)
class Analysis:
    """One analysis of a design: a short name (for the build log) and what it does."""

    name: str
    label: str
    compute: Callable[[pd.DataFrame], float]


@dataclass(frozen=True)
class DesignAnalyses:
    defensible: tuple[Analysis, ...]
    mistakes: tuple[Analysis, ...]


def _cs(control: alt.Control, aggregation: alt.Aggregation) -> Analysis:
    controls = {"never": "never-treated", "notyet": "not-yet-treated"}
    return Analysis(
        f"cs_{aggregation}_{control}",
        f"Callaway-Sant'Anna, {aggregation} aggregation, {controls[control]} controls",
        partial(alt.callaway_santanna, control=control, aggregation=aggregation),
    )


# fmt: off
ANALYSES: Final[dict[str, DesignAnalyses]] = {
    "staggered_did": DesignAnalyses(
        defensible=(
            *(_cs(c, a) for c in ("never", "notyet") for a in ("simple", "group", "calendar")),
            Analysis("imputation", "imputation (Borusyak, Jaravel and Spiess)", alt.imputation),
            Analysis("cohort_2x2", "per-cohort 2x2 against never-treated, all pre-periods as base",
                     alt.cohort_two_by_two),
            Analysis("sun_abraham", "interaction-weighted event study (Sun and Abraham)",
                     alt.sun_abraham),
        ),
        mistakes=(Analysis("twfe", "static two-way fixed effects on treated", twfe),),
    ),
    "fuzzy_rdd": DesignAnalyses(
        defensible=(
            Analysis("ll_triangular_h030", "local linear Wald, triangular kernel, h = 0.3 "
                     "(rdrobust conventional at h = 0.3)", partial(alt.local_wald, bandwidth=0.3)),
            Analysis("lq_triangular_h030", "local quadratic Wald, triangular kernel, h = 0.3 "
                     "(close to rdrobust's bias-corrected estimate at h = b = 0.3)",
                     partial(alt.local_wald, bandwidth=0.3, degree=2)),
            Analysis("ll_triangular_h020", "local linear Wald, triangular kernel, h = 0.2",
                     partial(alt.local_wald, bandwidth=0.2)),
            Analysis("ll_uniform_h020", "local linear Wald, uniform kernel, h = 0.2",
                     partial(alt.local_wald, bandwidth=0.2, kernel="uniform")),
            Analysis("tsls_all_rows", "2SLS on every row, running variable on each side",
                     partial(alt.local_wald, bandwidth=None)),
            Analysis("tsls_common_slope", "2SLS in the window, one running-variable slope",
                     partial(alt.local_wald, bandwidth=0.3, kernel="uniform",
                             separate_slopes=False)),
        ),
        mistakes=(
            Analysis("sharp_jump", "sharp jump in y at the cutoff (take-up ignored)", sharp_jump),
            Analysis("ols_take_up", "OLS of y on took_up", alt.ols_on_take_up),
            Analysis("tsls_no_running", "2SLS in the window without the running variable",
                     partial(alt.local_wald, bandwidth=0.3, kernel="uniform", running=False)),
        ),
    ),
    "synthetic_control": DesignAnalyses(
        defensible=(
            Analysis("predictors_mean_3lags", "weights matched on the pre-period mean and the "
                     "last three pre-period outcomes", alt.predictor_synth),
            Analysis("synthetic_did", "synthetic difference-in-differences", alt.synthetic_did),
        ),
        mistakes=(
            Analysis("donor_average", "gap to the plain donor average", donor_average),
            Analysis("donor_did", "before-after change against the plain donor average",
                     alt.donor_did),
        ),
    ),
}
# fmt: on


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

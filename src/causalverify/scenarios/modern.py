"""The modern-designs suite: three designs where the textbook regression computes the wrong number.

- ``staggered_did``: cohorts of a balanced panel adopt a policy in different periods (some
  never); the effect differs by cohort and grows with time since adoption, so the two-way
  fixed-effects coefficient is biased. Columns ``unit_id, period, first_treat, treated, y``.
- ``fuzzy_rdd``: eligibility switches at a cutoff of the running variable, take-up jumps only part
  way, participants are strongly selected on an unobserved trait, and the outcome rises
  steeply with the running variable. Columns
  ``running_var, eligible, took_up, y, near_cutoff``.
- ``synthetic_control``: one treated unit that follows a convex combination of a few other units,
  20 to 40 untreated units, 20 to 30 pre-periods and 5 to 10 post-periods. Columns
  ``unit_id, period, treated_unit, post, y``.

Each design's generator, canonical estimator, naive answer, text and declared analyses live in
its module under :mod:`causalverify.designs`; this module keeps the naive answer's lookup.

A draw is accepted only when it separates the design's declared analyses
(:mod:`causalverify.scenarios.acceptance`): every defensible analysis within the scoring
tolerance of the canonical, every characteristic mistake outside it (among them the naive answer:
two-way fixed effects, the sharp jump, the plain average of the untreated units), and the
canonical at least three standard errors from zero. So a model that only knows the textbook fails
while its code runs cleanly, and one that chose any defensible analysis passes. The true effect ``beta``
of a scenario is the population value of the canonical's target: the cohort-size-weighted
average of the unit-period effects, the effect of take-up at the cutoff, the post-period effect.
"""

from __future__ import annotations

import pandas as pd

from causalverify.designs import DESIGNS
from causalverify.families import MODERN_FAMILIES, Family


def naive_answer(family: Family, data: pd.DataFrame) -> float:
    """What the textbook regression reports on these data (the design's naive answer).

    Raises
    ------
    KeyError
        If ``family`` is not a modern design (only those declare a naive answer).
    """
    naive = DESIGNS[family].naive_answer
    if family not in MODERN_FAMILIES or naive is None:
        raise KeyError(f"design {family!r} has no naive answer: its textbook regression is right")
    return naive(data)

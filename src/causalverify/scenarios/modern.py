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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from causalverify.estimators._modern import donor_average, sharp_jump, twfe
from causalverify.scenarios._numbers import SCALE4, cutoff_flags, rounded

FUZZY_CUTOFF: Final[float] = 0.5
FUZZY_BANDWIDTH: Final[float] = 0.3


_r = rounded


# -- staggered adoption --------------------------------------------------------------------------


#: shares of the early, middle and late cohorts (the rest is never treated) and their base effects
SHARES: Final[tuple[float, float, float]] = (0.50, 0.15, 0.15)
BASES: Final[tuple[float, float, float]] = (0.05, 0.1, 0.2)


def staggered_cohorts(n_periods: int) -> tuple[int, ...]:
    """Adoption periods of a panel of ``n_periods``: early, middle and late."""
    return (3, n_periods // 2, n_periods - 2)


def generate_staggered(
    *, n_units: int, n_periods: int, sigma: float, growth: float, beta: float,
    rng: np.random.Generator,
) -> pd.DataFrame:  # fmt: skip
    """Cohort shares 50/15/15 % (early/middle/late) and 20 % never treated. The effect of a unit
    of cohort g at t >= g is ``scale * (base_g + growth * (t - g))`` with ``base_g`` 0.05, 0.1,
    0.2 for the three cohorts; ``scale`` makes the cohort-size-weighted average over post-adoption
    unit-periods equal ``beta``.

    Draw order: unit effects ``N(0, 0.5²)``, period effects ``N(0, 0.2²)``, then the noise
    ``N(0, sigma²)`` in row order (units, then periods within a unit).
    """
    cohorts = staggered_cohorts(n_periods)
    sizes = [round(n_units * s) for s in SHARES]
    first = np.zeros(n_units, dtype=np.int64)
    start = 0
    for g, size in zip(cohorts, sizes, strict=True):
        first[start : start + size] = g
        start += size
    bases = dict(zip(cohorts, BASES, strict=True))
    periods = np.arange(1, n_periods + 1)
    shape = np.zeros((n_units, n_periods))
    for i in range(n_units):
        g = int(first[i])
        if g:
            after = periods >= g
            shape[i, after] = bases[g] + growth * (periods[after] - g)
    treated = (first[:, None] > 0) & (periods[None, :] >= first[:, None])
    scale = beta / shape[treated].mean()
    unit_fe = rng.normal(0.0, 0.5, n_units)
    period_fe = rng.normal(0.0, 0.2, n_periods) + 0.05 * periods
    noise = rng.normal(0.0, sigma, (n_units, n_periods))
    y = unit_fe[:, None] + period_fe[None, :] + scale * shape + noise
    return pd.DataFrame(
        {
            "unit_id": np.repeat(np.arange(1, n_units + 1), n_periods),
            "period": np.tile(periods, n_units),
            "first_treat": np.repeat(first, n_periods),
            "treated": treated.astype(np.int64).ravel(),
            "y": _r(y.ravel(), 4),
        }
    )


# -- fuzzy discontinuity -------------------------------------------------------------------------


def fuzzy_flags(running_var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``eligible`` and ``near_cutoff`` of 4-decimal running values, compared exactly."""
    return cutoff_flags(running_var, FUZZY_CUTOFF, FUZZY_BANDWIDTH)


#: bandwidths of the declared analyses (:mod:`causalverify.scenarios.acceptance`): no running
#: value lies on the edge of their windows, so every implementation agrees on who is inside
FUZZY_WINDOWS: Final[tuple[float, ...]] = (FUZZY_BANDWIDTH, 0.2)


def off_window_edges(running_var: np.ndarray) -> np.ndarray:
    """Move 4-decimal running values that fall exactly on a window edge (0.2, 0.3, 0.7, 0.8)
    one ten-thousandth outwards: ``0.8 - 0.5`` is ``0.30000000000000004`` in binary, so
    rdrobust with ``h = 0.3`` and an exact decimal comparison would disagree about them."""
    scaled = np.rint(running_var * SCALE4).astype(np.int64)
    cut = round(FUZZY_CUTOFF * SCALE4)
    for h in FUZZY_WINDOWS:
        half = round(h * SCALE4)
        scaled = np.where(scaled == cut + half, scaled + 1, scaled)
        scaled = np.where(scaled == cut - half, scaled - 1, scaled)
    out: np.ndarray = scaled / SCALE4
    return out


def generate_fuzzy(
    *, n: int, sigma: float, jump: float, beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Take-up probability ``0.15 + jump * eligible + 0.2 * (running_var - 0.5) + 0.3 * trait``
    (clipped to [0, 1]), where the unobserved ``trait ~ N(0, 1)`` also raises ``y`` by
    ``0.3 * trait``: participants are strongly selected, so OLS of ``y`` on ``took_up`` is far
    off. ``y = 2 * running_var + beta * took_up + 0.3 * trait + noise``: the outcome rises
    steeply with the running variable, so a comparison at the cutoff that leaves it out is
    off too. Running values on a window edge move one ten-thousandth out
    (:func:`off_window_edges`).

    Draw order: ``running_var ~ U(0, 1)``, the trait ``N(0, 1)``, the take-up uniforms, the noise.
    """
    running_var = off_window_edges(_r(rng.uniform(0.0, 1.0, n), 4))
    trait = rng.normal(0.0, 1.0, n)
    draws = rng.uniform(0.0, 1.0, n)
    noise = rng.normal(0.0, sigma, n)
    eligible, near = fuzzy_flags(running_var)
    p = 0.15 + jump * eligible + 0.2 * (running_var - FUZZY_CUTOFF) + 0.3 * trait
    took_up = (draws < np.clip(p, 0.0, 1.0)).astype(np.int64)
    y = 2.0 * running_var + beta * took_up + 0.3 * trait + noise
    return pd.DataFrame(
        {
            "running_var": running_var,
            "eligible": eligible,
            "took_up": took_up,
            "y": _r(y, 4),
            "near_cutoff": near,
        }
    )


# -- synthetic control ---------------------------------------------------------------------------


def generate_synth(
    *, n_donors: int, n_pre: int, n_post: int, sigma: float, beta: float,
    rng: np.random.Generator,
) -> pd.DataFrame:  # fmt: skip
    """Untreated units follow unit levels, unit trends and two common factors; the treated unit
    (``unit_id`` 1) is a convex combination of the three fastest-growing of them plus noise, plus
    ``beta`` after adoption.

    Draw order: levels ``N(0, 1)``, trends ``N(0.03, 0.03²)``, loadings ``N(0, 0.5²)`` (two per
    unit), factors ``N(0, 0.3²)`` (two per period), the weights ``Dirichlet(2, 2, 2)``, the noise
    of the untreated units ``N(0, sigma²)``, then the treated unit's noise.
    """
    t = n_pre + n_post
    periods = np.arange(1, t + 1)
    levels = rng.normal(0.0, 1.0, n_donors)
    trends = rng.normal(0.03, 0.03, n_donors)
    loadings = rng.normal(0.0, 0.5, (n_donors, 2))
    factors = rng.normal(0.0, 0.3, (t, 2))
    weights = rng.dirichlet([2.0, 2.0, 2.0])
    donors = (
        levels[:, None]
        + trends[:, None] * periods[None, :]
        + loadings @ factors.T
        + rng.normal(0.0, sigma, (n_donors, t))
    )
    chosen = np.argsort(-trends)[:3]
    treated = weights @ donors[chosen] + rng.normal(0.0, sigma, t) + beta * (periods > n_pre)
    values = np.vstack([treated, donors])
    n_units = n_donors + 1
    return pd.DataFrame(
        {
            "unit_id": np.repeat(np.arange(1, n_units + 1), t),
            "period": np.tile(periods, n_units),
            "treated_unit": np.repeat((np.arange(n_units) == 0).astype(np.int64), t),
            "post": np.tile((periods > n_pre).astype(np.int64), n_units),
            "y": _r(values.ravel(), 4),
        }
    )


# -- dispatch ------------------------------------------------------------------------------------

COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "staggered_did": ("unit_id", "period", "first_treat", "treated", "y"),
    "fuzzy_rdd": ("running_var", "eligible", "took_up", "y", "near_cutoff"),
    "synthetic_control": ("unit_id", "period", "treated_unit", "post", "y"),
}


def generate_modern(
    family: str, params: Mapping[str, float | int], beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Draw one modern-design data set (see the module docstring)."""
    sigma = float(params["sigma"])
    if family == "staggered_did":
        return generate_staggered(
            n_units=int(params["n_units"]),
            n_periods=int(params["n_periods"]),
            sigma=sigma,
            growth=float(params["growth"]),
            beta=beta,
            rng=rng,
        )
    if family == "fuzzy_rdd":
        return generate_fuzzy(
            n=int(params["n"]), sigma=sigma, jump=float(params["jump"]), beta=beta, rng=rng
        )
    if family == "synthetic_control":
        return generate_synth(
            n_donors=int(params["n_donors"]),
            n_pre=int(params["n_pre"]),
            n_post=int(params["n_post"]),
            sigma=sigma,
            beta=beta,
            rng=rng,
        )
    raise ValueError(f"unknown modern design {family!r}")


def naive_answer(family: str, data: pd.DataFrame) -> float:
    """What the textbook regression reports on these data."""
    if family == "staggered_did":
        return twfe(data)
    if family == "fuzzy_rdd":
        return sharp_jump(data)
    return donor_average(data)


@dataclass(frozen=True)
class ModernGroup:
    family: str
    difficulty: str
    params: tuple[tuple[str, float | int], ...]
    betas: tuple[float, ...]


# fmt: off
MODERN_GROUPS: Final[tuple[ModernGroup, ...]] = (
    ModernGroup("staggered_did", "easy", (("n_units", 120), ("n_periods", 10), ("sigma", 0.3), ("growth", 0.8)),
                (0.40, -0.35, 0.50, -0.45, 0.30, 0.55, -0.40)),
    ModernGroup("staggered_did", "medium", (("n_units", 100), ("n_periods", 10), ("sigma", 0.35), ("growth", 1.0)),
                (0.35, -0.30, 0.45, -0.50, 0.40, -0.35, 0.30)),
    ModernGroup("staggered_did", "hard", (("n_units", 80), ("n_periods", 12), ("sigma", 0.4), ("growth", 1.2)),
                (0.40, -0.45, 0.35, -0.30, 0.50, -0.40)),
    ModernGroup("fuzzy_rdd", "easy", (("n", 6000), ("sigma", 0.15), ("jump", 0.35)),
                (0.50, -0.45, 0.60, -0.55, 0.40, 0.65, -0.50)),
    ModernGroup("fuzzy_rdd", "medium", (("n", 6000), ("sigma", 0.2), ("jump", 0.3)),
                (0.55, -0.50, 0.45, -0.60, 0.50, -0.45, 0.60)),
    ModernGroup("fuzzy_rdd", "hard", (("n", 8000), ("sigma", 0.2), ("jump", 0.25)),
                (0.60, -0.55, 0.65, -0.60, 0.55, -0.65)),
    ModernGroup("synthetic_control", "easy", (("n_donors", 20), ("n_pre", 30), ("n_post", 10), ("sigma", 0.03)),
                (0.30, -0.25, 0.35, -0.30, 0.25, 0.40, -0.35)),
    ModernGroup("synthetic_control", "medium", (("n_donors", 30), ("n_pre", 25), ("n_post", 8), ("sigma", 0.04)),
                (0.25, -0.30, 0.30, -0.25, 0.35, -0.30, 0.25)),
    ModernGroup("synthetic_control", "hard", (("n_donors", 40), ("n_pre", 20), ("n_post", 5), ("sigma", 0.05)),
                (0.30, -0.35, 0.25, -0.30, 0.35, -0.25)),
)
# fmt: on


# -- text ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PanelTopic:
    title: str
    unit: str
    units: str
    period: str
    policy: str
    outcome: str


@dataclass(frozen=True)
class _CutoffTopic:
    title: str
    unit: str
    units: str
    score: str
    program: str
    outcome: str


# fmt: off
_STAGGERED_TOPICS: Final = (
    _PanelTopic("Minimum wage increases and teen employment", "county", "counties", "year", "a higher local minimum wage", "teen employment"),
    _PanelTopic("Broadband rollout and small-business formation", "district", "districts", "year", "municipal broadband", "new business registrations"),
    _PanelTopic("Paid sick leave mandates and workplace injuries", "city", "cities", "year", "a paid sick leave mandate", "reported workplace injuries"),
    _PanelTopic("School meal programmes and attendance", "school district", "school districts", "term", "universal free school meals", "average attendance"),
    _PanelTopic("Ride-hailing entry and drunk-driving crashes", "metro area", "metro areas", "quarter", "the entry of ride-hailing services", "alcohol-related crashes"),
    _PanelTopic("Medicaid expansions and hospital finances", "state", "states", "year", "expanded public health coverage", "hospital uncompensated care"),
)
_FUZZY_TOPICS: Final = (
    _CutoffTopic("Tutoring offers and maths scores", "pupil", "pupils", "placement test score", "an after-school tutoring programme", "end-of-year maths score"),
    _CutoffTopic("Training vouchers and re-employment earnings", "job seeker", "job seekers", "profiling score", "a subsidised training course", "earnings a year later"),
    _CutoffTopic("Subsidised loans and farm investment", "farm", "farms", "credit score", "a subsidised investment loan", "capital investment"),
    _CutoffTopic("Mentoring offers and college persistence", "student", "students", "admissions index", "a peer mentoring programme", "second-year enrolment"),
    _CutoffTopic("Energy audit offers and household electricity use", "household", "households", "consumption index", "a free home energy audit", "electricity use"),
)
_SYNTH_TOPICS: Final = (
    _PanelTopic("A regional tobacco tax and cigarette sales", "region", "regions", "year", "a large tobacco tax increase", "per-capita cigarette sales"),
    _PanelTopic("A city congestion charge and retail footfall", "city", "cities", "month", "a congestion charge", "retail footfall"),
    _PanelTopic("A country's currency union entry and exports", "country", "countries", "quarter", "joining a currency union", "exports"),
    _PanelTopic("A state's right-to-work law and wages", "state", "states", "year", "a right-to-work law", "average wages"),
    _PanelTopic("A port expansion and regional output", "region", "regions", "year", "a major port expansion", "regional output"),
)
# fmt: on


def _dictionary(columns: Mapping[str, str]) -> str:
    return "Columns:\n" + "\n".join(f"- `{k}`: {v}" for k, v in columns.items())


def _text_staggered(topic: _PanelTopic, params: Mapping[str, float | int]) -> dict[str, object]:
    n, t = int(params["n_units"]), int(params["n_periods"])
    cohorts = staggered_cohorts(t)
    columns = {
        "unit_id": f"{topic.unit} identifier, 1 to {n}",
        "period": f"{topic.period} index, 1 to {t}",
        "first_treat": f"the {topic.period} in which the {topic.unit} adopted {topic.policy}; "
        "0 if it never did",
        "treated": f"1 in the {topic.period} of adoption and every {topic.period} after it, "
        "0 otherwise",
        "y": f"{topic.outcome} (an index)",
    }
    listed = ", ".join(str(g) for g in cohorts)
    description = (
        f"A balanced panel of {n} {topic.units} observed in each of {t} {topic.period}s "
        f"({n * t} rows). {topic.units.capitalize()} adopted {topic.policy} at different times: "
        f"some in {topic.period} {cohorts[0]}, others later (adoption {topic.period}s: {listed}), "
        f"and some never did. Once adopted, the policy stays in place.\n\n" + _dictionary(columns)
    )
    return {
        "topic": topic.title,
        "title": topic.title,
        "research_question": (
            f"How did {topic.policy} change {topic.outcome} in the {topic.units} that adopted it, "
            "on average over the periods after their adoption?"
        ),
        "data_description": description,
        "columns": columns,
        "target": (
            f"The average effect of {topic.policy} on `y` over all {topic.unit}-{topic.period}s "
            "after adoption (every adopting unit in every period from its adoption on, each "
            "counted once), in the units of `y`."
        ),
        "facts": {"n_units": n, "n_periods": t, "adoption_periods": list(cohorts)},
    }


def _text_fuzzy(topic: _CutoffTopic, params: Mapping[str, float | int]) -> dict[str, object]:
    n = int(params["n"])
    lo, hi = round(FUZZY_CUTOFF - FUZZY_BANDWIDTH, 4), round(FUZZY_CUTOFF + FUZZY_BANDWIDTH, 4)
    columns = {
        "running_var": f"the {topic.unit}'s {topic.score}, rescaled to lie between 0 and 1",
        "eligible": f"1 if the {topic.unit} was offered {topic.program} "
        f"(running_var >= {FUZZY_CUTOFF}), 0 otherwise",
        "took_up": f"1 if the {topic.unit} actually took part in {topic.program}, 0 otherwise",
        "y": f"{topic.outcome}",
        "near_cutoff": f"1 if running_var is within {FUZZY_BANDWIDTH} of the cutoff "
        f"({lo} <= running_var <= {hi}), 0 otherwise",
    }
    description = (
        f"A cross-section of {n} {topic.units}. {topic.units.capitalize()} with `running_var` at "
        f"or above the cutoff of {FUZZY_CUTOFF} were offered {topic.program} (`eligible` = 1). "
        f"Taking part was voluntary: many of those offered did not take part, and a few "
        f"{topic.units} below the cutoff found a way in; `took_up` records who actually took "
        f"part. `near_cutoff` flags the {topic.units} within {FUZZY_BANDWIDTH} of the cutoff on "
        f"either side.\n\n" + _dictionary(columns)
    )
    return {
        "topic": topic.title,
        "title": topic.title,
        "research_question": (
            f"What is the effect of taking part in {topic.program} on the {topic.outcome} of "
            f"{topic.units} near the cutoff?"
        ),
        "data_description": description,
        "columns": columns,
        "target": (
            f"The effect of taking part in {topic.program} (not of being offered it) on `y` for "
            f"{topic.units} at the cutoff whose participation follows the offer, in the units "
            "of `y`."
        ),
        "facts": {"n": n, "cutoff": FUZZY_CUTOFF, "bandwidth": FUZZY_BANDWIDTH},
    }


def _text_synth(topic: _PanelTopic, params: Mapping[str, float | int]) -> dict[str, object]:
    donors, pre, post = int(params["n_donors"]), int(params["n_pre"]), int(params["n_post"])
    t = pre + post
    columns = {
        "unit_id": f"{topic.unit} identifier, 1 to {donors + 1}",
        "period": f"{topic.period} index, 1 to {t}",
        "treated_unit": f"1 for the {topic.unit} that adopted {topic.policy} (unit_id 1), "
        "0 for the others",
        "post": f"1 in {topic.period}s {pre + 1} to {t} (after adoption), 0 in {topic.period}s "
        f"1 to {pre}",
        "y": f"{topic.outcome} (an index)",
    }
    description = (
        f"A balanced panel of {donors + 1} {topic.units} over {t} {topic.period}s. One "
        f"{topic.unit} (unit_id 1) adopted {topic.policy} after {topic.period} {pre}; none of "
        f"the other {donors} {topic.units} ever did. There are {pre} {topic.period}s before "
        f"adoption and {post} after.\n\n" + _dictionary(columns)
    )
    return {
        "topic": topic.title,
        "title": topic.title,
        "research_question": (
            f"How did {topic.policy} change {topic.outcome} in the {topic.unit} that adopted it?"
        ),
        "data_description": description,
        "columns": columns,
        "target": (
            f"The average effect of {topic.policy} on the adopting {topic.unit}'s `y` over the "
            f"{post} {topic.period}s after adoption, in the units of `y`."
        ),
        "facts": {"n_units": donors + 1, "n_pre": pre, "n_post": post, "treated_unit_id": 1},
    }


_MODERN_TOPICS: Final[dict[str, tuple[object, ...]]] = {
    "staggered_did": _STAGGERED_TOPICS,
    "fuzzy_rdd": _FUZZY_TOPICS,
    "synthetic_control": _SYNTH_TOPICS,
}


def render_modern_text(
    family: str, params: Mapping[str, float | int], *, ordinal: int, suite_seed: int
) -> dict[str, object]:
    """The text fields of a modern-design scenario (topic cycled by ``ordinal``)."""
    topics = _MODERN_TOPICS[family]
    topic = topics[(ordinal + suite_seed) % len(topics)]
    if family == "staggered_did":
        assert isinstance(topic, _PanelTopic)
        return _text_staggered(topic, params)
    if family == "fuzzy_rdd":
        assert isinstance(topic, _CutoffTopic)
        return _text_fuzzy(topic, params)
    assert isinstance(topic, _PanelTopic)
    return _text_synth(topic, params)

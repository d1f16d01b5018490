"""Fuzzy regression discontinuity: eligibility switches at a cutoff of the running variable,
take-up jumps only part way, participants are strongly selected on an unobserved trait, and the
outcome rises steeply with the running variable.

Everything the family is: its CSV layout, cutoff and windows, grid, generator, canonical estimator
(local linear 2SLS inside the band), naive answer (the sharp jump), topics and text, and the
extraction vocabulary of its effect term.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Final, Literal

import numpy as np
import pandas as pd

from causalverify.designs._base import (
    Analysis,
    CodeHints,
    Design,
    DesignAnalyses,
    GridGroup,
    Params,
    ScenarioText,
    Stated,
    dictionary,
    pick_topic,
    stated_in,
)
from causalverify.designs._code import AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import same
from causalverify.designs._numbers import SCALE4, cutoff_flags, rounded
from causalverify.errors import SuiteError

#: the published CSV layout (all of it is read by the canonical estimator)
COLUMNS: Final[tuple[str, ...]] = ("running_var", "eligible", "took_up", "y", "near_cutoff")
REQUIRED_COLUMNS: Final[tuple[str, ...]] = COLUMNS
#: the cutoff of the running variable and the half-width of the ``near_cutoff`` band
CUTOFF: Final[float] = 0.5
BANDWIDTH: Final[float] = 0.3
METHOD: Final[str] = (
    "2SLS y ~ 1 + rc + rc:eligible + [took_up ~ eligible] on near_cutoff == 1 "
    f"(rc = running_var - {CUTOFF}); HC1 SE"
)

# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="easy", difficulties=same("easy", 7), params=(("n", 6000), ("sigma", 0.15), ("jump", 0.35)),
              betas=(0.50, -0.45, 0.60, -0.55, 0.40, 0.65, -0.50)),
    GridGroup(group="medium", difficulties=same("medium", 7), params=(("n", 6000), ("sigma", 0.2), ("jump", 0.3)),
              betas=(0.55, -0.50, 0.45, -0.60, 0.50, -0.45, 0.60)),
    GridGroup(group="hard", difficulties=same("hard", 6), params=(("n", 8000), ("sigma", 0.2), ("jump", 0.25)),
              betas=(0.60, -0.55, 0.65, -0.60, 0.55, -0.65)),
)
# fmt: on

_r = rounded


def fuzzy_flags(running_var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``eligible`` and ``near_cutoff`` of 4-decimal running values, compared exactly."""
    return cutoff_flags(running_var, CUTOFF, BANDWIDTH)


#: bandwidths of the declared analyses (:mod:`causalverify.scenarios.acceptance`): no running
#: value lies on the edge of their windows, so every implementation agrees on who is inside
WINDOWS: Final[tuple[float, ...]] = (BANDWIDTH, 0.2)


def off_window_edges(running_var: np.ndarray) -> np.ndarray:
    """Move 4-decimal running values that fall exactly on a window edge (0.2, 0.3, 0.7, 0.8)
    one ten-thousandth outwards: ``0.8 - 0.5`` is ``0.30000000000000004`` in binary, so
    rdrobust with ``h = 0.3`` and an exact decimal comparison would disagree about them."""
    scaled = np.rint(running_var * SCALE4).astype(np.int64)
    cut = round(CUTOFF * SCALE4)
    for h in WINDOWS:
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
    p = 0.15 + jump * eligible + 0.2 * (running_var - CUTOFF) + 0.3 * trait
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


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_fuzzy(
        n=int(params["n"]),
        sigma=float(params["sigma"]),
        jump=float(params["jump"]),
        beta=beta,
        rng=rng,
    )


def window_arrays(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    keep = data["near_cutoff"].to_numpy(dtype=float) == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the estimator has no data")
    y = data["y"].to_numpy(dtype=float)[keep]
    d = data["took_up"].to_numpy(dtype=float)[keep]
    z = data["eligible"].to_numpy(dtype=float)[keep]
    rc = data["running_var"].to_numpy(dtype=float)[keep] - CUTOFF
    controls = np.column_stack([np.ones_like(y), rc, rc * z])
    return y, d, z, controls


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """Exactly identified 2SLS inside the window; HC1 SE.

    Within ``near_cutoff``, 2SLS of ``y`` on ``took_up`` instrumented by ``eligible``, with an
    intercept, the centred running variable and its interaction with ``eligible`` (the jump in
    ``y`` over the jump in take-up, local linear, uniform kernel).
    """
    y, d, z, w = window_arrays(data)
    x = np.column_stack([d, w])  # regressors: took_up first
    inst = np.column_stack([z, w])
    zx = inst.T @ x
    beta = np.linalg.solve(zx, inst.T @ y)
    resid = y - x @ beta
    n, k = x.shape
    bread = np.linalg.inv(zx)
    meat = (inst * resid[:, None]).T @ (inst * resid[:, None])
    cov = bread @ meat @ bread.T * n / (n - k)
    return finished(
        "fuzzy_rdd",
        float(beta[0]),
        float(math.sqrt(cov[0, 0])),
        n,
        method=METHOD,
        packages=("numpy", "pandas"),
    )


def sharp_jump(data: pd.DataFrame) -> float:
    """The coefficient on ``eligible`` in the sharp regression inside the window (the naive
    answer: the jump in ``y`` without dividing by the jump in take-up)."""
    y, _, z, w = window_arrays(data)
    x = np.column_stack([z, w])
    return float(np.linalg.lstsq(x, y, rcond=None)[0][0])


@dataclass(frozen=True)
class CutoffTopic:
    """A programme offered above a score cutoff, taken up by only some of those offered."""

    title: str
    unit: str
    units: str
    score: str
    program: str
    outcome: str


# fmt: off
TOPICS: Final[tuple[CutoffTopic, ...]] = (
    CutoffTopic("Tutoring offers and maths scores", "pupil", "pupils", "placement test score", "an after-school tutoring programme", "end-of-year maths score"),
    CutoffTopic("Training vouchers and re-employment earnings", "job seeker", "job seekers", "profiling score", "a subsidised training course", "earnings a year later"),
    CutoffTopic("Subsidised loans and farm investment", "farm", "farms", "credit score", "a subsidised investment loan", "capital investment"),
    CutoffTopic("Mentoring offers and college persistence", "student", "students", "admissions index", "a peer mentoring programme", "second-year enrolment"),
    CutoffTopic("Energy audit offers and household electricity use", "household", "households", "consumption index", "a free home energy audit", "electricity use"),
)
# fmt: on


def _text(topic: CutoffTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n = int(params["n"])
    lo, hi = round(CUTOFF - BANDWIDTH, 4), round(CUTOFF + BANDWIDTH, 4)
    columns = {
        "running_var": f"the {topic.unit}'s {topic.score}, rescaled to lie between 0 and 1",
        "eligible": f"1 if the {topic.unit} was offered {topic.program} "
        f"(running_var >= {CUTOFF}), 0 otherwise",
        "took_up": f"1 if the {topic.unit} actually took part in {topic.program}, 0 otherwise",
        "y": f"{topic.outcome}",
        "near_cutoff": f"1 if running_var is within {BANDWIDTH} of the cutoff "
        f"({lo} <= running_var <= {hi}), 0 otherwise",
    }
    description = (
        f"A cross-section of {n} {topic.units}. {topic.units.capitalize()} with `running_var` at "
        f"or above the cutoff of {CUTOFF} were offered {topic.program} (`eligible` = 1). "
        f"Taking part was voluntary: many of those offered did not take part, and a few "
        f"{topic.units} below the cutoff found a way in; `took_up` records who actually took "
        f"part. `near_cutoff` flags the {topic.units} within {BANDWIDTH} of the cutoff on "
        f"either side.\n\n" + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"What is the effect of taking part in {topic.program} on the {topic.outcome} of "
            f"{topic.units} near the cutoff?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The effect of taking part in {topic.program} (not of being offered it) on `y` for "
            f"{topic.units} at the cutoff whose participation follows the offer, in the units "
            "of `y`."
        ),
        facts={"n": n, "cutoff": CUTOFF, "bandwidth": BANDWIDTH},
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th fuzzy-discontinuity scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_FUZZY_GOOD: Final = re.compile(r"took_?up|take_?up|participat|fitted|x_?hat|2sls|tsls|^iv$|^late$")


_FUZZY_NEVER: Final = re.compile(r"eligib|running|^rc$|^r_?c$|centered|centred|:|\*|×|first")


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the instrumented take-up (never eligibility or the running
    variable)."""
    if t in hints.instruments or _FUZZY_NEVER.search(t):
        return None
    return 3 if t in hints.endogenous else (2 if _FUZZY_GOOD.search(t) else None)


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a fuzzy_rdd scenario: its text states what its data hold."""
    out: list[str] = []
    eligible, near = fuzzy_flags(d["running_var"].to_numpy())
    if not np.array_equal(eligible, d["eligible"].to_numpy()):
        out.append(f"{s.id}: eligible in the data is not running_var >= {CUTOFF}")
    if not np.array_equal(near, d["near_cutoff"].to_numpy()):
        out.append(f"{s.id}: near_cutoff is not |running_var - {CUTOFF}| <= {BANDWIDTH}")
    stated = stated_in(r"at or above the cutoff of ([0-9.]+) were offered", s.data_description)
    if stated is None or float(stated[0]) != CUTOFF:
        out.append(f"{s.id}: text does not state the cutoff {CUTOFF}")
    if set(d["took_up"].unique()) - {0, 1}:
        out.append(f"{s.id}: took_up is not 0/1")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Effect of taking part (jump in the outcome over the jump in take-up):",
    "naive": "Estimated jump in the outcome at the cutoff:",
    "cumulative": "Effect of taking part at the cutoff:",
    "wrong-term": "Estimated jump in take-up at the cutoff:",
}


_PY_FUZZY_EST = """\
# Local linear with separate slopes inside the window; taking part instrumented by the offer
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
near["rc_offer"] = near["rc"] * near["eligible"]
near["const"] = 1.0
fit = IV2SLS(near["y"], near[["const", "rc", "rc_offer"]], near["took_up"], near["eligible"]).fit(
    cov_type="robust"
)
est = float(fit.params["took_up"])
"""


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
    setup="""\
import pandas as pd
import statsmodels.formula.api as smf
from linearmodels.iv import IV2SLS

df = pd.read_csv("<<DATA>>")
cutoff = <<CUTOFF>>
""",
    textbook=_PY_FUZZY_EST,
    robustness="""\
first = smf.ols("took_up ~ eligible * rc", data=near).fit(cov_type="HC1")
print(f"Take-up rises by {first.params['eligible']:.3f} at the cutoff (t = {first.tvalues['eligible']:.1f})")
""",
    naive="""\
# Jump in the outcome at the cutoff, separate slopes on each side
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
fit = smf.ols("y ~ eligible * rc", data=near).fit(cov_type="HC3")
est = float(fit.params["eligible"])
""",
    cumulative=_PY_FUZZY_EST,
    wrong_term="""\
near = df[df["near_cutoff"] == 1].copy()
near["rc"] = near["running_var"] - cutoff
first = smf.ols("took_up ~ eligible * rc", data=near).fit(cov_type="HC3")
print(first.summary().tables[1])
est = float(first.params["eligible"])
""",
    missing="""\
from rdd import rdd

model = rdd.rdd(df, "running_var", "y", cut=cutoff)
est = float(model.fit().params["TREATED"])
""",
    typo=_PY_FUZZY_EST.replace('near["took_up"]', 'near["tookup"]'),
    descriptions=_DESCRIPTIONS,
)


_R_FUZZY_EST = """\
# Local linear with separate slopes inside the window; taking part instrumented by the offer
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- ivreg(y ~ took_up + rc + rc:eligible | eligible + rc + rc:eligible, data = near)
est <- unname(coef(fit)["took_up"])
"""


R_CODE: Final[FamilyCode] = FamilyCode(
    setup="""\
suppressPackageStartupMessages(library(AER))
df <- read.csv("<<DATA>>")
cutoff <- <<CUTOFF>>
""",
    textbook=_R_FUZZY_EST,
    robustness="""\
first <- lm(took_up ~ eligible * rc, data = near)
cat(sprintf("Take-up rises by %.3f at the cutoff\\n", coef(first)[["eligible"]]))
""",
    naive="""\
# Jump in the outcome at the cutoff, separate slopes on each side
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
fit <- lm(y ~ eligible * rc, data = near)
est <- unname(coef(fit)["eligible"])
""",
    cumulative=_R_FUZZY_EST,
    wrong_term="""\
near <- subset(df, near_cutoff == 1)
near$rc <- near$running_var - cutoff
first <- lm(took_up ~ eligible * rc, data = near)
print(summary(first)$coefficients)
est <- unname(coef(first)["eligible"])
""",
    missing="""\
library(rdrobust)
fit <- rdrobust(df$y, df$running_var, c = cutoff, fuzzy = df$took_up)
est <- fit$coef[1]
""",
    typo=_R_FUZZY_EST.replace("took_up + rc", "tookup + rc"),
    descriptions=_DESCRIPTIONS,
)


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "Being offered the programme switches at the cutoff of the running variable, but "
        "taking part does not follow the offer exactly. The jump in the outcome at the "
        "cutoff is therefore diluted; dividing it by the jump in participation gives the "
        "effect of taking part. I fit both jumps with separate linear slopes on each side of "
        "the cutoff inside the marked window, using the offer to predict participation.\n\n"
        "Key assumptions: units cannot sort precisely around the cutoff, the offer affects "
        "the outcome only through participation, and nobody takes part because they were "
        "not offered."
    ),
    naive_identification=(
        "The programme is offered at the cutoff, so I compare outcomes just above and below "
        "it with separate slopes on each side; the jump at the cutoff is the effect."
    ),
    expected=(
        "I expect a clear jump in participation at the cutoff and an effect of taking part "
        "larger than the jump in the outcome itself."
    ),
    plan=(
        "I would fit the jump in the outcome and the jump in participation at the cutoff "
        "within the window, and divide the first by the second."
    ),
)

# -- the analyses a draw must separate (scenarios.acceptance) --------------------------------------

Kernel = Literal["uniform", "triangular"]


def _centred(data: pd.DataFrame) -> np.ndarray:
    """The running variable minus the cutoff, from its 4 printed decimals (exact integers over
    10,000, so a window's edge is never blurred by binary rounding)."""
    scaled = np.rint(data["running_var"].to_numpy(dtype=float) * SCALE4).astype(np.int64)
    return (scaled - round(CUTOFF * SCALE4)).astype(float) / SCALE4


def local_wald(
    data: pd.DataFrame,
    *,
    bandwidth: float | None,
    kernel: Kernel = "triangular",
    degree: int = 1,
    separate_slopes: bool = True,
    running: bool = True,
) -> float:
    """The jump in ``y`` over the jump in ``took_up`` at the cutoff: weighted least squares of
    each on the offer, a polynomial of ``degree`` in the centred running variable (separate on
    each side, or common), within ``bandwidth`` (``None``: every row). This is the exactly
    identified 2SLS of ``y`` on ``took_up`` instrumented by ``eligible`` with those controls and
    weights. ``running=False`` leaves the running variable out."""
    rc = _centred(data)
    z = data["eligible"].to_numpy(dtype=float)
    if bandwidth is None:
        w = np.ones_like(rc)
    else:
        # compare in ten-thousandths: |rc| <= h exactly as the printed numbers say
        dist = np.abs(np.rint(rc * SCALE4))
        half = round(bandwidth * SCALE4)
        w = (
            (dist <= half).astype(float)
            if kernel == "uniform"
            else np.clip(1 - dist / half, 0, None)
        )
    keep = w > 0
    cols = [np.ones_like(rc), z]
    if running:
        for p in range(1, degree + 1):
            cols.append(rc**p)
            if separate_slopes:
                cols.append(z * rc**p)
    x = np.column_stack(cols)[keep]
    sw = np.sqrt(w[keep])[:, None]
    targets = np.column_stack(
        [data["y"].to_numpy(dtype=float), data["took_up"].to_numpy(dtype=float)]
    )[keep]
    coef = np.linalg.lstsq(x * sw, targets * sw, rcond=None)[0]
    return float(coef[1, 0] / coef[1, 1])


def ols_on_take_up(data: pd.DataFrame) -> float:
    """OLS of ``y`` on ``took_up`` over every row: the participants' mean minus the others'."""
    d = data["took_up"].to_numpy(dtype=float) == 1
    y = data["y"].to_numpy(dtype=float)
    return float(y[d].mean() - y[~d].mean())


# fmt: off
ANALYSES: Final[DesignAnalyses] = DesignAnalyses(
    defensible=(
        Analysis("ll_triangular_h030", "local linear Wald, triangular kernel, h = 0.3 "
                 "(rdrobust conventional at h = 0.3)", partial(local_wald, bandwidth=0.3)),
        Analysis("lq_triangular_h030", "local quadratic Wald, triangular kernel, h = 0.3 "
                 "(close to rdrobust's bias-corrected estimate at h = b = 0.3)",
                 partial(local_wald, bandwidth=0.3, degree=2)),
        Analysis("ll_triangular_h020", "local linear Wald, triangular kernel, h = 0.2",
                 partial(local_wald, bandwidth=0.2)),
        Analysis("ll_uniform_h020", "local linear Wald, uniform kernel, h = 0.2",
                 partial(local_wald, bandwidth=0.2, kernel="uniform")),
        Analysis("tsls_all_rows", "2SLS on every row, running variable on each side",
                 partial(local_wald, bandwidth=None)),
        Analysis("tsls_common_slope", "2SLS in the window, one running-variable slope",
                 partial(local_wald, bandwidth=0.3, kernel="uniform",
                         separate_slopes=False)),
    ),
    mistakes=(
        Analysis("sharp_jump", "sharp jump in y at the cutoff (take-up ignored)", sharp_jump),
        Analysis("ols_take_up", "OLS of y on took_up", ols_on_take_up),
        Analysis("tsls_no_running", "2SLS in the window without the running variable",
                 partial(local_wald, bandwidth=0.3, kernel="uniform", running=False)),
    ),
)
# fmt: on


DESIGN: Final[Design] = Design(
    family="fuzzy_rdd",
    columns=COLUMNS,
    required_columns=REQUIRED_COLUMNS,
    groups=GROUPS,
    generate=_generate,
    canonical=canonical,
    naive_answer=sharp_jump,
    topics=TOPICS,
    render_text=render_text,
    check=check,
    r_code=R_CODE,
    python_code=PYTHON_CODE,
    prose=PROSE,
    analyses=ANALYSES,
    inference=None,
    design_packages=frozenset({"rdrobust", "rdd"}),
    term_score=term_score,
    spec_bad=re.compile(r"sharp|first[- ]stage|reduced[- ]form|intent|\bitt\b|\bols\b"),
    effect_alias=None,
    instrumented=True,
    discontinuity="fuzzy",
    label_good=re.compile(r"\biv\b|2sls|tsls|wald|\blate\b|take[- ]?up effect|ratio|fuzzy"),
    label_bad=re.compile(
        r"sharp|first[- ]stage|reduced[- ]form|intent|\bitt\b|take[- ]?up (jump|rate)|\bols\b"
    ),
    scales=None,
    judge_target=(
        "the fuzzy regression-discontinuity effect of taking part: the jump in the outcome at "
        "the cutoff divided by the jump in take-up (the local two-stage least squares or Wald "
        "estimate, not the jump in the outcome alone)"
    ),
)

"""Synthetic control: one treated unit that follows a convex combination of a few other units,
20 to 40 untreated units, 20 to 30 pre-periods and 5 to 10 post-periods.

Everything the family is: its CSV layout, grid, generator, canonical estimator (simplex weights
matched on the pre-period; the mean post-period gap), naive answer (the gap to the plain donor
average), topics and text, and the extraction vocabulary of its effect term.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs._base import (
    CodeHints,
    Design,
    GridGroup,
    Params,
    ScenarioText,
    dictionary,
    pick_topic,
)
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import same
from causalverify.designs._numbers import rounded
from causalverify.designs._panel import simplex_weights, wide_panel
from causalverify.designs._topics import PanelTopic
from causalverify.errors import SuiteError

#: the published CSV layout (all of it is read by the canonical estimator)
COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "treated_unit", "post", "y")
REQUIRED_COLUMNS: Final[tuple[str, ...]] = COLUMNS
METHOD: Final[str] = (
    "simplex-constrained least squares of the treated unit's pre-period y "
    "on the donors' (exact active set); mean post-period gap"
)

# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="easy", difficulties=same("easy", 7), params=(("n_donors", 20), ("n_pre", 30), ("n_post", 10), ("sigma", 0.03)),
              betas=(0.30, -0.25, 0.35, -0.30, 0.25, 0.40, -0.35)),
    GridGroup(group="medium", difficulties=same("medium", 7), params=(("n_donors", 30), ("n_pre", 25), ("n_post", 8), ("sigma", 0.04)),
              betas=(0.25, -0.30, 0.30, -0.25, 0.35, -0.30, 0.25)),
    GridGroup(group="hard", difficulties=same("hard", 6), params=(("n_donors", 40), ("n_pre", 20), ("n_post", 5), ("sigma", 0.05)),
              betas=(0.30, -0.35, 0.25, -0.30, 0.35, -0.25)),
)
# fmt: on

_r = rounded


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


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_synth(
        n_donors=int(params["n_donors"]),
        n_pre=int(params["n_pre"]),
        n_post=int(params["n_post"]),
        sigma=float(params["sigma"]),
        beta=beta,
        rng=rng,
    )


def synth_arrays(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    wide = wide_panel(data)
    treated_flag = data.groupby("unit_id")["treated_unit"].first().reindex(wide.index)
    post_flag = data.groupby("period")["post"].first().reindex(wide.columns).to_numpy() == 1
    treated = treated_flag.to_numpy() == 1
    if treated.sum() != 1:
        raise SuiteError(f"expected exactly one treated unit, found {int(treated.sum())}")
    if post_flag.all() or not post_flag.any():
        raise SuiteError("synthetic control needs pre- and post-treatment periods")
    values = wide.to_numpy(dtype=float)
    target = values[treated][0]
    donors = values[~treated]
    return target[~post_flag], donors[:, ~post_flag].T, target[post_flag], donors[:, post_flag].T


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """The mean post-period gap between the treated unit and its synthetic control."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    w = simplex_weights(pre_x, pre_y)
    gaps_pre = pre_y - pre_x @ w
    gaps_post = post_y - post_x @ w
    se = float(np.std(gaps_pre, ddof=1) / math.sqrt(len(gaps_post)))
    return finished(
        "synthetic_control",
        float(gaps_post.mean()),
        se,
        len(data),
        method=METHOD,
        packages=("numpy", "pandas"),
    )


def donor_average(data: pd.DataFrame) -> float:
    """The mean post-period gap to the plain donor average (the naive comparison)."""
    _, _, post_y, post_x = synth_arrays(data)
    return float((post_y - post_x.mean(axis=1)).mean())


# fmt: off
TOPICS: Final[tuple[PanelTopic, ...]] = (
    PanelTopic("A regional tobacco tax and cigarette sales", "region", "regions", "year", "a large tobacco tax increase", "per-capita cigarette sales"),
    PanelTopic("A city congestion charge and retail footfall", "city", "cities", "month", "a congestion charge", "retail footfall"),
    PanelTopic("A country's currency union entry and exports", "country", "countries", "quarter", "joining a currency union", "exports"),
    PanelTopic("A state's right-to-work law and wages", "state", "states", "year", "a right-to-work law", "average wages"),
    PanelTopic("A port expansion and regional output", "region", "regions", "year", "a major port expansion", "regional output"),
)
# fmt: on


def _text(topic: PanelTopic, params: Mapping[str, float | int]) -> ScenarioText:
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
        f"adoption and {post} after.\n\n" + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"How did {topic.policy} change {topic.outcome} in the {topic.unit} that adopted it?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The average effect of {topic.policy} on the adopting {topic.unit}'s `y` over the "
            f"{post} {topic.period}s after adoption, in the units of `y`."
        ),
        facts={"n_units": donors + 1, "n_pre": pre, "n_post": post, "treated_unit_id": 1},
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th synthetic-control scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_EFFECT: Final = re.compile(r"^att$|effect|gap|^post$|treat\w*[_.:*× ]+post|^treat(ed|ment)?$")


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the post-period gap of the treated unit."""
    return 2 if _EFFECT.search(t) else None


DESIGN: Final[Design] = Design(
    family="synthetic_control",
    columns=COLUMNS,
    required_columns=REQUIRED_COLUMNS,
    groups=GROUPS,
    generate=_generate,
    canonical=canonical,
    naive_answer=donor_average,
    topics=TOPICS,
    render_text=render_text,
    term_score=term_score,
    spec_bad=re.compile(r"pre[- ]?period|placebo|\bfit\b|\brmspe\b"),
    effect_alias=None,
    instrumented=False,
)

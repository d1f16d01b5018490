"""Difference-in-differences: a balanced panel, half of the units treated from period T/2 + 1 on.

Everything the family is: its CSV layout, grid, generator, canonical estimator (two-way fixed
effects, profile ``paper``), topics and text, and the extraction vocabulary of its effect term.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
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
from causalverify.designs._grid import split
from causalverify.designs._numbers import rounded
from causalverify.errors import SuiteError

#: the published CSV layout
COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "treated", "post", "treat_x_post", "y")
#: the columns the canonical estimator reads
REQUIRED_COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "treat_x_post", "y")
METHOD: Final[str] = (
    "TWFE OLS y ~ treat_x_post | unit_id + period (within transformation); iid SE, df n-2"
)
# Balanced panels demean exactly in one sweep; the tight tolerance keeps unbalanced panels in
# agreement with the dummy-variable solution well inside 1e-10 too.
DEMEAN_TOL: Final[float] = 1e-12


def _params(n_units: int, n_periods: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n_units", n_units), ("n_periods", n_periods), ("sigma", sigma))


# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="base", difficulties=split(3, 4, 3), params=_params(200, 8, 0.5),
              betas=(-0.30, -0.15, 0.25, 0.20, 0.18, 0.22, -0.12, -0.25, 0.28, 0.35)),
    GridGroup(group="easy", difficulties=split(7, 0, 0), params=_params(200, 8, 0.4),
              betas=(-0.30, 0.25, -0.20, 0.18, -0.35, 0.22, -0.15)),
    GridGroup(group="medium", difficulties=split(0, 7, 0), params=_params(150, 8, 0.5),
              betas=(-0.20, 0.15, 0.30, -0.10, 0.20, -0.25, 0.12)),
    GridGroup(group="hard", difficulties=split(0, 0, 6), params=_params(100, 10, 0.7),
              betas=(-0.12, 0.08, -0.18, 0.10, -0.15, 0.25)),
)
# fmt: on

_r = rounded


def did_treat_start(n_periods: int) -> int:
    """First treated period of a panel with ``n_periods`` periods (``T/2 + 1``: 5 for 8, 6 for 10)."""
    return n_periods // 2 + 1


def generate_did(
    *, n_units: int, n_periods: int, sigma: float, beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Balanced panel; the first half of units is treated from period ``T/2 + 1`` on.

    Draw order: unit effects ``N(0, 0.3²)`` for units ``0..n-1``, then the idiosyncratic noise
    ``N(0, sigma²)`` in row order (period by period, units within a period).

    Returns
    -------
    pandas.DataFrame
        Columns ``unit_id, period, treated, post, treat_x_post, y``; rows ordered by period,
        then unit.
    """
    unit_effect = rng.normal(0.0, 0.3, n_units)
    noise = rng.normal(0.0, sigma, n_units * n_periods)
    unit_id = np.tile(np.arange(n_units, dtype=np.int64), n_periods)
    period = np.repeat(np.arange(1, n_periods + 1, dtype=np.int64), n_units)
    treated = (unit_id < n_units // 2).astype(np.int64)
    post = (period >= did_treat_start(n_periods)).astype(np.int64)
    treat_x_post = treated * post
    y = 0.5 * treated + 0.4 * post + beta * treat_x_post + unit_effect[unit_id] + noise
    return pd.DataFrame(
        {
            "unit_id": unit_id,
            "period": period,
            "treated": treated,
            "post": post,
            "treat_x_post": treat_x_post,
            "y": _r(y, 4),
        }
    )


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_did(
        n_units=int(params["n_units"]),
        n_periods=int(params["n_periods"]),
        sigma=float(params["sigma"]),
        beta=beta,
        rng=rng,
    )


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """Two-way fixed effects by the within transformation (pyfixest's demeaning); see the module
    docstring for the SE.

    Sums use :func:`math.fsum` (exactly rounded), so the result does not depend on memory
    alignment or SIMD width: the same data give bit-identical output in every process.
    """
    from pyfixest.core import demean

    n = len(data)
    yx = np.column_stack(
        [data["y"].to_numpy(dtype=float), data["treat_x_post"].to_numpy(dtype=float)]
    )
    codes = np.column_stack(
        [pd.factorize(data[col], sort=True)[0] for col in ("unit_id", "period")]
    ).astype(np.uint64)
    within, converged = demean(yx, codes, np.ones(n), tol=DEMEAN_TOL)
    if not converged:  # pragma: no cover - MAP converges on any finite panel
        raise SuiteError("the two-way demeaning did not converge")
    y_w, x_w = within[:, 0], within[:, 1]
    sxx = math.fsum(x_w * x_w)
    x_raw = yx[:, 1]
    if sxx <= 1e-12 * max(math.fsum((x_raw - x_raw.mean()) ** 2), 1.0):
        raise SuiteError("treat_x_post is collinear with the unit and period fixed effects")
    beta = math.fsum(x_w * y_w) / sxx
    resid = y_w - beta * x_w
    # The published within-transformed regression had an intercept, hence n - 2.
    se = math.sqrt(math.fsum(resid * resid) / (n - 2) / sxx)
    return finished("did", beta, se, n, method=METHOD, packages=("numpy", "pandas", "pyfixest"))


@dataclass(frozen=True)
class DidTopic:
    """A policy adopted by half of a panel of units from one period on."""

    title: str
    unit: str
    units: str
    period: str
    policy: str
    adopted: str
    outcome: str


# fmt: off
TOPICS: Final[tuple[DidTopic, ...]] = (
    DidTopic("Minimum wage increases and teen employment", "county", "counties", "quarter", "a minimum wage increase", "raised the local minimum wage", "teen employment rate"),
    DidTopic("Universal free school meals and attendance", "school district", "school districts", "term", "universal free school meals", "introduced free meals for all pupils", "pupil attendance rate"),
    DidTopic("Broadband rollout and small-business formation", "municipality", "municipalities", "year", "fibre broadband availability", "received fibre broadband", "rate of new business registrations"),
    DidTopic("Paid family leave and maternal labour supply", "county", "counties", "year", "a paid family leave mandate", "introduced paid family leave", "employment rate of mothers of infants"),
    DidTopic("Soda taxes and sugary-drink purchases", "city", "cities", "quarter", "a sugar-sweetened beverage tax", "levied a tax on sugary drinks", "per-capita sugary-drink purchases"),
    DidTopic("Ride-hailing entry and drunk-driving crashes", "metropolitan area", "metropolitan areas", "quarter", "the entry of ride-hailing services", "saw ride-hailing services launch", "alcohol-related crash rate"),
    DidTopic("Medicaid expansion and uncompensated hospital care", "hospital market", "hospital markets", "year", "an expansion of public health insurance", "expanded public health insurance eligibility", "uncompensated care costs of hospitals"),
    DidTopic("Ban-the-box laws and callback rates", "city", "cities", "half-year", "a ban on criminal-history questions in job applications", "banned criminal-history questions on job applications", "callback rate of job applicants"),
    DidTopic("Congestion charging and retail footfall", "shopping district", "shopping districts", "month", "a congestion charge", "introduced a congestion charge", "retail footfall"),
    DidTopic("Rent control and residential mobility", "neighbourhood", "neighbourhoods", "year", "rent control", "adopted rent control", "tenant turnover rate"),
    DidTopic("Mobile-money access and household savings", "village", "villages", "season", "mobile-money agents", "gained a mobile-money agent", "household savings"),
    DidTopic("Later school start times and test scores", "school", "schools", "term", "a later school start time", "moved the school day to start later", "average maths test score"),
    DidTopic("Plastic bag fees and litter", "town", "towns", "quarter", "a plastic bag fee", "introduced a plastic bag fee", "measured litter density"),
    DidTopic("Right-to-carry laws and violent crime", "county", "counties", "year", "a right-to-carry firearms law", "enacted a right-to-carry law", "violent crime rate"),
    DidTopic("Electronic health records and hospital readmissions", "hospital", "hospitals", "quarter", "an electronic health record system", "switched to electronic health records", "30-day readmission rate"),
    DidTopic("Agricultural extension services and crop yields", "district", "districts", "season", "an agricultural extension programme", "started an agricultural extension programme", "maize yield per hectare"),
    DidTopic("Public transit expansion and commuting time", "suburb", "suburbs", "year", "a new light-rail line", "was connected to a new light-rail line", "average commuting time"),
    DidTopic("Occupational licensing reform and entry", "county", "counties", "year", "a relaxation of occupational licensing", "relaxed local licensing rules for hairdressers", "number of new licensed practitioners"),
)
# fmt: on


def _text(topic: DidTopic, params: Mapping[str, float | int]) -> ScenarioText:
    n, t = int(params["n_units"]), int(params["n_periods"])
    half, start = n // 2, did_treat_start(t)
    columns = {
        "unit_id": f"{topic.unit} identifier, 0 to {n - 1}",
        "period": f"{topic.period} index, 1 to {t}",
        "treated": f"1 if the {topic.unit} {topic.adopted} (unit_id 0 to {half - 1}), 0 otherwise; "
        "constant over time",
        "post": f"1 in periods {start} to {t} for every {topic.unit}, 0 in periods 1 to {start - 1}",
        "treat_x_post": f"`treated` times `post`: 1 for the adopting {topic.units} from period "
        f"{start} on, 0 otherwise",
        "y": f"{topic.outcome} (standardised index)",
    }
    description = (
        f"A balanced panel of {n} {topic.units} observed in each of {t} {topic.period}s "
        f"({n * t} rows, one per {topic.unit} and {topic.period}). "
        f"Treated units: the {half} {topic.units} with `unit_id` below {half} {topic.adopted}; "
        f"the other {n - half} never did. The first treated period is period {start}: the policy "
        f"applies to the adopting {topic.units} from period {start} through period {t}.\n\n"
        + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"How did {topic.policy} change the {topic.outcome} in the {topic.units} that adopted "
            f"it, compared with what would have happened there without it?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The average effect of {topic.policy} on `y` ({topic.outcome}) for the adopting "
            f"{topic.units} in periods {start} to {t}, in the units of `y`."
        ),
        facts={
            "n_units": n,
            "n_periods": t,
            "treat_start": start,
            "treated_units": f"unit_id < {half}",
        },
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th DID scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_INTERACTION_SEP: Final = re.compile(r":|\*|×|\bx\b|_x_")


_DID_NAME: Final = re.compile(
    r"\bdid\b|^did|diff.?in.?diff|^d_?i_?d$|treat\w*[_.:*× ]+(x[_. ])?\w*(post|after)"
    r"|(post|after)\w*[_.:*× ]+(x[_. ])?\w*treat|^txp$|^tp$|treat_?post|post_?treat"
)


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the interaction of treatment and post-period."""
    if _DID_NAME.search(t):
        return 3
    if _INTERACTION_SEP.search(t):
        parts = [p for p in re.split(r":|\*|×|_x_", t) if p.strip()]
        treat = any("treat" in p for p in parts)
        if len(parts) == 2 and treat and any(re.search(r"post|after|policy", p) for p in parts):
            return 2
    return None


DESIGN: Final[Design] = Design(
    family="did",
    columns=COLUMNS,
    required_columns=REQUIRED_COLUMNS,
    groups=GROUPS,
    generate=_generate,
    canonical=canonical,
    naive_answer=None,
    topics=TOPICS,
    render_text=render_text,
    term_score=term_score,
    spec_bad=re.compile(r"pre[- ]?period|simple diff|no controls"),
    effect_alias=re.compile(r"treat\w*\W*\s*\*\s*\W*\w*\W*post|post\w*\W*\s*\*\s*\W*\w*treat"),
    instrumented=False,
)

"""Staggered adoption: cohorts of a balanced panel adopt a policy in different periods (some
never); the effect differs by cohort and grows with time since adoption, so the two-way
fixed-effects coefficient is biased.

Everything the family is: its CSV layout, cohorts, grid, generator, canonical estimator (the
simple aggregate of group-time effects), naive answer (two-way fixed effects), topics and text,
and the extraction vocabulary of its effect term.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
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
)
from causalverify.designs._code import AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished
from causalverify.designs._grid import same
from causalverify.designs._numbers import rounded
from causalverify.designs._panel import wide_panel
from causalverify.designs._topics import PanelTopic
from causalverify.errors import SuiteError

#: the published CSV layout (all of it is read by the canonical estimator)
COLUMNS: Final[tuple[str, ...]] = ("unit_id", "period", "first_treat", "treated", "y")
REQUIRED_COLUMNS: Final[tuple[str, ...]] = COLUMNS
METHOD: Final[str] = (
    "group-time ATT(g,t), never-treated controls, base period g-1; simple "
    "aggregation weighted by cohort size over post-adoption cells"
)

# fmt: off
GROUPS: Final[tuple[GridGroup, ...]] = (
    GridGroup(group="easy", difficulties=same("easy", 7), params=(("n_units", 120), ("n_periods", 10), ("sigma", 0.3), ("growth", 0.8)),
              betas=(0.40, -0.35, 0.50, -0.45, 0.30, 0.55, -0.40)),
    GridGroup(group="medium", difficulties=same("medium", 7), params=(("n_units", 100), ("n_periods", 10), ("sigma", 0.35), ("growth", 1.0)),
              betas=(0.35, -0.30, 0.45, -0.50, 0.40, -0.35, 0.30)),
    GridGroup(group="hard", difficulties=same("hard", 6), params=(("n_units", 80), ("n_periods", 12), ("sigma", 0.4), ("growth", 1.2)),
              betas=(0.40, -0.45, 0.35, -0.30, 0.50, -0.40)),
)
# fmt: on

_r = rounded


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


def _generate(params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame:
    return generate_staggered(
        n_units=int(params["n_units"]),
        n_periods=int(params["n_periods"]),
        sigma=float(params["sigma"]),
        growth=float(params["growth"]),
        beta=beta,
        rng=rng,
    )


def group_time_effects(data: pd.DataFrame) -> pd.DataFrame:
    """ATT(g, t) for every cohort g and post-adoption period t (never-treated controls, base
    g - 1), with the cohort's size: columns ``cohort, period, att, n_cohort``."""
    wide = wide_panel(data)
    first = data.groupby("unit_id")["first_treat"].first().reindex(wide.index)
    periods = [int(p) for p in wide.columns]
    never = (first == 0).to_numpy()
    if not never.any():
        raise SuiteError("no never-treated units (first_treat == 0): no comparison group")
    rows = []
    values = wide.to_numpy(dtype=float)
    for g in sorted(int(c) for c in first.unique() if c != 0):
        if g - 1 not in periods:
            raise SuiteError(f"cohort {g} has no period {g - 1} to compare with")
        base = periods.index(g - 1)
        members = (first == g).to_numpy()
        for t in periods:
            if t < g:
                continue
            col = periods.index(t)
            change = values[:, col] - values[:, base]
            att = change[members].mean() - change[never].mean()
            rows.append((g, t, float(att), int(members.sum())))
    return pd.DataFrame(rows, columns=["cohort", "period", "att", "n_cohort"])


def canonical(data: pd.DataFrame) -> CanonicalResult:
    """The simple aggregate of the group-time effects.

    Group-time average effects ATT(g, t) for every cohort g and post-adoption period t >= g, each
    the difference between the cohort's and the never-treated units' mean change of ``y`` from
    period g - 1 to t, aggregated with weights proportional to cohort size over all
    post-adoption cells (what R's ``did::aggte(type = "simple")`` reports). SE: the delta-method
    variance of that linear combination of unit means, units independent.
    """
    wide = wide_panel(data)
    first = data.groupby("unit_id")["first_treat"].first().reindex(wide.index).to_numpy()
    periods = [int(p) for p in wide.columns]
    values = wide.to_numpy(dtype=float)
    never = first == 0
    cohorts = sorted(int(g) for g in np.unique(first) if g != 0)
    if not cohorts or not never.any():
        raise SuiteError("staggered adoption needs treated cohorts and never-treated units")
    # each cohort's per-unit mean change over its post periods; weight n_g * (post periods)
    weights, stats = [], []
    for g in cohorts:
        base = periods.index(g - 1)
        post = [periods.index(t) for t in periods if t >= g]
        change = values[:, post].mean(axis=1) - values[:, base]
        weights.append((first == g).sum() * len(post))
        stats.append(change)
    w = np.asarray(weights, dtype=float) / float(sum(weights))
    estimate = 0.0
    variance = 0.0
    control_mix = np.zeros(int(never.sum()))
    for g, share, change in zip(cohorts, w, stats, strict=True):
        members = first == g
        estimate += share * (change[members].mean() - change[never].mean())
        if members.sum() > 1:
            variance += share**2 * change[members].var(ddof=1) / members.sum()
        control_mix += share * change[never]
    if never.sum() > 1:
        variance += control_mix.var(ddof=1) / never.sum()
    return finished(
        "staggered_did",
        estimate,
        math.sqrt(variance),
        len(data),
        method=METHOD,
        packages=("numpy", "pandas"),
    )


def twfe(data: pd.DataFrame) -> float:
    """The two-way fixed-effects coefficient on ``treated`` (what the textbook regression gives)."""
    y = _demean(data, "y")
    d = _demean(data, "treated")
    return float((d @ y) / (d @ d))


def _demean(data: pd.DataFrame, column: str) -> np.ndarray:
    wide = wide_panel(data, column).to_numpy(dtype=float)
    out = wide - wide.mean(axis=1, keepdims=True) - wide.mean(axis=0, keepdims=True) + wide.mean()
    return out.ravel()


# fmt: off
TOPICS: Final[tuple[PanelTopic, ...]] = (
    PanelTopic("Minimum wage increases and teen employment", "county", "counties", "year", "a higher local minimum wage", "teen employment"),
    PanelTopic("Broadband rollout and small-business formation", "district", "districts", "year", "municipal broadband", "new business registrations"),
    PanelTopic("Paid sick leave mandates and workplace injuries", "city", "cities", "year", "a paid sick leave mandate", "reported workplace injuries"),
    PanelTopic("School meal programmes and attendance", "school district", "school districts", "term", "universal free school meals", "average attendance"),
    PanelTopic("Ride-hailing entry and drunk-driving crashes", "metro area", "metro areas", "quarter", "the entry of ride-hailing services", "alcohol-related crashes"),
    PanelTopic("Medicaid expansions and hospital finances", "state", "states", "year", "expanded public health coverage", "hospital uncompensated care"),
)
# fmt: on


def _text(topic: PanelTopic, params: Mapping[str, float | int]) -> ScenarioText:
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
        f"and some never did. Once adopted, the policy stays in place.\n\n" + dictionary(columns)
    )
    return ScenarioText(
        topic=topic.title,
        title=topic.title,
        research_question=(
            f"How did {topic.policy} change {topic.outcome} in the {topic.units} that adopted it, "
            "on average over the periods after their adoption?"
        ),
        data_description=description,
        columns=columns,
        target=(
            f"The average effect of {topic.policy} on `y` over all {topic.unit}-{topic.period}s "
            "after adoption (every adopting unit in every period from its adoption on, each "
            "counted once), in the units of `y`."
        ),
        facts={"n_units": n, "n_periods": t, "adoption_periods": list(cohorts)},
        conversions={},
    )


def render_text(params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText:
    """The text of the ``ordinal``-th staggered-adoption scenario of a suite."""
    return _text(pick_topic(TOPICS, ordinal, suite_seed), params)


_EFFECT: Final = re.compile(
    r"^att$|overall|^simple|^agg|^treat(ed|ment)?$|^d$|^post$|treat\w*[_.:*× ]+post|^did$"
)


def term_score(t: str, hints: CodeHints) -> int | None:
    """Score a printed term as the aggregate effect of adoption."""
    return 2 if _EFFECT.search(t) else None


def check(s: Stated, d: pd.DataFrame) -> list[str]:
    """The suite checks of a staggered_did scenario: its text states what its data hold."""
    out: list[str] = []
    treated = (d["first_treat"] > 0) & (d["period"] >= d["first_treat"])
    if not np.array_equal(treated.astype(int).to_numpy(), d["treated"].to_numpy()):
        out.append(f"{s.id}: treated is not 1 exactly from first_treat on")
    stated = sorted(int(g) for g in d["first_treat"].unique() if g != 0)
    if stated != list(s.facts.get("adoption_periods", [])):  # type: ignore[call-overload]
        out.append(f"{s.id}: adoption periods in the text differ from the data's {stated}")
    if (d["first_treat"] == 0).sum() == 0:
        out.append(f"{s.id}: no never-treated units")
    if d.groupby("unit_id")["first_treat"].nunique().max() != 1:
        out.append(f"{s.id}: first_treat changes within a unit")
    return out


# -- the reference agents' code and prose ---------------------------------------------------------

#: the line each variant prints before its number (the same in every language)
_DESCRIPTIONS: Final[dict[str, str]] = {
    "textbook": "Average effect over all adopting unit-periods (group-time effects, "
    "never-adopting units as comparison):",
    "naive": "Two-way fixed-effects estimate of the effect of the policy:",
    "cumulative": "Average effect over all adopting unit-periods:",
    "wrong-term": "Effect in the first adoption period of the earliest adopters:",
}


_PY_STAGGERED_EST = """\
# Group-time effects: each adoption cohort against the never-adopting units, relative to the
# period just before the cohort adopted; averaged over adopting unit-periods (cohort sizes)
wide = df.pivot(index="unit_id", columns="period", values="y")
first = df.groupby("unit_id")["first_treat"].first()
never = first == 0
cells, sizes = [], []
for g in sorted(first[first > 0].unique()):
    members = first == g
    for t in wide.columns:
        if t < g:
            continue
        change = wide[t] - wide[g - 1]
        cells.append(change[members].mean() - change[never].mean())
        sizes.append(int(members.sum()))
est = float(np.average(cells, weights=sizes))
"""


PYTHON_CODE: Final[FamilyCode] = FamilyCode(
    setup="""\
import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("<<DATA>>")
""",
    textbook=_PY_STAGGERED_EST,
    robustness="""\
print(f"Cohorts: {int((first > 0).sum())} adopting units, {int(never.sum())} never adopting; "
      f"{len(cells)} group-time cells")
""",
    naive="""\
# Two-way fixed effects on the adoption indicator
fit = smf.ols("y ~ treated + C(unit_id) + C(period)", data=df).fit()
est = float(fit.params["treated"])
""",
    cumulative=_PY_STAGGERED_EST,
    wrong_term=_PY_STAGGERED_EST.replace(
        "est = float(np.average(cells, weights=sizes))", "est = float(cells[0])"
    ),
    missing="""\
from csdid.att_gt import ATTgt

att = ATTgt(yname="y", gname="first_treat", idname="unit_id", tname="period", data=df).fit()
est = float(att.aggte(typec="simple").atte["overall_att"])
""",
    typo=_PY_STAGGERED_EST.replace('["first_treat"]', '["first_treated"]'),
    descriptions=_DESCRIPTIONS,
)


_R_STAGGERED_EST = """\
# Group-time effects: each adoption cohort against the never-adopting units, relative to the
# period just before the cohort adopted; averaged over adopting unit-periods (cohort sizes)
y <- tapply(df$y, list(df$unit_id, df$period), mean)
first <- tapply(df$first_treat, df$unit_id, function(v) v[1])
periods <- as.numeric(colnames(y))
never <- first == 0
cells <- c()
sizes <- c()
for (g in sort(unique(first[first > 0]))) {
  members <- first == g
  base <- y[, periods == g - 1]
  for (t in periods[periods >= g]) {
    change <- y[, periods == t] - base
    cells <- c(cells, mean(change[members]) - mean(change[never]))
    sizes <- c(sizes, sum(members))
  }
}
est <- sum(cells * sizes) / sum(sizes)
"""


R_CODE: Final[FamilyCode] = FamilyCode(
    setup="""\
df <- read.csv("<<DATA>>")
""",
    textbook=_R_STAGGERED_EST,
    robustness="""\
cat(sprintf("Cohorts: %d adopting units, %d never adopting; %d group-time cells\\n",
            sum(first > 0), sum(never), length(cells)))
""",
    naive="""\
# Two-way fixed effects on the adoption indicator
fit <- lm(y ~ treated + factor(unit_id) + factor(period), data = df)
est <- unname(coef(fit)["treated"])
""",
    cumulative=_R_STAGGERED_EST,
    wrong_term=_R_STAGGERED_EST.replace(
        "est <- sum(cells * sizes) / sum(sizes)", "est <- cells[1]"
    ),
    missing="""\
library(did)
att <- att_gt(yname = "y", gname = "first_treat", idname = "unit_id", tname = "period", data = df)
est <- aggte(att, type = "simple")$overall.att
""",
    typo=_R_STAGGERED_EST.replace("df$first_treat", "df$first_treated"),
    descriptions=_DESCRIPTIONS,
)


PROSE: Final[AgentProse] = AgentProse(
    identification=(
        "Units adopt the policy in different periods and some never do, and the effect may "
        "differ by adoption cohort and grow with time since adoption. A single two-way "
        "fixed-effects regression would compare late adopters with early adopters whose "
        "effects are still changing, so I estimate each cohort's effect in each period "
        "after adoption against the never-adopting units, relative to the period just before "
        "the cohort adopted, and average these group-time effects over all adopting "
        "unit-periods.\n\n"
        "Key assumptions: without the policy, each cohort would have evolved like the "
        "never-adopting units, and no unit changed its outcome in anticipation."
    ),
    naive_identification=(
        "Units are observed before and after they adopt the policy, so I regress the outcome "
        "on the adoption indicator with unit and period effects; its coefficient is the "
        "effect of the policy."
    ),
    expected=(
        "I expect the effect to be larger for units that have had the policy longer; the "
        "average over adopting unit-periods summarises it."
    ),
    plan=(
        "I would compare each adoption cohort with the never-adopting units, period by "
        "period after adoption, relative to the period before adoption, and average the "
        "results over all adopting unit-periods."
    ),
)

# -- the analyses a draw must separate (scenarios.acceptance) --------------------------------------

Control = Literal["never", "notyet"]
Aggregation = Literal["simple", "group", "calendar"]


def _panel(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``y`` as units × periods, each unit's ``first_treat`` and the sorted periods."""
    wide = wide_panel(data)
    first = data.groupby("unit_id")["first_treat"].first().reindex(wide.index).to_numpy()
    periods = np.asarray([int(p) for p in wide.columns])
    return wide.to_numpy(dtype=float), first.astype(np.int64), periods


def callaway_santanna(
    data: pd.DataFrame, *, control: Control = "never", aggregation: Aggregation = "simple"
) -> float:
    """ATT(g, t) with base period g − 1 against never-treated units (``"never"``) or units not
    yet treated in period t (``"notyet"``), aggregated as R's ``did::aggte`` does: ``"simple"``
    weights post-adoption cells by cohort size, ``"group"`` averages each cohort's mean effect
    by cohort size, ``"calendar"`` averages over periods the cohort-size-weighted effect of
    the cohorts treated by then."""
    y, first, periods = _panel(data)
    cells: list[tuple[int, int, float, int]] = []
    for g in sorted(int(c) for c in np.unique(first) if c != 0):
        base = int(np.searchsorted(periods, g - 1))
        members = first == g
        for col, t in enumerate(periods):
            if t < g:
                continue
            ctrl = (first == 0) if control == "never" else ((first == 0) | (first > t))
            change = y[:, col] - y[:, base]
            cells.append((g, int(t), float(change[members].mean() - change[ctrl].mean()),
                          int(members.sum())))  # fmt: skip
    frame = pd.DataFrame(cells, columns=["g", "t", "att", "n"])
    if aggregation == "simple":
        return float(np.average(frame["att"], weights=frame["n"]))
    if aggregation == "group":
        by_g = frame.groupby("g").agg(att=("att", "mean"), n=("n", "first"))
        return float(np.average(by_g["att"], weights=by_g["n"]))
    by_t = frame.groupby("t")[["att", "n"]].apply(
        lambda f: float(np.average(f["att"], weights=f["n"]))
    )
    return float(by_t.mean())


def _two_way_fit(
    y: np.ndarray, unit: np.ndarray, period: np.ndarray, extra: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of ``y`` on unit and period dummies plus ``extra`` columns, the unit
    dummies partialled out by demeaning within unit (Frisch-Waugh-Lovell). Returns the unit
    effects, the period effects (the first period's is 0) and the ``extra`` coefficients."""
    n_units, n_periods = int(unit.max()) + 1, int(period.max()) + 1
    k = 0 if extra is None else extra.shape[1]
    x = np.zeros((len(y), n_periods - 1 + k))
    later = period > 0
    x[np.flatnonzero(later), period[later] - 1] = 1.0
    if extra is not None:
        x[:, n_periods - 1 :] = extra
    counts = np.bincount(unit, minlength=n_units).astype(float)

    def within(v: np.ndarray) -> np.ndarray:
        sums = np.stack([np.bincount(unit, weights=c, minlength=n_units) for c in v.T], axis=1)
        out: np.ndarray = v - (sums / counts[:, None])[unit]
        return out

    coef = np.linalg.lstsq(within(x), within(y[:, None])[:, 0], rcond=None)[0]
    alpha = np.bincount(unit, weights=y - x @ coef, minlength=n_units) / counts
    lam = np.concatenate([[0.0], coef[: n_periods - 1]])
    return alpha, lam, coef[n_periods - 1 :]


def imputation(data: pd.DataFrame) -> float:
    """Borusyak, Jaravel and Spiess: unit and period effects fitted on the untreated
    unit-periods, the treated ones' outcomes minus their imputed untreated outcomes, averaged
    over every treated unit-period."""
    y, first, periods = _panel(data)
    n_units, n_periods = y.shape
    unit = np.repeat(np.arange(n_units), n_periods)
    period = np.tile(np.arange(n_periods), n_units)
    treated = ((first[:, None] > 0) & (periods[None, :] >= first[:, None])).ravel()
    flat = y.ravel()
    alpha, lam, _ = _two_way_fit(flat[~treated], unit[~treated], period[~treated])
    fitted = alpha[unit[treated]] + lam[period[treated]]
    return float((flat[treated] - fitted).mean())


def cohort_two_by_two(data: pd.DataFrame) -> float:
    """Each cohort against never-treated units: the change from the mean of all its pre-periods
    to the mean of its post-periods; cohorts weighted by their treated unit-periods."""
    y, first, periods = _panel(data)
    never = first == 0
    total, weight = 0.0, 0.0
    for g in sorted(int(c) for c in np.unique(first) if c != 0):
        pre, post = periods < g, periods >= g
        change = y[:, post].mean(axis=1) - y[:, pre].mean(axis=1)
        members = first == g
        w = float(members.sum() * post.sum())
        total += w * float(change[members].mean() - change[never].mean())
        weight += w
    return total / weight


def sun_abraham(data: pd.DataFrame) -> float:
    """Sun and Abraham's interaction-weighted estimator: two-way fixed effects with a dummy for
    every cohort × relative period except the one before adoption (never-treated units as the
    reference cohort); the post-adoption interactions averaged by cohort size."""
    y, first, periods = _panel(data)
    n_units, n_periods = y.shape
    unit = np.repeat(np.arange(n_units), n_periods)
    period = np.tile(np.arange(n_periods), n_units)
    cohort = np.repeat(first, n_periods)
    cols, post_cells = [], []
    for g in sorted(int(c) for c in np.unique(first) if c != 0):
        for j, t in enumerate(periods):
            if t == g - 1:
                continue
            cols.append(((cohort == g) & (period == j)).astype(float))
            if t >= g:
                post_cells.append((len(cols) - 1, int((first == g).sum())))
    _, _, coef = _two_way_fit(y.ravel(), unit, period, np.column_stack(cols))
    effects = np.asarray([coef[k] for k, _ in post_cells])
    return float(np.average(effects, weights=[n for _, n in post_cells]))


def _cs(control: Control, aggregation: Aggregation) -> Analysis:
    controls = {"never": "never-treated", "notyet": "not-yet-treated"}
    return Analysis(
        f"cs_{aggregation}_{control}",
        f"Callaway-Sant'Anna, {aggregation} aggregation, {controls[control]} controls",
        partial(callaway_santanna, control=control, aggregation=aggregation),
    )


# fmt: off
ANALYSES: Final[DesignAnalyses] = DesignAnalyses(
    defensible=(
        *(_cs(c, a) for c in ("never", "notyet") for a in ("simple", "group", "calendar")),
        Analysis("imputation", "imputation (Borusyak, Jaravel and Spiess)", imputation),
        Analysis("cohort_2x2", "per-cohort 2x2 against never-treated, all pre-periods as base",
                 cohort_two_by_two),
        Analysis("sun_abraham", "interaction-weighted event study (Sun and Abraham)",
                 sun_abraham),
    ),
    mistakes=(Analysis("twfe", "static two-way fixed effects on treated", twfe),),
)
# fmt: on


DESIGN: Final[Design] = Design(
    family="staggered_did",
    columns=COLUMNS,
    required_columns=REQUIRED_COLUMNS,
    groups=GROUPS,
    generate=_generate,
    canonical=canonical,
    naive_answer=twfe,
    topics=TOPICS,
    render_text=render_text,
    check=check,
    r_code=R_CODE,
    python_code=PYTHON_CODE,
    prose=PROSE,
    analyses=ANALYSES,
    inference=None,
    design_packages=frozenset({"differences", "csdid"}),
    term_score=term_score,
    spec_bad=re.compile(r"pre[- ]?period|simple diff|no controls|placebo"),
    effect_alias=None,
    instrumented=False,
    discontinuity=None,
    label_good=re.compile(r"\batt\b|overall|aggregate|average (treatment )?effect"),
    label_bad=re.compile(r"pre[- ]?period|placebo|\bpre\b|static|\btwfe\b"),
    scales=None,
    judge_target=(
        "the staggered-adoption average effect on the treated: the cohorts' effects in each "
        "period from their adoption on, averaged over every adopting unit-period (each counted "
        "once; not the two-way fixed-effects coefficient)"
    ),
)

"""Other analyses of the modern designs: the defensible ones a competent analyst may choose, and
the characteristic mistakes. The modern suite keeps a draw only when every defensible analysis
lands within the scoring tolerance of the canonical and every mistake outside it
(:mod:`causalverify.scenarios.acceptance`). Each function takes a realised data set and returns
one number; none is a canonical.

- staggered adoption: Callaway–Sant'Anna aggregations (simple, group, calendar) with never- or
  not-yet-treated controls, the imputation estimator of Borusyak, Jaravel and Spiess, per-cohort
  2×2 comparisons with every pre-period as base, the interaction-weighted regression of Sun and
  Abraham; the mistake is static two-way fixed effects
  (:func:`~causalverify.designs.staggered_did.twfe`).
- fuzzy discontinuity: local polynomial Wald ratios (triangular or uniform kernel, degree 1 or 2,
  a given bandwidth; with the triangular kernel, rdrobust's conventional estimate at that
  bandwidth, and at degree 2 close to its bias-corrected one with ``b = h``), 2SLS with the running variable on each side; mistakes are
  OLS of ``y`` on ``took_up``, 2SLS without the running variable, and the sharp jump.
- synthetic control: weights matched on the pre-period mean plus a few lagged outcomes, synthetic
  difference-in-differences (Arkhangelsky et al.); mistakes are the gap to the plain donor
  average and the simple before-after comparison with it.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd

from causalverify.designs._numbers import SCALE4
from causalverify.designs._panel import simplex_weights, wide_panel
from causalverify.designs.fuzzy_rdd import CUTOFF
from causalverify.designs.synthetic_control import synth_arrays

Control = Literal["never", "notyet"]
Aggregation = Literal["simple", "group", "calendar"]
Kernel = Literal["uniform", "triangular"]


# -- staggered adoption --------------------------------------------------------------------------


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


# -- fuzzy discontinuity -------------------------------------------------------------------------


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


# -- synthetic control ---------------------------------------------------------------------------


def predictor_synth(data: pd.DataFrame, *, lags: int = 3) -> float:
    """Weights matched on predictors rather than on every pre-period: the pre-period mean of
    ``y`` and its last ``lags`` pre-period values (each predictor scaled by its spread across
    units, equal importance); the effect is the mean post-period gap."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    rows = np.vstack([pre_x.mean(axis=0), pre_x[-lags:]])
    target = np.concatenate([[pre_y.mean()], pre_y[-lags:]])
    scale = np.vstack([rows.T, target]).std(axis=0)
    scale[scale == 0] = 1.0
    w = simplex_weights(rows / scale[:, None], target / scale)
    return float((post_y - post_x @ w).mean())


def synthetic_did(data: pd.DataFrame) -> float:
    """Synthetic difference-in-differences (Arkhangelsky, Athey, Hirshberg, Imbens and Wager):
    unit weights on the simplex that track the treated unit's pre-period path up to a constant,
    with the ridge penalty ``zeta² T_pre`` (``zeta = T_post^(1/4)`` times the standard deviation
    of the donors' pre-period first differences); time weights on the simplex that make the
    donors' weighted pre-period levels track their post-period means up to a constant (penalty
    ``(1e-6 sigma)² N_donors``); the effect is the weighted difference-in-differences."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    t_pre, n_donors = pre_x.shape
    t_post = post_x.shape[0]
    sigma = float(np.diff(pre_x, axis=0).std(ddof=1))
    zeta = t_post**0.25 * sigma
    # unit weights: intercept by centring over periods, ridge by stacking a scaled identity
    xc = pre_x - pre_x.mean(axis=0)
    yc = pre_y - pre_y.mean()
    omega = simplex_weights(
        np.vstack([xc, zeta * math.sqrt(t_pre) * np.eye(n_donors)]),
        np.concatenate([yc, np.zeros(n_donors)]),
    )
    # time weights over pre-periods: donors' pre levels to their post means, centred by donor
    a = pre_x.T - pre_x.T.mean(axis=0)
    b = post_x.mean(axis=0) - post_x.mean(axis=0).mean()
    eta = 1e-6 * sigma * math.sqrt(n_donors)
    lam = simplex_weights(np.vstack([a, eta * np.eye(t_pre)]), np.concatenate([b, np.zeros(t_pre)]))
    treated_change = post_y.mean() - lam @ pre_y
    donor_change = post_x.mean(axis=0) - lam @ pre_x
    return float(treated_change - omega @ donor_change)


def donor_did(data: pd.DataFrame) -> float:
    """The treated unit's change from the pre- to the post-period mean minus the plain donor
    average's change."""
    pre_y, pre_x, post_y, post_x = synth_arrays(data)
    return float((post_y.mean() - pre_y.mean()) - (post_x.mean() - pre_x.mean()))

"""Canonical estimators of the modern-designs suite, where the textbook regression is wrong.

- ``staggered_did``: group-time average effects ATT(g, t) for every cohort g and post-adoption
  period t >= g, each the difference between the cohort's and the never-treated units' mean
  change of ``y`` from period g - 1 to t; aggregated with weights proportional to cohort size
  over all post-adoption cells (what R's ``did::aggte(type = "simple")`` reports). SE: the
  delta-method variance of that linear combination of unit means, units independent.
- ``fuzzy_rdd``: within ``near_cutoff``, 2SLS of ``y`` on ``took_up`` instrumented by
  ``eligible``, with an intercept, the centred running variable and its interaction with
  ``eligible`` (the jump in ``y`` over the jump in take-up, local linear, uniform kernel);
  HC1 SE.
- ``synthetic_control``: donor weights, non-negative and summing to one, that minimise the
  squared pre-period gap in ``y`` between the treated unit and the weighted donors (an exact
  active-set solution); the effect is the mean post-period gap. SE: the standard deviation of
  the pre-period gaps over the square root of the number of post periods (a rough scale, not a
  test).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from causalverify.errors import SuiteError
from causalverify.estimators._result import CanonicalResult, finished

PROFILE = "paper"
CUTOFF = 0.5

METHODS = {
    "staggered_did": "group-time ATT(g,t), never-treated controls, base period g-1; simple "
    "aggregation weighted by cohort size over post-adoption cells",
    "fuzzy_rdd": "2SLS y ~ 1 + rc + rc:eligible + [took_up ~ eligible] on near_cutoff == 1 "
    "(rc = running_var - 0.5); HC1 SE",
    "synthetic_control": "simplex-constrained least squares of the treated unit's pre-period y "
    "on the donors' (exact active set); mean post-period gap",
}


def _finish(family: str, estimate: float, se: float, n: int) -> CanonicalResult:
    return finished(family, estimate, se, n, method=METHODS[family], packages=("numpy", "pandas"))


def _wide(data: pd.DataFrame, value: str = "y") -> pd.DataFrame:
    wide = data.pivot(index="unit_id", columns="period", values=value)
    if wide.isna().to_numpy().any():
        raise SuiteError("the panel is not balanced: every unit needs every period")
    return wide.sort_index().sort_index(axis=1)


# -- staggered adoption --------------------------------------------------------------------------


def group_time_effects(data: pd.DataFrame) -> pd.DataFrame:
    """ATT(g, t) for every cohort g and post-adoption period t (never-treated controls, base
    g - 1), with the cohort's size: columns ``cohort, period, att, n_cohort``."""
    wide = _wide(data)
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


def staggered_did(data: pd.DataFrame) -> CanonicalResult:
    """The simple aggregate of the group-time effects (see the module docstring)."""
    wide = _wide(data)
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
    return _finish("staggered_did", estimate, math.sqrt(variance), len(data))


def twfe(data: pd.DataFrame) -> float:
    """The two-way fixed-effects coefficient on ``treated`` (what the textbook regression gives)."""
    y = _demean(data, "y")
    d = _demean(data, "treated")
    return float((d @ y) / (d @ d))


def _demean(data: pd.DataFrame, column: str) -> np.ndarray:
    wide = _wide(data, column).to_numpy(dtype=float)
    out = wide - wide.mean(axis=1, keepdims=True) - wide.mean(axis=0, keepdims=True) + wide.mean()
    return out.ravel()


# -- fuzzy discontinuity -------------------------------------------------------------------------


def _fuzzy_arrays(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    keep = data["near_cutoff"].to_numpy(dtype=float) == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the estimator has no data")
    y = data["y"].to_numpy(dtype=float)[keep]
    d = data["took_up"].to_numpy(dtype=float)[keep]
    z = data["eligible"].to_numpy(dtype=float)[keep]
    rc = data["running_var"].to_numpy(dtype=float)[keep] - CUTOFF
    controls = np.column_stack([np.ones_like(y), rc, rc * z])
    return y, d, z, controls


def fuzzy_rdd(data: pd.DataFrame) -> CanonicalResult:
    """Exactly identified 2SLS inside the window (see the module docstring); HC1 SE."""
    y, d, z, w = _fuzzy_arrays(data)
    x = np.column_stack([d, w])  # regressors: took_up first
    inst = np.column_stack([z, w])
    zx = inst.T @ x
    beta = np.linalg.solve(zx, inst.T @ y)
    resid = y - x @ beta
    n, k = x.shape
    bread = np.linalg.inv(zx)
    meat = (inst * resid[:, None]).T @ (inst * resid[:, None])
    cov = bread @ meat @ bread.T * n / (n - k)
    return _finish("fuzzy_rdd", float(beta[0]), float(math.sqrt(cov[0, 0])), n)


def sharp_jump(data: pd.DataFrame) -> float:
    """The coefficient on ``eligible`` in the sharp regression inside the window (the naive
    answer: the jump in ``y`` without dividing by the jump in take-up)."""
    y, _, z, w = _fuzzy_arrays(data)
    x = np.column_stack([z, w])
    return float(np.linalg.lstsq(x, y, rcond=None)[0][0])


# -- synthetic control ---------------------------------------------------------------------------


def _synth_arrays(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    wide = _wide(data)
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


def simplex_weights(x: np.ndarray, y: np.ndarray, *, tol: float = 1e-12) -> np.ndarray:
    """``argmin ||x w - y||^2`` over ``w >= 0, sum(w) = 1``, by an exact primal active-set method.

    Starts from the best single donor; each step solves the equality-constrained least squares on
    the current support (a KKT system), walks back to the feasible set if a weight turns negative,
    and adds the donor whose multiplier shows the objective can still fall. Ends when no donor
    outside the support can lower it (the KKT conditions hold to ``tol``).
    """
    n = x.shape[1]
    gram, lin = x.T @ x, x.T @ y
    scale = max(1.0, float(np.abs(gram).max()))
    first = int(np.argmin(((x - y[:, None]) ** 2).sum(axis=0)))
    w = np.zeros(n)
    w[first] = 1.0
    support = [first]
    for _ in range(50 * n):
        # the equality-constrained minimiser on the support
        k = len(support)
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k] = gram[np.ix_(support, support)]
        kkt[:k, k] = 1.0
        kkt[k, :k] = 1.0
        rhs = np.concatenate([lin[support], [1.0]])
        sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        target = np.zeros(n)
        target[support] = sol[:k]
        if (target[support] >= -tol).all():
            w = np.clip(target, 0.0, None)
            w /= w.sum()
            grad = gram @ w - lin
            mu = -float(np.dot(w, grad))  # the multiplier of the sum constraint
            reduced = grad + mu
            outside = [j for j in range(n) if j not in support]
            if not outside:
                return w
            j = min(outside, key=lambda c: reduced[c])
            if reduced[j] >= -tol * scale:
                return w
            support.append(j)
            continue
        # step from w towards target until the first weight on the support reaches zero
        direction = target - w
        ratios = [(w[i] / -direction[i], i) for i in support if direction[i] < 0 and target[i] < 0]
        step, leaving = min(ratios)
        w = w + step * direction
        w[leaving] = 0.0
        support = [i for i in support if w[i] > tol]
    raise SuiteError("the synthetic-control weights did not converge")


def synthetic_control(data: pd.DataFrame) -> CanonicalResult:
    """The mean post-period gap between the treated unit and its synthetic control."""
    pre_y, pre_x, post_y, post_x = _synth_arrays(data)
    w = simplex_weights(pre_x, pre_y)
    gaps_pre = pre_y - pre_x @ w
    gaps_post = post_y - post_x @ w
    se = float(np.std(gaps_pre, ddof=1) / math.sqrt(len(gaps_post)))
    return _finish("synthetic_control", float(gaps_post.mean()), se, len(data))


def donor_average(data: pd.DataFrame) -> float:
    """The mean post-period gap to the plain donor average (the naive comparison)."""
    _, _, post_y, post_x = _synth_arrays(data)
    return float((post_y - post_x.mean(axis=1)).mean())

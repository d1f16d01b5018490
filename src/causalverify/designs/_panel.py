"""Panel machinery shared by the panel designs' estimators: the wide table, simplex weights."""

from __future__ import annotations

import numpy as np
import pandas as pd

from causalverify.errors import SuiteError


def wide_panel(data: pd.DataFrame, value: str = "y") -> pd.DataFrame:
    """``value`` as a units x periods table, sorted both ways; the panel must be balanced."""
    wide = data.pivot(index="unit_id", columns="period", values=value)
    if wide.isna().to_numpy().any():
        raise SuiteError("the panel is not balanced: every unit needs every period")
    return wide.sort_index().sort_index(axis=1)


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

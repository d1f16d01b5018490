"""Profile ``paper``: the published release's canonical estimators, on pyfixest / statsmodels /
linearmodels.

Variance estimators (each reproduces the published ``standard_error``, to its 6 decimals, on all
15 reference CSVs we hold):

- DID: homoskedastic SE of OLS on the two-way within-transformed data with an intercept, i.e.
  ``SSR / (n - 2)`` over the partialled-out variance of ``treat_x_post`` (the absorbed fixed
  effects are not counted in the residual degrees of freedom, as in the published release).
- event study: cluster-robust by stock, CR1 (``G/(G-1) * (n-1)/(n-k)``).
- IV: heteroskedasticity-robust 2SLS SE without small-sample correction (HC0).
- RDD: HC3.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from causalverify.errors import SuiteError
from causalverify.estimators._result import CanonicalResult, finished

PROFILE = "paper"
BANDWIDTH_CENTER = 0.5
# Balanced panels demean exactly in one sweep; the tight tolerance keeps unbalanced panels in
# agreement with the dummy-variable solution well inside 1e-10 too.
DEMEAN_TOL = 1e-12

_METHODS = {
    "did": "TWFE OLS y ~ treat_x_post | unit_id + period (within transformation); iid SE, df n-2",
    "event_study": "pooled OLS ret ~ 1 + mkt_ret + 1{event_day>=0}; SE clustered by stock (CR1)",
    "iv": "2SLS y ~ 1 + controls + [x ~ z]; robust SE (HC0)",
    "rdd": "OLS y ~ treated * (running_var - 0.5) on near_cutoff == 1; HC3 SE",
}


def _finish(
    family: str, estimate: float, se: float, n: int, packages: tuple[str, ...]
) -> CanonicalResult:
    return finished(family, estimate, se, n, method=_METHODS[family], packages=packages)


def did(data: pd.DataFrame) -> CanonicalResult:
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
    return _finish("did", beta, se, n, ("numpy", "pandas", "pyfixest"))


def event_study(data: pd.DataFrame) -> CanonicalResult:
    """Pooled market-model OLS with a post-event indicator; SE clustered by stock."""
    import statsmodels.api as sm

    ret = data["ret"].to_numpy(dtype=float)
    post = (data["event_day"].to_numpy(dtype=float) >= 0).astype(float)
    exog = np.column_stack([np.ones_like(ret), data["mkt_ret"].to_numpy(dtype=float), post])
    groups = pd.factorize(data["stock_id"], sort=True)[0]
    fit = sm.OLS(ret, exog).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return _finish(
        "event_study",
        float(fit.params[2]),
        float(fit.bse[2]),
        len(ret),
        ("numpy", "pandas", "statsmodels"),
    )


def iv(data: pd.DataFrame) -> CanonicalResult:
    """Just-identified 2SLS with linearmodels; robust SE without debiasing."""
    from linearmodels.iv import IV2SLS

    n = len(data)
    exog = pd.DataFrame({"const": np.ones(n), "controls": data["controls"].to_numpy(dtype=float)})
    endog = pd.DataFrame({"x": data["x"].to_numpy(dtype=float)})
    instr = pd.DataFrame({"z": data["z"].to_numpy(dtype=float)})
    dep = pd.Series(data["y"].to_numpy(dtype=float), name="y")
    fit = IV2SLS(dep, exog, endog, instr).fit(cov_type="robust", debiased=False)
    return _finish(
        "iv",
        float(fit.params["x"]),
        float(fit.std_errors["x"]),
        int(fit.nobs),
        ("numpy", "pandas", "linearmodels"),
    )


def rdd(data: pd.DataFrame) -> CanonicalResult:
    """Local linear OLS inside the bandwidth (rows with ``near_cutoff == 1``); HC3 SE."""
    import statsmodels.api as sm

    keep = data["near_cutoff"].to_numpy(dtype=float) == 1
    if not keep.any():
        raise SuiteError("no rows with near_cutoff == 1: the RDD estimator has no data")
    y = data["y"].to_numpy(dtype=float)[keep]
    treated = data["treated"].to_numpy(dtype=float)[keep]
    centred = data["running_var"].to_numpy(dtype=float)[keep] - BANDWIDTH_CENTER
    exog = np.column_stack([np.ones_like(y), treated, centred, centred * treated])
    fit = sm.OLS(y, exog).fit(cov_type="HC3")
    return _finish(
        "rdd", float(fit.params[1]), float(fit.bse[1]), len(y), ("numpy", "pandas", "statsmodels")
    )

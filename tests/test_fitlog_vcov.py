"""The fit log says how each fit's standard errors were computed (``FitEntry.vcov``), in the real
sandbox with real R and Python: the SEs it logs are the ones the script's own call gives, and
the vcov text names the variance estimator where the package exposes it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from causalverify.families import Language
from causalverify.records import FitEntry
from causalverify.sandbox import ExecResult, Limits, Sandbox
from causalverify.sandbox.fitlog import parse_fit_log
from golden_helpers import fit_panel, needs_bwrap, needs_r

LIMITS = Limits(wall_seconds=60, cpu_seconds=60)


def _data() -> bytes:
    rng = np.random.default_rng(3)
    n = 400
    panel = fit_panel(rng, n)
    frame = pd.DataFrame(
        {
            **panel,
            "y": 1.5 * panel["x"] + 0.5 * panel["w"] + rng.normal(size=n),
            "run": rng.uniform(-1, 1, size=n),
        }
    )
    return frame.to_csv(index=False).encode()


def _run(sandbox: Sandbox, language: Language, code: str) -> ExecResult:
    result = sandbox.run(code, language, {"data/d.csv": _data()}, LIMITS)
    assert result.ok, result.stderr[-3000:]
    return result


def _se_truth(stdout: str) -> list[float]:
    """``SE <value>`` lines: the script's own SE of ``x`` after each fit."""
    return [float(line.split()[1]) for line in stdout.splitlines() if line.startswith("SE ")]


def _check(result: ExecResult, expected: list[tuple[str, str]]) -> None:
    got = [(f.function, f.vcov) for f in result.fits]
    assert got == expected
    for fit, se in zip(result.fits, _se_truth(result.stdout), strict=True):
        assert _se_of(fit, "x") == pytest.approx(se, rel=1e-12), fit.function


def _se_of(fit: FitEntry, term: str) -> float | None:
    return next(t.std_error for t in fit.terms if t.term == term)


R_CODE = r"""
suppressPackageStartupMessages({library(AER); library(estimatr); library(plm); library(lmtest);
  library(sandwich)})
d <- read.csv("data/d.csv")
se <- function(v) cat("SE", sprintf("%.17g", v), "\n")
f1 <- lm(y ~ x + w, data = d); se(sqrt(vcov(f1)["x", "x"]))
ct <- coeftest(f1, vcov. = vcovHC(f1, type = "HC1")); se(ct["x", 2])
ct <- coeftest(f1, vcov = vcovCL, cluster = ~id, type = "HC1"); se(ct["x", 2])
ct <- coeftest(f1); se(ct["x", 2])
V <- vcovHC(f1, type = "HC3"); ct <- coeftest(f1, V); se(ct["x", 2])
wrap <- function(m, ...) coeftest(m, ...)
ct <- wrap(f1, vcov. = sandwich::vcovCL(f1, cluster = d$id)); se(ct["x", 2])
f2 <- lm_robust(y ~ x + w, data = d, se_type = "HC1"); se(f2$std.error[["x"]])
f3 <- lm_robust(y ~ x + w, data = d, clusters = id, se_type = "stata"); se(f3$std.error[["x"]])
f4 <- iv_robust(y ~ x + w | z + w, data = d); se(f4$std.error[["x"]])
f5 <- ivreg(y ~ x + w | z + w, data = d); se(sqrt(vcov(f5)["x", "x"]))
f6 <- plm(y ~ x + w, data = d, index = c("id", "t"), model = "within"); se(sqrt(vcov(f6)["x", "x"]))
f7 <- glm(y ~ x + w, data = d); se(sqrt(vcov(f7)["x", "x"]))
"""

R_EXPECTED = [
    ("stats::lm", "classical"),
    ("lmtest::coeftest", 'vcovHC(f1, type = "HC1")'),
    ("lmtest::coeftest", 'vcovCL, cluster = ~id, type = "HC1"'),
    ("lmtest::coeftest", "classical"),
    ("lmtest::coeftest", "V"),
    ("lmtest::coeftest", "sandwich::vcovCL(f1, cluster = d$id)"),
    ("estimatr::lm_robust", "HC1"),
    ("estimatr::lm_robust", "stata by id"),
    ("estimatr::iv_robust", "HC2"),
    ("AER::ivreg", "classical"),
    ("plm::plm", "classical"),
    ("stats::glm", "classical"),
]


@needs_bwrap
@needs_r
def test_r_fits_log_their_vcov(sandbox: Sandbox) -> None:
    _check(_run(sandbox, "r", R_CODE), R_EXPECTED)


PY_CODE = r"""
import numpy as np, pandas as pd
import statsmodels.formula.api as smf
from linearmodels.iv import IV2SLS
from linearmodels.panel import PanelOLS
import pyfixest as pf
d = pd.read_csv("data/d.csv")
def se(v): print("SE", repr(float(v)))
se(smf.ols("y ~ x + w", data=d).fit().bse["x"])
se(smf.ols("y ~ x + w", data=d).fit(cov_type="HC1").bse["x"])
r = smf.ols("y ~ x + w", data=d).fit(cov_type="cluster", cov_kwds={"groups": d["id"]})
se(r.bse["x"])
se(IV2SLS.from_formula("y ~ 1 + w + [x ~ z]", d).fit(cov_type="robust").std_errors["x"])
r = IV2SLS.from_formula("y ~ 1 + w + [x ~ z]", d).fit(cov_type="unadjusted", debiased=True)
se(r.std_errors["x"])
r = IV2SLS.from_formula("y ~ 1 + w + [x ~ z]", d).fit(cov_type="clustered", clusters=d["id"])
se(r.std_errors["x"])
p = d.set_index(["id", "t"])
r = PanelOLS.from_formula("y ~ x + w + EntityEffects", p).fit(cov_type="clustered", cluster_entity=True)
se(r.std_errors["x"])
se(pf.feols("y ~ x + w | id", d, vcov={"CRV1": "id"}).se()["x"])
se(pf.feols("y ~ x + w", d, vcov="HC3").se()["x"])
se(pf.feols("y ~ x + w", d, vcov="iid").se()["x"])
"""

PY_EXPECTED = [
    ("statsmodels.OLS", "nonrobust"),
    ("statsmodels.OLS", "HC1"),
    ("statsmodels.OLS", "cluster"),
    ("linearmodels.IV2SLS", "robust; debiased=False"),
    ("linearmodels.IV2SLS", "unadjusted; debiased=True"),
    ("linearmodels.IV2SLS", "clustered; debiased=False"),
    ("linearmodels.PanelOLS", "Clustered"),
    ("pyfixest.feols", "CRV1 by id"),
    ("pyfixest.feols", "HC3"),
    ("pyfixest.feols", "iid"),
]


@needs_bwrap
def test_python_fits_log_their_vcov(sandbox: Sandbox) -> None:
    _check(_run(sandbox, "python", PY_CODE), PY_EXPECTED)


def test_vcov_is_optional_text_and_a_bad_one_is_dropped_not_the_entry() -> None:
    base = {"function": "f", "terms": [{"term": "x", "estimate": 1.0, "std_error": 0.1}]}
    lines = [
        json.dumps(base),
        json.dumps({**base, "vcov": "HC1"}),
        json.dumps({**base, "vcov": "x" * 201}),
        json.dumps({**base, "vcov": 3}),
    ]
    entries, note = parse_fit_log("\n".join(lines).encode())
    assert [e.vcov for e in entries] == [None, "HC1", None, None]
    assert note == ""
    assert FitEntry.model_validate({"function": "f", "terms": []}).vcov is None

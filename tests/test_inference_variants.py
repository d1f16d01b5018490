"""Canonical inference variants agree with independent implementations to 1e-6 relative:
pyfixest, statsmodels and linearmodels here, R's sandwich, estimatr and AER in the real R
(``tests/r/inference_variants.R``)."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import estimators_synth as synth
from causalverify.estimators import canonical, canonical_inference, vcov_kind
from causalverify.families import Family

REL = 1e-6
HERE = Path(__file__).resolve().parent
R_SCRIPT = HERE / "r" / "inference_variants.R"

CASES: list[tuple[str, Family, Callable[[int], pd.DataFrame]]] = [
    ("did", "did", synth.did),
    ("did_unbalanced", "did", synth.did_unbalanced),
    ("event_study", "event_study", synth.event_study),
    ("iv", "iv", synth.iv),
    ("rdd", "rdd", synth.rdd),
]
SEEDS = (1, 2)


def _ses(data: pd.DataFrame, family: Family) -> dict[str, float]:
    inference = canonical_inference(data, family)
    assert inference is not None
    return inference.ses


def _python_reference(data: pd.DataFrame, family: Family) -> dict[str, list[float]]:
    """Each variant by pyfixest, statsmodels or linearmodels (several where they exist)."""
    import pyfixest as pf
    import statsmodels.formula.api as smf
    from linearmodels.iv import IV2SLS

    out: dict[str, list[float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "did":
            fml = "y ~ treat_x_post | unit_id + period"
            term = "treat_x_post"
            out["cr1"] = [pf.feols(fml, data, vcov={"CRV1": "unit_id"}).se()[term]]
            out["hc1"] = [pf.feols(fml, data, vcov="hetero").se()[term]]
            out["classical"] = [pf.feols(fml, data, vcov="iid").se()[term]]
            dummies = "y ~ treat_x_post + C(unit_id) + C(period)"
            ols = smf.ols(dummies, data)
            out["cr1_dummies"] = [
                ols.fit(cov_type="cluster", cov_kwds={"groups": data["unit_id"]}).bse[term]
            ]
            out["hc1"].append(ols.fit(cov_type="HC1").bse[term])
            out["classical"].append(ols.fit().bse[term])
            out["classical_within"] = [canonical(data, "did").se]
        elif family == "event_study":
            frame = data.assign(post=(data["event_day"] >= 0).astype(float))
            ols = smf.ols("ret ~ mkt_ret + post", frame)
            clustered = ols.fit(cov_type="cluster", cov_kwds={"groups": frame["stock_id"]})
            pyf = pf.feols("ret ~ mkt_ret + post", frame, vcov={"CRV1": "stock_id"})
            out["cr1"] = [clustered.bse["post"], pyf.se()["post"]]
            out["hc1"] = [ols.fit(cov_type="HC1").bse["post"]]
            out["classical"] = [ols.fit().bse["post"]]
        elif family == "iv":
            model = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data)
            out["hc1"] = [model.fit(cov_type="robust", debiased=True).std_errors["x"]]
            out["hc0"] = [model.fit(cov_type="robust", debiased=False).std_errors["x"]]
            out["classical"] = [model.fit(cov_type="unadjusted", debiased=True).std_errors["x"]]
            out["hc1"].append(pf.feols("y ~ controls | x ~ z", data, vcov="HC1").se()["x"])
        else:
            window = data[data["near_cutoff"] == 1].assign(rc=lambda d: d["running_var"] - 0.5)
            ols = smf.ols("y ~ treated * rc", window)
            out["hc1"] = [ols.fit(cov_type="HC1").bse["treated"]]
            out["hc3"] = [ols.fit(cov_type="HC3").bse["treated"]]
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("name", "family", "make"), CASES, ids=[c[0] for c in CASES])
def test_variants_match_python_implementations(
    name: str, family: Family, make: Callable[[int], pd.DataFrame], seed: int
) -> None:
    data = make(seed)
    ses = _ses(data, family)
    reference = _python_reference(data, family)
    assert reference.keys() == ses.keys()
    for variant, values in reference.items():
        for value in values:
            assert ses[variant] == pytest.approx(value, rel=REL), (name, variant)


@pytest.mark.r
def test_variants_match_r_sandwich_and_estimatr(tmp_path: Path) -> None:
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.skip("Rscript is not installed, so the live R cross-check cannot run")
    expected: dict[str, dict[str, float]] = {}
    args = []
    for name, family, make in CASES:
        for seed in SEEDS:
            data = make(seed)
            path = tmp_path / f"{name}_{seed}.csv"
            data.to_csv(path, index=False)
            expected[str(path)] = _ses(pd.read_csv(path), family)
            args.append(f"{family}={path}")
    proc = subprocess.run(
        [rscript, "--vanilla", str(R_SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen: dict[str, set[str]] = {path: set() for path in expected}
    for line in proc.stdout.splitlines():
        path, variant, implementation, value = line.split("\t")
        assert expected[path][variant] == pytest.approx(float(value), rel=REL), (
            path,
            variant,
            implementation,
        )
        seen[path].add(variant)
    for path, ses in expected.items():
        # every variant but the published DID one (a hand-made within regression) is checked
        assert seen[path] == set(ses) - {"classical_within"}, path


def test_reference_variant_and_modern_families() -> None:
    for _, family, make in CASES:
        inference = canonical_inference(make(1), family)
        assert inference is not None
        assert inference.reference == ("cr1" if family in ("did", "event_study") else "hc1")
        assert all(np.isfinite(v) and v > 0 for v in inference.ses.values())
    # the published canonical SE is one of the variants
    for family, variant in (("event_study", "cr1"), ("iv", "hc0"), ("rdd", "hc3")):
        data = dict((c[1], c[2]) for c in CASES)[family](3)
        assert _ses(data, family)[variant] == pytest.approx(canonical(data, family).se, rel=1e-9)
    assert canonical_inference(pd.DataFrame({"y": [1.0]}), "synthetic_control") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("CRV1 by unit_id", "cluster"),
        ("vcovCL, cluster = ~id", "cluster"),
        ("stata by id", "cluster"),
        ("Clustered (unit_id)", "cluster"),
        ("clustered; debiased=False", "cluster"),
        ("robust; debiased=False", "hc0"),
        ("robust; debiased=True", "hc1"),
        ('vcovHC(f1, type = "HC1")', "hc1"),
        ("hetero", "hc1"),
        ("stata", "hc1"),
        ("HC3", "hc3"),
        ("nonrobust", "classical"),
        ("iid", "classical"),
        ("classical", "classical"),
        ("unadjusted; debiased=True", "classical"),
        ("V", None),
        ("", None),
        (None, None),
    ],
)
def test_vcov_kind(text: str | None, kind: str | None) -> None:
    assert vcov_kind(text) == kind

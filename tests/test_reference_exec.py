"""The reference panel's code, executed for real in the sandbox on published realised CSVs.

Every code-writing agent runs in R and Python on two scenarios per family; each documented
behaviour is checked against an independent in-process computation of what it should print.
"""

from __future__ import annotations

import dataclasses
import re
from concurrent.futures import ThreadPoolExecutor
from itertools import product

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from causalverify.estimators import canonical_inference
from causalverify.extraction import extract_estimate
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import LANGUAGES, Family, Language
from causalverify.records import Limits
from causalverify.reference import fragile_fault, write_response
from causalverify.scenarios.model import Scenario
from causalverify.scoring._inference import se_tier
from reference_exec import (
    HAS_R,
    REFERENCE_IDS,
    BatchJob,
    Run,
    code_blocks,
    estimate_values,
    labelled_values,
    numbers_near,
    reference_csv,
    reference_scenario,
    run_code,
    run_r_batch,
)

pytestmark = [
    pytest.mark.r,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not HAS_R, reason="Rscript is not installed"),
]

AGENTS = ("textbook", "naive", "cumulative", "wrong-term", "naive-se", "mute")
CASES = [(sid, fam) for fam in FAMILIES for sid in REFERENCE_IDS[fam]]
#: one scenario per family for the biased agents (keeps the module's runtime modest)
ONE_PER_FAMILY = [(REFERENCE_IDS[fam][0], fam) for fam in FAMILIES]
#: scenario ids (reusing a CSV) that the fragile agent breaks in each way
FRAGILE_IDS = {fault: next(f"f{i}" for i in range(100) if fragile_fault(f"f{i}") == fault)
               for fault in ("missing", "typo")}  # fmt: skip

Key = tuple[str, str, str, Language, str]  # (source id, scenario id, agent, language, protocol)


def _script(key: Key, family: Family) -> BatchJob:
    """The agent's script for ``key`` with its CSV, as an untagged batch job."""
    source, scenario_id, agent, language, protocol = key
    scenario = reference_scenario(source, family, scenario_id)
    text = write_response(agent, scenario, language=language, protocol=protocol)  # type: ignore[arg-type]
    [(_, code)] = code_blocks(text)
    return BatchJob("", code, scenario.data_file, reference_csv(source))


def _execute(key: Key, family: Family) -> Run:
    script = _script(key, family)
    return run_code(script.code, key[3], script.data_file, script.csv)


#: two batches of about 22 R scripts; each takes seconds unloaded, generous for two loaded cores
BATCH_LIMITS = Limits(wall_seconds=600.0, cpu_seconds=300.0)


@pytest.fixture(scope="module")
def runs() -> dict[Key, Run]:
    """Run every case once, two at a time. Each Python script and each fragile R script (whose
    failure is R's own, at start-up or at the library call) is an execution of its own; the other
    R scripts run in two executions, one R process apiece (``run_r_batch``: each script in its own
    working folder, with the global environment, attached packages, options and environment
    variables put back between scripts)."""
    jobs: dict[Key, Family] = {}
    for (sid, fam), lang in product(CASES, LANGUAGES):
        jobs[(sid, sid, "textbook", lang, "default")] = fam
    for (sid, fam), agent, lang in product(ONE_PER_FAMILY, AGENTS[1:], LANGUAGES):
        jobs[(sid, sid, agent, lang, "default")] = fam
    for (sid, fam), lang in product(ONE_PER_FAMILY, LANGUAGES):
        jobs[(sid, sid, "textbook", lang, "paper")] = fam
    for fam, fault, lang in product(FAMILIES, FRAGILE_IDS, LANGUAGES):
        jobs[(REFERENCE_IDS[fam][0], FRAGILE_IDS[fault], "fragile", lang, "default")] = fam
    batched = {key: fam for key, fam in jobs.items() if key[3] == "r" and key[2] != "fragile"}
    tags = {key: f"j{n}" for n, key in enumerate(batched)}
    r_jobs = [dataclasses.replace(_script(key, fam), tag=tags[key]) for key, fam in batched.items()]
    batches = [r_jobs[: len(r_jobs) // 2], r_jobs[len(r_jobs) // 2 :]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        r_futures = [pool.submit(run_r_batch, batch, BATCH_LIMITS) for batch in batches]
        futures = {
            key: pool.submit(_execute, key, fam) for key, fam in jobs.items() if key not in batched
        }
        out = {key: future.result() for key, future in futures.items()}
        by_tag = {tag: run for future in r_futures for tag, run in future.result().items()}
    return {**out, **{key: by_tag[tags[key]] for key in batched}}


def _scenario(sid: str, family: Family) -> Scenario:
    return reference_scenario(sid, family)


def _single_estimate(run: Run) -> float:
    assert run.status == "ok", run.stderr[-2000:]
    values = estimate_values(run.stdout)
    assert len(values) == 1, run.stdout
    assert labelled_values(run.stdout) == values
    return values[0]


def _ols(formula: str, data: pd.DataFrame, term: str) -> float:
    return float(smf.ols(formula, data=data).fit().params[term])


def _naive(sid: str, family: Family) -> float:
    """The documented naive quantity, computed here from the CSV."""
    df = pd.read_csv(reference_csv(sid))
    if family == "did":
        post = df[df["post"] == 1]
        return float(post[post.treated == 1].y.mean() - post[post.treated == 0].y.mean())
    if family == "event_study":
        abn = df["ret"] - df.groupby("stock_id")["ret"].transform("mean")
        return float(abn[df["event_day"] >= 0].mean())
    if family == "iv":
        return _ols("y ~ x + controls", df, "x")
    return float(df[df.treated == 1].y.mean() - df[df.treated == 0].y.mean())


def _wrong_term(sid: str, family: Family) -> float:
    """The documented neighbouring coefficient, computed here from the CSV."""
    df = pd.read_csv(reference_csv(sid))
    if family == "did":
        return _ols("y ~ treated * post", df, "treated")
    if family == "event_study":
        df["post"] = (df["event_day"] >= 0).astype(int)
        return _ols("ret ~ mkt_ret + post", df, "mkt_ret")
    if family == "iv":
        return _ols("x ~ z + controls", df, "z")
    near = df[df["near_cutoff"] == 1].assign(rc=lambda d: d["running_var"] - 0.5)
    return _ols("y ~ treated * rc", near, "rc")


def _printed_inference(run: Run) -> tuple[float, tuple[float, float], str]:
    """The ``SE:``, ``CI:`` and ``VCOV:`` lines of a run (exactly one of each)."""
    [se] = re.findall(r"^SE: (\S+)$", run.stdout, re.MULTILINE)
    [(lo, hi)] = re.findall(r"^CI: \[(\S+), (\S+)\]$", run.stdout, re.MULTILINE)
    [vcov] = re.findall(r"^VCOV: (.+)$", run.stdout, re.MULTILINE)
    return float(se), (float(lo), float(hi)), vcov


def _naive_se(sid: str, family: Family) -> float:
    """The documented wrong SE of ``naive-se``, computed here from the CSV."""
    df = pd.read_csv(reference_csv(sid))
    if family == "did":
        fit = smf.ols("y ~ treat_x_post + C(unit_id) + C(period)", data=df).fit()
        return float(fit.bse["treat_x_post"])
    if family == "event_study":
        df["post"] = (df["event_day"] >= 0).astype(int)
        return float(smf.ols("ret ~ mkt_ret + post", data=df).fit().bse["post"])
    if family == "iv":
        df["x_hat"] = smf.ols("x ~ z + controls", data=df).fit().fittedvalues
        return float(smf.ols("y ~ x_hat + controls", data=df).fit().bse["x_hat"])
    near = df[df["near_cutoff"] == 1]
    sides = [near.loc[near["treated"] == t, "y"] for t in (1, 0)]
    return float(np.sqrt(sum(side.var(ddof=1) / len(side) for side in sides)))


def _post_periods(sid: str, family: Family) -> int:
    df = pd.read_csv(reference_csv(sid))
    if family == "did":
        return int(df.loc[df["post"] == 1, "period"].nunique())
    if family == "event_study":
        return int(df.loc[df["event_day"] >= 0, "event_day"].nunique())
    return 1


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), CASES)
def test_textbook_reproduces_the_canonical(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    value = _single_estimate(runs[(sid, sid, "textbook", language, "default")])
    assert value == pytest.approx(_scenario(sid, family).canonical.estimate, rel=1e-8, abs=0)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), CASES)
def test_textbook_reports_the_reference_inference(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    """CR1 by unit / stock as fixest computes it for the panels, HC1 otherwise: the canonical
    reference variant to the printed precision, and the interval est -/+ 1.96 SE."""
    run = runs[(sid, sid, "textbook", language, "default")]
    est = _single_estimate(run)
    se, (lo, hi), vcov = _printed_inference(run)
    inference = canonical_inference(pd.read_csv(reference_csv(sid)), family)
    assert inference is not None
    assert se == pytest.approx(inference.ses[inference.reference], rel=1e-8, abs=0)
    assert se_tier(se, inference) == ("matches", inference.reference)
    assert (lo, hi) == pytest.approx((est - 1.959964 * se, est + 1.959964 * se), rel=1e-6)
    assert vcov.startswith("CR1 clustered" if family in ("did", "event_study") else "HC1")


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), ONE_PER_FAMILY)
def test_naive_se_gets_the_point_and_the_wrong_se(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    run = runs[(sid, sid, "naive-se", language, "default")]
    est = _single_estimate(run)
    assert est == pytest.approx(_scenario(sid, family).canonical.estimate, rel=1e-8, abs=0)
    se, _, _ = _printed_inference(run)
    assert se == pytest.approx(_naive_se(sid, family), rel=1e-8, abs=0)
    inference = canonical_inference(pd.read_csv(reference_csv(sid)), family)
    assert inference is not None
    tier, variant = se_tier(se, inference)
    if family in ("did", "event_study"):  # an unclustered variant of a clustered design
        assert (tier, variant) in (("wrong", "classical"), ("wrong", "hc1"))
    else:
        assert tier in ("wrong", "plausible") and variant is None


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), ONE_PER_FAMILY)
def test_textbook_under_paper_protocol_prints_a_labelled_line(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    run = runs[(sid, sid, "textbook", language, "paper")]
    assert run.status == "ok", run.stderr[-2000:]
    assert estimate_values(run.stdout) == []
    [value] = labelled_values(run.stdout)
    assert "SE:" not in run.stdout and "VCOV:" not in run.stdout
    canonical = _scenario(sid, family).canonical.estimate
    assert value == pytest.approx(canonical, rel=1e-8, abs=0)
    code = code_blocks(
        write_response("textbook", _scenario(sid, family), language=language, protocol="paper")
    )[0][1]
    extracted = extract_estimate(code=code, stdout=run.stdout, family=family)
    assert extracted.value == pytest.approx(canonical, rel=1e-8, abs=0), extracted.rationale


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), ONE_PER_FAMILY)
def test_naive_is_biased_as_documented(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    value = _single_estimate(runs[(sid, sid, "naive", language, "default")])
    assert value == pytest.approx(_naive(sid, family), rel=1e-8, abs=0)
    gap = value - _scenario(sid, family).canonical.estimate
    canonical = _scenario(sid, family).canonical.estimate
    if family == "did":  # the treated group's level difference (0.5 in the DGP) is kept
        assert 0.3 < gap < 0.7
    elif family == "event_study":  # benchmark includes the event days: ~10/21 of the effect
        assert 0.40 < value / canonical < 0.55
    elif family == "iv":  # confounding biases OLS upwards (~0.7 in the DGP)
        assert 0.4 < gap < 1.0
    else:  # the running variable's slope leaks into the comparison (~0.15 in the DGP)
        assert 0.05 < gap < 0.3


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), ONE_PER_FAMILY)
def test_cumulative_scales_the_per_period_effect(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    value = _single_estimate(runs[(sid, sid, "cumulative", language, "default")])
    factor = _post_periods(sid, family)
    assert factor == {"did": factor, "event_study": 11, "iv": 1, "rdd": 1}[family]
    if family in ("did", "event_study"):
        assert factor > 1
    expected = factor * _scenario(sid, family).canonical.estimate
    assert value == pytest.approx(expected, rel=1e-8, abs=0)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), ONE_PER_FAMILY)
def test_wrong_term_reports_a_neighbouring_coefficient(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    value = _single_estimate(runs[(sid, sid, "wrong-term", language, "default")])
    assert value == pytest.approx(_wrong_term(sid, family), rel=1e-8, abs=0)
    canonical = _scenario(sid, family).canonical.estimate
    assert abs(value - canonical) > 0.01 * abs(canonical)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("sid", "family"), ONE_PER_FAMILY)
def test_mute_runs_but_prints_no_estimate(
    runs: dict[Key, Run], sid: str, family: Family, language: Language
) -> None:
    run = runs[(sid, sid, "mute", language, "default")]
    assert run.status == "ok", run.stderr[-2000:]
    assert "ESTIMATE" not in run.stdout and "Estimated effect" not in run.stdout
    canonical = _scenario(sid, family).canonical.estimate
    assert numbers_near(run.stdout, canonical, 1e-3) == []
    assert run.stdout.strip()  # it does say something


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("family", FAMILIES)
def test_fragile_fails_on_its_subset(
    runs: dict[Key, Run], family: Family, language: Language
) -> None:
    sid = REFERENCE_IDS[family][0]
    missing = runs[(sid, FRAGILE_IDS["missing"], "fragile", language, "default")]
    expected_pkg = {
        ("r", "rdd"): "rdrobust",
        ("python", "rdd"): "rdd",
    }.get((language, family), "fixest" if language == "r" else "econtools")
    assert missing.status == "error"
    assert missing.missing_package == expected_pkg
    assert estimate_values(missing.stdout) == []
    typo = runs[(sid, FRAGILE_IDS["typo"], "fragile", language, "default")]
    assert typo.status == "error"
    assert typo.missing_package is None
    misspelt = {"did": "treat_post", "event_study": "mkt_return", "iv": "control"}
    assert misspelt.get(family, "near_cutof") in typo.stderr
    assert estimate_values(typo.stdout) == []


def test_panel_shows_code_that_runs_and_returns_a_wrong_number(runs: dict[Key, Run]) -> None:
    """Across the cases, the biased agents run cleanly yet mostly miss by more than 50%."""
    misses = []
    for (sid, scenario_id, agent, _lang, protocol), run in runs.items():
        if agent not in ("naive", "wrong-term") or protocol != "default":
            continue
        assert run.status == "ok"
        fam = next(f for s, f in CASES if s == sid)
        canonical = _scenario(scenario_id, fam).canonical.estimate
        misses.append(abs(_single_estimate(run) - canonical) / abs(canonical) > 0.5)
    assert np.mean(misses) > 0.6

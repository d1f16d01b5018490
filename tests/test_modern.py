"""The modern-designs suite end to end: builds, canonicals against independent implementations,
the acceptance property (every declared defensible analysis passes and every declared mistake
fails on every scenario), the suite rules, the textbook agent on every scenario in R and Python,
and the naive agent on a spread of them (printing what the in-process naive answer, checked on
every scenario, computes)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causalverify.estimators import canonical
from causalverify.estimators._modern import _synth_arrays, group_time_effects, simplex_weights
from causalverify.families import LANGUAGES, MODERN_FAMILIES, Language
from causalverify.models import ModelAccess
from causalverify.prompts import DESIGN_PACKAGES, render_experiment_b
from causalverify.records import Manifest
from causalverify.records.execution import Limits
from causalverify.reference import write_response
from causalverify.release import freeze_run, verify_release
from causalverify.report import write_report
from causalverify.runner import RunConfig, run_benchmark
from causalverify.runner.suite import balanced_subset
from causalverify.scenarios import build_suite, load_suite
from causalverify.scenarios.acceptance import ANALYSES, MIN_Z, TOLERANCE, distance, judge_draw
from causalverify.scenarios.checks import check_scenario, find_design_names, usable_canonical
from causalverify.scenarios.dgp import generate, read_csv_bytes, scenario_rng, to_csv_bytes
from causalverify.scenarios.model import Scenario
from causalverify.scenarios.modern import naive_answer
from causalverify.store import RunStore
from reference_exec import (
    BatchJob,
    Run,
    code_blocks,
    estimate_values,
    labelled_values,
    run_code,
    run_r_batch,
)

needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("modern") / "suite"
    build_suite(folder, suite="modern")
    return folder


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_two_builds_are_identical_and_cover_every_design(suite_dir: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_suite(again, suite="modern")
    assert _digests(suite_dir) == _digests(again)
    suite = load_suite(suite_dir)
    counts: dict[tuple[str, str], int] = {}
    for s in suite.scenarios:
        counts[(s.family, s.difficulty)] = counts.get((s.family, s.difficulty), 0) + 1
    for family in MODERN_FAMILIES:
        assert sum(v for (f, _), v in counts.items() if f == family) >= 20
        assert {d for (f, d) in counts if f == family} == {"easy", "medium", "hard"}
    assert suite.meta["seed"] and all(s.suite_seed == suite.seed for s in suite.scenarios)


def test_every_scenario_passes_the_suite_rules(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    for s in suite.scenarios:
        assert check_scenario(s, suite.read_data(s)) == [], s.id
    # the new designs' names and their estimators' authors are refused in scenario text
    for text in (
        "a staggered rollout",
        "Callaway and Sant'Anna",
        "as in Sun and Abraham",
        "a synthetic control",
        "a fuzzy design",
        "the local average treatment effect",
        "the donor pool",
        "the LATE",
    ):
        assert find_design_names(text), text


def test_the_textbook_regression_misses_every_scenario(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    for s in suite.scenarios:
        naive = naive_answer(s.family, suite.read_data(s))
        assert abs(naive - s.canonical.estimate) > TOLERANCE * abs(s.canonical.estimate), s.id


def test_every_defensible_analysis_passes_and_every_mistake_fails(suite_dir: Path) -> None:
    # both declared lists, recomputed on every scenario's data as written, against the stored
    # canonical; the build log holds the same distances
    suite = load_suite(suite_dir)
    log = {e["id"]: e for e in json.loads((suite_dir / "build_log.json").read_text())["scenarios"]}
    worst: dict[str, dict[str, float]] = {f: {"defensible": 0.0, "mistake": 9.0} for f in ANALYSES}
    for s in suite.scenarios:
        data, estimate = suite.read_data(s), s.canonical.estimate
        assert abs(estimate) >= MIN_Z * s.canonical.se, s.id
        design = ANALYSES[s.family]
        for a in design.defensible:
            d = distance(a.compute(data), estimate)
            assert d <= TOLERANCE, (s.id, a.name, d)
            assert log[s.id]["distances"][a.name] == d, (s.id, a.name)
            worst[s.family]["defensible"] = max(worst[s.family]["defensible"], d)
        for a in design.mistakes:
            d = distance(a.compute(data), estimate)
            assert d > TOLERANCE, (s.id, a.name, d)
            assert log[s.id]["distances"][a.name] == d, (s.id, a.name)
            worst[s.family]["mistake"] = min(worst[s.family]["mistake"], d)
    # margins, not just the property: measured on the suite as built (docs/SUITE.md)
    for family, margins in worst.items():
        assert margins["defensible"] < TOLERANCE < margins["mistake"], (family, margins)


def test_the_build_log_gives_the_reason_for_every_rejected_attempt(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    log = json.loads((suite_dir / "build_log.json").read_text())
    assert log["acceptance"]["tolerance"] == TOLERANCE and log["acceptance"]["min_z"] == MIN_Z
    assert set(log["acceptance"]["analyses"]) == set(MODERN_FAMILIES)
    entries = {e["id"]: e for e in log["scenarios"]}
    redrawn = [s for s in suite.scenarios if s.attempt > 0]
    assert redrawn and sum(s.attempt for s in suite.scenarios) == suite.meta["redraws"]
    for s in suite.scenarios:
        rejected = entries[s.id]["rejected"]
        assert [r["attempt"] for r in rejected] == list(range(s.attempt)), s.id
        assert all(r["reasons"] for r in rejected), s.id
    # the first redrawn scenario of each design: its rejected draws are rejected again, for the
    # logged reasons
    for family in MODERN_FAMILIES:
        s = next(x for x in redrawn if x.family == family)
        for r in entries[s.id]["rejected"]:
            frame = generate(
                s.family, s.params, s.beta, scenario_rng(s.suite_seed, s.index, r["attempt"])
            )
            data = read_csv_bytes(to_csv_bytes(frame))
            result = canonical(data, s.family)
            if "unusable" in r["reasons"][0]:
                assert not usable_canonical(result.estimate, s.beta), (s.id, r)
            else:
                assert list(judge_draw(s.family, data, result).reasons) == r["reasons"], (s.id, r)


def test_rdrobust_computes_the_declared_kernel_estimates(suite_dir: Path) -> None:
    # rdrobust (Python) with h = 0.3: the triangular local linear Wald of the defensible list,
    # and with a uniform kernel the canonical itself on exactly the near_cutoff rows
    rdrobust = pytest.importorskip("rdrobust").rdrobust
    suite = load_suite(suite_dir)
    fuzzy = [s for s in suite.scenarios if s.family == "fuzzy_rdd"][::4]
    declared = {a.name: a for a in ANALYSES["fuzzy_rdd"].defensible}
    for s in fuzzy:
        data = suite.read_data(s)
        args = (data["y"], data["running_var"])
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            tri = rdrobust(*args, c=0.5, fuzzy=data["took_up"], h=0.3, kernel="triangular")
            uni = rdrobust(*args, c=0.5, fuzzy=data["took_up"], h=0.3, kernel="uniform")
        ours = declared["ll_triangular_h030"].compute(data)
        assert float(tri.coef.iloc[0, 0]) == pytest.approx(ours, rel=1e-8), s.id
        assert float(uni.coef.iloc[0, 0]) == pytest.approx(s.canonical.estimate, rel=1e-8), s.id
        assert sum(int(n) for n in uni.N_h) == int(data["near_cutoff"].sum()), s.id


def test_no_running_value_lies_on_a_window_edge(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    for s in suite.scenarios:
        if s.family != "fuzzy_rdd":
            continue
        data = suite.read_data(s)
        for edge in (0.2, 0.3, 0.7, 0.8):
            assert not np.isclose(data["running_var"], edge, rtol=0, atol=1e-9).any(), (s.id, edge)
        # so a floating-point window |x - 0.5| <= 0.3 keeps exactly the rows near_cutoff flags
        window = (data["running_var"] - 0.5).abs() <= 0.3
        assert (window.astype(int) == data["near_cutoff"]).all(), s.id


def test_python_prompts_list_a_design_package_only_for_its_design(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    packages = {"numpy": "2", **{name: "1" for name in DESIGN_PACKAGES}}
    manifest = Manifest(r_version=None, r_packages={}, python_version="3", python_packages=packages)
    for family in MODERN_FAMILIES:
        s = next(x for x in suite.scenarios if x.family == family)
        user = (
            render_experiment_b(
                s, suite.read_data(s), language="python", protocol="default", manifest=manifest
            )
            .messages[1]
            .content
        )
        listed = {name for name in DESIGN_PACKAGES if f"{name} 1" in user}
        assert "numpy 2" in user
        assert listed == {n for n, fams in DESIGN_PACKAGES.items() if family in fams}, family


def _independent_staggered(data: pd.DataFrame) -> float:
    from differences import ATTgt

    panel = data.copy()
    panel["cohort"] = panel["first_treat"].where(panel["first_treat"] > 0, np.nan)
    panel = panel.set_index(["unit_id", "period"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        att = ATTgt(data=panel, cohort_column="cohort", base_period="universal")
        att.fit(formula="y", control_group="never_treated", progress_bar=False)
        return float(att.aggregate("simple").iloc[0, 0])


def _independent_fuzzy(data: pd.DataFrame) -> float:
    from linearmodels.iv import IV2SLS

    near = data[data["near_cutoff"] == 1].copy()
    near["rc"] = near["running_var"] - 0.5
    near["rc_e"] = near["rc"] * near["eligible"]
    near["const"] = 1.0
    fit = IV2SLS(near["y"], near[["const", "rc", "rc_e"]], near["took_up"], near["eligible"]).fit()
    return float(fit.params["took_up"])


def _independent_synth(data: pd.DataFrame) -> float:
    import quadprog

    pre_y, pre_x, post_y, post_x = _synth_arrays(data)
    k = pre_x.shape[1]
    # Goldfarb-Idnani dual active set: min 1/2 w'Gw - a'w s.t. C'w >= b (first meq equalities)
    g = pre_x.T @ pre_x + 1e-12 * np.eye(k)
    a = pre_x.T @ pre_y
    c = np.column_stack([np.ones(k), np.eye(k)])
    b = np.concatenate([[1.0], np.zeros(k)])
    w = quadprog.solve_qp(g, a, c, b, meq=1)[0]
    return float((post_y - post_x @ w).mean())


INDEPENDENT = {
    "staggered_did": _independent_staggered,
    "fuzzy_rdd": _independent_fuzzy,
    "synthetic_control": _independent_synth,
}


@pytest.mark.slow
def test_every_canonical_agrees_with_an_independent_implementation(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    for s in suite.scenarios:
        data = suite.read_data(s)
        ours = canonical(data, s.family).estimate
        assert ours == s.canonical.estimate
        other = INDEPENDENT[s.family](data)
        assert abs(ours - other) <= 1e-8 * max(1.0, abs(other)), (s.id, s.family, ours, other)


def test_group_time_effects_and_weights_are_what_they_claim(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    first = next(s for s in suite.scenarios if s.family == "staggered_did")
    effects = group_time_effects(suite.read_data(first))
    assert (effects["period"] >= effects["cohort"]).all()
    weighted = np.average(effects["att"], weights=effects["n_cohort"])
    assert weighted == pytest.approx(first.canonical.estimate, abs=1e-12)
    synth = next(s for s in suite.scenarios if s.family == "synthetic_control")
    pre_y, pre_x, _, _ = _synth_arrays(suite.read_data(synth))
    w = simplex_weights(pre_x, pre_y)
    assert (w >= 0).all() and w.sum() == pytest.approx(1.0, abs=1e-12)
    # no feasible move along the simplex lowers the pre-period fit (KKT)
    grad = pre_x.T @ (pre_x @ w - pre_y)
    support = w > 1e-10
    assert grad[~support].min() >= grad[support].max() - 1e-8


@needs_r
def test_r_computes_the_same_canonicals(suite_dir: Path, tmp_path: Path) -> None:
    # R's AER::ivreg for the fuzzy design and base R for the group-time effects, 1e-8
    suite = load_suite(suite_dir)
    picks = [s for f in ("staggered_did", "fuzzy_rdd") for s in suite.scenarios if s.family == f][
        ::5
    ]
    script = tmp_path / "check.R"
    script.write_text(
        """
suppressPackageStartupMessages(library(AER))
args <- commandArgs(trailingOnly = TRUE)
for (i in seq(1, length(args), by = 2)) {
  family <- args[i]; df <- read.csv(args[i + 1])
  if (family == "fuzzy_rdd") {
    near <- subset(df, near_cutoff == 1); near$rc <- near$running_var - 0.5
    fit <- ivreg(y ~ took_up + rc + rc:eligible | eligible + rc + rc:eligible, data = near)
    est <- unname(coef(fit)["took_up"])
  } else {
    y <- tapply(df$y, list(df$unit_id, df$period), mean)
    first <- tapply(df$first_treat, df$unit_id, function(v) v[1])
    periods <- as.numeric(colnames(y)); never <- first == 0; num <- 0; den <- 0
    for (g in sort(unique(first[first > 0]))) for (t in periods[periods >= g]) {
      change <- y[, periods == t] - y[, periods == g - 1]
      num <- num + sum(first == g) * (mean(change[first == g]) - mean(change[never]))
      den <- den + sum(first == g)
    }
    est <- num / den
  }
  cat(sprintf("%.17g\\n", est))
}
"""
    )
    args = [str(a) for s in picks for a in (s.family, suite.data_path(s))]
    out = subprocess.run(
        ["Rscript", "--vanilla", str(script), *args], capture_output=True, text=True, check=True
    )
    values = [float(v) for v in out.stdout.split()]
    assert len(values) == len(picks)
    for s, value in zip(picks, values, strict=True):
        assert abs(value - s.canonical.estimate) <= 1e-8 * max(1.0, abs(value)), s.id


needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

#: the textbook run of the pipeline test: this many scenarios (balanced_subset) take in every
#: design at every difficulty, which the test checks
PIPELINE_SCENARIOS = 18
#: one batch of 21 textbook R scripts takes a few seconds unloaded; generous for two loaded cores
BATCH_LIMITS = Limits(wall_seconds=600.0, cpu_seconds=300.0)
#: how close (relative distance) the textbook's printed estimate is to the canonical. Exact
#: where it computes the same solution (R's synthetic-control weights come from the same active
#: set as the canonical's); Python's synthetic control takes SLSQP's weights (measured on the
#: suite: at most 1e-7 off), well inside the scoring tolerance of 0.5
PRINTED_WITHIN: dict[tuple[str, Language], float] = {
    **{(f, lang): 1e-8 for f in ("staggered_did", "fuzzy_rdd") for lang in LANGUAGES},
    ("synthetic_control", "r"): 1e-8,
    ("synthetic_control", "python"): 1e-6,
}


def _textbook_code(scenario: Scenario, language: Language) -> str:
    text = write_response("textbook", scenario, language=language, protocol="default")
    [(_, code)] = code_blocks(text)
    return code


@pytest.fixture(scope="module")
def textbook_run(suite_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> RunConfig:
    """The run pipeline's textbook run on ``PIPELINE_SCENARIOS`` scenarios in both languages."""
    folder = tmp_path_factory.mktemp("textbook")
    config = RunConfig(
        suite_dir=suite_dir,
        out_dir=folder / "run",
        models=("reference/textbook",),
        limit=PIPELINE_SCENARIOS,
        workers=2,
        access=ModelAccess(cache_path=folder / "cache.sqlite"),
    )
    summary = run_benchmark(config)
    assert summary.total == PIPELINE_SCENARIOS * 2
    return config


@pytest.mark.sandbox
@pytest.mark.slow
@needs_bwrap
@needs_r
def test_textbook_prints_every_canonical_in_both_languages(
    suite_dir: Path, textbook_run: RunConfig
) -> None:
    """The textbook script of every scenario, executed in the sandbox, prints exactly one
    ESTIMATE line (and the same labelled line), in R and in Python, equal to the canonical
    within ``PRINTED_WITHIN`` (exactly, 1e-8, where the textbook computes the canonical's closed
    form; synthetic control's weights come from an iterative solver). The scenarios of the
    pipeline's textbook run are read from its stored executions; of the others, each Python
    script is its own execution (the warm path, as a run executes it) and the R scripts run in
    two executions, one R process apiece (``run_r_batch``: each script in its own working folder,
    with the global environment, attached packages, options and environment variables put back
    between scripts, so a script still fails if it relies on what an earlier one left). That the
    run pipeline scores such answers correct is the next test's part."""
    suite = load_suite(suite_dir)
    assert len(suite.scenarios) == 60 and LANGUAGES == ("r", "python")
    printed: dict[tuple[str, Language], Run] = {}
    with RunStore.open(textbook_run.out_dir) as store:
        for cell in store.iter_cells():
            assert cell.execution is not None, cell.key
            execution = cell.execution
            printed[cell.key.scenario_id, cell.key.language] = Run(
                execution.status, execution.stdout, execution.stderr, None
            )
    assert len(printed) == PIPELINE_SCENARIOS * 2
    rest = [s for s in suite.scenarios if (s.id, "r") not in printed]
    r_jobs = [BatchJob(s.id, _textbook_code(s, "r"), s.data_file, suite.data_path(s)) for s in rest]

    def python_cell(scenario: Scenario) -> Run:
        code = _textbook_code(scenario, "python")
        return run_code(code, "python", scenario.data_file, suite.data_path(scenario))

    half = len(r_jobs) // 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        r_futures = [
            pool.submit(run_r_batch, batch, BATCH_LIMITS)
            for batch in (r_jobs[:half], r_jobs[half:])
        ]
        python_runs = list(pool.map(python_cell, rest))
        printed.update(((tag, "r"), run) for f in r_futures for tag, run in f.result().items())
    printed.update(((s.id, "python"), run) for s, run in zip(rest, python_runs, strict=True))
    assert len(printed) == 60 * 2
    failures = []
    for scenario in suite.scenarios:
        canonical_estimate = scenario.canonical.estimate
        for language in LANGUAGES:
            run = printed[scenario.id, language]
            values = estimate_values(run.stdout)
            if run.status != "ok" or len(values) != 1 or labelled_values(run.stdout) != values:
                failures.append(f"{scenario.id} {language}: {run.status}: {run.stderr[-500:]}")
            elif (
                distance(values[0], canonical_estimate) > PRINTED_WITHIN[scenario.family, language]
            ):
                failures.append(f"{scenario.id} {language}: {values[0]!r} {canonical_estimate!r}")
    assert failures == []


@pytest.mark.sandbox
@pytest.mark.slow
@needs_bwrap
@needs_r
def test_textbook_scores_everything_and_naive_fails_every_design(
    suite_dir: Path, textbook_run: RunConfig, tmp_path: Path
) -> None:
    """The run pipeline (answer, sandbox execution, extraction, scoring, store) scores the
    textbook answers correct on scenarios of every design at every difficulty, in both
    languages, and the naive answers wrong for every design; the report and a re-executed
    release of the textbook run check out. That the textbook code prints the canonical on every
    scenario is proven for all 60 by the test above."""
    suite = load_suite(suite_dir)
    picked = balanced_subset(suite.scenarios, PIPELINE_SCENARIOS)
    assert {(s.family, s.difficulty) for s in picked} == {
        (f, d) for f in MODERN_FAMILIES for d in ("easy", "medium", "hard")
    }
    config = textbook_run
    with RunStore.open(config.out_dir) as store:
        textbook = list(store.iter_cells())
    assert {(c.key.scenario_id, c.key.language) for c in textbook} == {
        (s.id, language) for s in picked for language in LANGUAGES
    }
    assert all(c.status == "correct" for c in textbook), [
        (c.key, c.status, c.execution.stderr[-300:] if c.execution else "")
        for c in textbook
        if c.status != "correct"
    ]
    # naive on three scenarios per design in both languages: each cell is wrong and prints what
    # naive_answer computes in process, which misses every scenario of the suite (tested above)
    naive_run = RunConfig(
        suite_dir=suite_dir,
        out_dir=tmp_path / "naive",
        models=("reference/naive",),
        limit=9,
        workers=2,
        access=ModelAccess(cache_path=tmp_path / "cache.sqlite"),
    )
    assert run_benchmark(naive_run).total == 9 * 2
    with RunStore.open(naive_run.out_dir) as store:
        naive = list(store.iter_cells())
    by_id = {s.id: s for s in suite.scenarios}
    for family in MODERN_FAMILIES:
        cells = [c for c in naive if c.family == family]
        assert {c.key.language for c in cells} == {"r", "python"}, family
        assert all(c.status == "wrong" for c in cells), family
        for cell in cells:
            scenario = by_id[cell.key.scenario_id]
            expected = naive_answer(family, suite.read_data(scenario))
            assert cell.scores is not None and cell.scores.estimate is not None, cell.key
            assert cell.scores.estimate == pytest.approx(expected, rel=1e-6, abs=1e-9), cell.key
    # the report names the suite and shows each design; a release of the run verifies
    index = write_report(config.out_dir, config.out_dir / "report", n_resamples=50)
    report_summary = json.loads((index.parent / "summary.json").read_text())
    assert report_summary["title"].endswith("the modern suite")
    assert report_summary["families"] == ["FUZZY_RDD", "STAGGERED_DID", "SYNTHETIC_CONTROL"]
    release = tmp_path / "release"
    freeze_run(config.out_dir, release)
    report = verify_release(release, reexecute=True, limit=6)
    assert not report.hash_problems and not report.rescore_problems, report
    assert report.reexecution is not None and report.reexecution.n_cells == 6
    assert report.reexecution.problems == ()

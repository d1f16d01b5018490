"""The gold self-test: ``textbook`` reproduces every canonical of the default suite exactly, and
prints the canonical inference's reference SE (CR1 by unit or stock, HC1 otherwise).

Builds the full default suite (100 scenarios) and runs the textbook script of every scenario in
R and in Python in the sandbox. Each Python script is its own sandbox execution (the warm path,
as a run executes it); the R scripts run in two sandbox executions of 50 scripts each, one R
process apiece (``reference_exec.run_r_batch``: each script in its own working folder, with the
global environment, attached packages, options and environment variables put back between
scripts, so a script still fails if it depends on what an earlier one left behind). One R
start-up and one loading of the packages per batch instead of per script is most of the saving.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from causalverify.estimators import canonical_inference
from causalverify.families import LANGUAGES, Language
from causalverify.records.execution import Limits
from causalverify.reference import write_response
from causalverify.scenarios import Suite, load_suite
from causalverify.scenarios.model import Scenario
from reference_exec import (
    HAS_R,
    BatchJob,
    Run,
    code_blocks,
    estimate_values,
    labelled_values,
    run_code,
    run_r_batch,
)

pytestmark = [
    pytest.mark.r,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not HAS_R, reason="Rscript is not installed"),
]

#: a batch of 50 R scripts takes about 10 s of CPU unloaded; generous for two loaded cores
BATCH_LIMITS = Limits(wall_seconds=600.0, cpu_seconds=300.0)


@pytest.fixture(scope="module")
def suite(default_suite_dir: Path) -> Suite:
    return load_suite(default_suite_dir)


_SE = re.compile(r"^SE: (\S+)$", re.MULTILINE)


def _textbook_code(scenario: Scenario, language: Language) -> str:
    text = write_response("textbook", scenario, language=language, protocol="default")
    [(_, code)] = code_blocks(text)
    return code


def _printed(run: Run) -> str | tuple[float, float]:
    """The printed estimate and SE, or a description of what went wrong."""
    values = estimate_values(run.stdout)
    ses = _SE.findall(run.stdout)
    if run.status != "ok" or len(values) != 1 or labelled_values(run.stdout) != values:
        return f"{run.status}: {run.stdout[-300:]} {run.stderr[-500:]}"
    if len(ses) != 1:
        return f"no single SE line: {run.stdout[-300:]}"
    return values[0], float(ses[0])


def test_textbook_matches_every_canonical_in_both_languages(suite: Suite) -> None:
    assert len(suite.scenarios) == 100 and LANGUAGES == ("r", "python")
    r_jobs = [
        BatchJob(s.id, _textbook_code(s, "r"), s.data_file, suite.data_path(s))
        for s in suite.scenarios
    ]
    batches = [r_jobs[: len(r_jobs) // 2], r_jobs[len(r_jobs) // 2 :]]

    def python_cell(scenario: Scenario) -> Run:
        code = _textbook_code(scenario, "python")
        return run_code(code, "python", scenario.data_file, suite.data_path(scenario))

    with ThreadPoolExecutor(max_workers=2) as pool:
        r_futures = [pool.submit(run_r_batch, batch, BATCH_LIMITS) for batch in batches]
        python_runs = list(pool.map(python_cell, suite.scenarios))
        r_runs = {tag: run for f in r_futures for tag, run in f.result().items()}
    failures = []
    for scenario, python_run in zip(suite.scenarios, python_runs, strict=True):
        canonical = scenario.canonical.estimate
        inference = canonical_inference(pd.read_csv(suite.data_path(scenario)), scenario.family)
        assert inference is not None
        reference = inference.ses[inference.reference]
        for language, run in (("r", r_runs[scenario.id]), ("python", python_run)):
            printed = _printed(run)
            if isinstance(printed, str):
                failures.append(f"{scenario.id} {language}: {printed}")
                continue
            value, se = printed
            if abs(value - canonical) > 1e-8 * abs(canonical):
                failures.append(
                    f"{scenario.id} {language}: printed {value!r}, canonical {canonical!r}"
                )
            if abs(se - reference) > 1e-8 * reference:
                failures.append(f"{scenario.id} {language}: SE {se!r}, reference {reference!r}")
    assert failures == []

"""The gold self-test: ``textbook`` reproduces every canonical of the default suite exactly, and
prints the canonical inference's reference SE (CR1 by unit or stock, HC1 otherwise).

Builds the full default suite (100 scenarios) and runs the textbook script of every scenario in
R and in Python in the sandbox (about 200 executions, two at a time).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from causalverify.estimators import canonical_inference
from causalverify.families import LANGUAGES, Language
from causalverify.reference import write_response
from causalverify.scenarios import Suite, load_suite
from causalverify.scenarios.model import Scenario
from reference_exec import HAS_R, code_blocks, estimate_values, labelled_values, run_code

pytestmark = [
    pytest.mark.r,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(not HAS_R, reason="Rscript is not installed"),
]


@pytest.fixture(scope="module")
def suite(default_suite_dir: Path) -> Suite:
    return load_suite(default_suite_dir)


_SE = re.compile(r"^SE: (\S+)$", re.MULTILINE)


def _textbook_estimate(
    suite: Suite, scenario: Scenario, language: Language
) -> str | tuple[float, float]:
    """The printed estimate and SE, or a description of what went wrong."""
    text = write_response("textbook", scenario, language=language, protocol="default")
    [(_, code)] = code_blocks(text)
    run = run_code(code, language, scenario.data_file, suite.data_path(scenario))
    values = estimate_values(run.stdout)
    ses = _SE.findall(run.stdout)
    if run.status != "ok" or len(values) != 1 or labelled_values(run.stdout) != values:
        return f"{run.status}: {run.stdout[-300:]} {run.stderr[-500:]}"
    if len(ses) != 1:
        return f"no single SE line: {run.stdout[-300:]}"
    return values[0], float(ses[0])


def test_textbook_matches_every_canonical_in_both_languages(suite: Suite) -> None:
    assert len(suite.scenarios) == 100
    jobs = [(scenario, language) for scenario in suite.scenarios for language in LANGUAGES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: _textbook_estimate(suite, *job), jobs))
    failures = []
    for (scenario, language), printed in zip(jobs, results, strict=True):
        canonical = scenario.canonical.estimate
        inference = canonical_inference(pd.read_csv(suite.data_path(scenario)), scenario.family)
        assert inference is not None
        reference = inference.ses[inference.reference]
        if isinstance(printed, str):
            failures.append(f"{scenario.id} {language}: {printed}")
            continue
        value, se = printed
        if abs(value - canonical) > 1e-8 * abs(canonical):
            failures.append(f"{scenario.id} {language}: printed {value!r}, canonical {canonical!r}")
        if abs(se - reference) > 1e-8 * reference:
            failures.append(f"{scenario.id} {language}: SE {se!r}, reference {reference!r}")
    assert failures == []

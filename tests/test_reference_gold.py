"""The gold self-test: ``textbook`` reproduces every canonical of the default suite exactly.

Builds the full default suite (100 scenarios) and runs the textbook script of every scenario in
R and in Python in the sandbox (about 200 executions, two at a time).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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


def _textbook_estimate(suite: Suite, scenario: Scenario, language: Language) -> str | float:
    """The printed estimate, or a description of what went wrong."""
    text = write_response("textbook", scenario, language=language, protocol="default")
    [(_, code)] = code_blocks(text)
    run = run_code(code, language, scenario.data_file, suite.data_path(scenario))
    values = estimate_values(run.stdout)
    if run.status != "ok" or len(values) != 1 or labelled_values(run.stdout) != values:
        return f"{run.status}: {run.stdout[-300:]} {run.stderr[-500:]}"
    return values[0]


def test_textbook_matches_every_canonical_in_both_languages(suite: Suite) -> None:
    assert len(suite.scenarios) == 100
    jobs = [(scenario, language) for scenario in suite.scenarios for language in LANGUAGES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: _textbook_estimate(suite, *job), jobs))
    failures = []
    for (scenario, language), value in zip(jobs, results, strict=True):
        canonical = scenario.canonical.estimate
        if isinstance(value, str) or abs(value - canonical) > 1e-8 * abs(canonical):
            failures.append(f"{scenario.id} {language}: printed {value!r}, canonical {canonical!r}")
    assert failures == []

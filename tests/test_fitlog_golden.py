"""On the whole golden corpus, the hooks change nothing a script prints.

The fixtures' stdout was produced with the hooks switched off (``tests/golden/regenerate.py``: no
fit log, no output provenance); here every script runs again in the real sandbox with both on:
stdout must be identical (clock times that summaries print aside), the fits must be the stored
ones, and the run must know which code printed its output. (The edge-case corpus, which has no
stored fixtures, is run with and without the hooks side by side in ``test_outputs_golden.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from causalverify.sandbox import Limits, Sandbox, get_sandbox, line_origins
from causalverify.scenarios.model import Scenario
from golden_helpers import GOLDEN, SANDBOX_MARKS, comparable, golden_regenerate, golden_scenarios

pytestmark = SANDBOX_MARKS


REGEN = golden_regenerate()
CASES: list[dict[str, Any]] = json.loads((GOLDEN / "manifest.json").read_text())["cases"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Scenario]]:
    return golden_scenarios(tmp_path_factory)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return get_sandbox()


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_hooked_run_prints_what_the_plain_run_printed_and_knows_its_origins(
    case: dict[str, Any], suite: tuple[Path, dict[str, Scenario]], sandbox: Sandbox
) -> None:
    root, scenarios = suite
    sc = scenarios[case["scenario"]]
    script = GOLDEN / "scripts" / case["script"]
    result = sandbox.run(
        script.read_text(),
        case["language"],
        files={"data/scenario.csv": root / sc.data_file},
        limits=Limits(wall_seconds=120, cpu_seconds=120),
    )
    assert result.ok, result.stderr[-2000:]
    expected = (GOLDEN / "fixtures" / f"{case['case']}.stdout").read_text()
    # a float printed at full precision may differ in its last digits from the machine that
    # recorded the fixture (BLAS kernels differ by CPU); compare such numbers at 12 digits
    assert comparable(result.stdout) == comparable(expected)
    stored = json.loads((GOLDEN / "fixtures" / f"{case['case']}.fits.json").read_text())
    got = [f.model_dump(mode="json") for f in result.fits]
    # some estimators (pyfixest's demeaning) are not bit-reproducible run to run: last-ulp noise
    assert _same(got, stored), (got, stored)
    assert result.outputs_note == "", result.outputs_note
    assert line_origins(result), "the hooked run recorded no output origin"


def _same(a: Any, b: Any) -> bool:
    """Equal structure and strings; floats equal to 1e-9 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-15
    return bool(a == b)

"""On the whole golden corpus, the fit log changes nothing a script prints.

The fixtures' stdout was produced with the fit log switched off (``tests/golden/regenerate.py``);
here every script runs again in the real sandbox with the fit log on: stdout must be identical
(clock times that summaries print aside) and the fits must be the stored ones.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from causalverify.sandbox import Limits, Sandbox, get_sandbox
from causalverify.scenarios.build import build_suite
from causalverify.scenarios.model import Scenario

GOLDEN = Path(__file__).resolve().parent / "golden"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
]


def _regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REGEN = _regenerate()
CASES: list[dict[str, Any]] = json.loads((GOLDEN / "manifest.json").read_text())["cases"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Scenario]]:
    root = tmp_path_factory.mktemp("golden") / "suite"
    build_suite(root, seed=REGEN.SEED)
    picked = REGEN.pick_scenarios(root)
    return root, {sc.id: sc for scs in picked.values() for sc in scs}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return get_sandbox()


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_hooked_run_prints_what_the_plain_run_printed(
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
    assert _digits12(REGEN._untimed(result.stdout)) == _digits12(REGEN._untimed(expected))
    stored = json.loads((GOLDEN / "fixtures" / f"{case['case']}.fits.json").read_text())
    got = [f.model_dump(mode="json") for f in result.fits]
    # some estimators (pyfixest's demeaning) are not bit-reproducible run to run: last-ulp noise
    assert _same(got, stored), (got, stored)


_LONG_FLOAT = re.compile(r"-?\d+\.\d{13,}(?:e[+-]?\d+)?")


def _digits12(text: str) -> str:
    """``text`` with every float of 13+ decimals written at 12 significant digits."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.12g}", text)


def _same(a: Any, b: Any) -> bool:
    """Equal structure and strings; floats equal to 1e-9 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-15
    return bool(a == b)

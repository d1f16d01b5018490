"""Output provenance changes nothing a script prints: every golden script and the edge-case corpus
run with the hooks and without them print the same stdout and stderr, and the hooked run knows
where its output came from.

The golden scripts run on one scenario each (``tests/golden/manifest.json``); the edge cases
(``tests/fixtures/outputs``) exercise sinks, files, separators, invisibility, errors in print
methods, redirected and raw Python streams, and scripts that fail or exit with output pending.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from causalverify.families import Language
from causalverify.sandbox import Limits, Sandbox, get_sandbox, line_origins
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.scenarios.build import build_suite

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden"
EDGE = TESTS / "fixtures" / "outputs"
LIMITS = Limits(wall_seconds=180, cpu_seconds=180)

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
_CASES: list[dict[str, Any]] = json.loads((GOLDEN / "manifest.json").read_text())["cases"]
#: one case per golden script
GOLDEN_CASES = list({c["script"]: c for c in reversed(_CASES)}.values())
EDGE_SCRIPTS = sorted(p.name for p in EDGE.iterdir() if p.suffix in (".R", ".py"))
EDGE_CSV = "y,x\n" + "\n".join(f"{(i * 37 % 11) / 3:.4f},{(i * 13 % 7) / 2:.4f}" for i in range(60))


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("golden") / "suite"
    build_suite(root, seed=REGEN.SEED)
    picked = REGEN.pick_scenarios(root)
    return root, {sc.id: sc for scs in picked.values() for sc in scs}


@pytest.fixture(scope="module", params=["warm", "cold"])
def arms(request: pytest.FixtureRequest) -> Iterator[tuple[Sandbox, BwrapSandbox]]:
    warm = request.param == "warm"
    plain = BwrapSandbox(fit_log=False, warm=warm)
    try:
        yield get_sandbox(warm=warm), plain
    finally:
        plain.close()


_LONG_FLOAT = re.compile(r"-?\d+\.\d{13,}(?:e[+-]?\d+)?")


def _same_text(text: str) -> str:
    """``text`` without clock times, floats of 13+ decimals at 12 digits (some estimators are
    not bit-reproducible run to run)."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.12g}", REGEN._untimed(text))


def _both(
    arms: tuple[Sandbox, BwrapSandbox], code: str, language: Language, files: dict[str, Any]
) -> None:
    hooked, plain = arms
    on = hooked.run(code, language, files, LIMITS)
    off = plain.run(code, language, files, LIMITS)
    assert (on.status, on.exit_code) == (off.status, off.exit_code), on.stderr[-2000:]
    assert _same_text(on.stdout) == _same_text(off.stdout)
    assert _same_text(on.stderr) == _same_text(off.stderr)
    assert off.outputs == []
    assert on.outputs_note == "", on.outputs_note
    assert line_origins(on), "the hooked run recorded no output origin"


@pytest.mark.parametrize(
    ("case", "arms"),
    # R always runs cold; the golden corpus runs Python on the default (warm) path
    [(c, "cold" if c["language"] == "r" else "warm") for c in GOLDEN_CASES],
    ids=[c["script"] for c in GOLDEN_CASES],
    indirect=["arms"],
)
def test_golden_script_prints_the_same_with_provenance(
    case: dict[str, Any],
    suite: tuple[Path, dict[str, Any]],
    arms: tuple[Sandbox, BwrapSandbox],
) -> None:
    root, scenarios = suite
    sc = scenarios[case["scenario"]]
    code = (GOLDEN / "scripts" / case["script"]).read_text()
    _both(arms, code, case["language"], {"data/scenario.csv": root / sc.data_file})


@pytest.mark.parametrize("name", EDGE_SCRIPTS)
def test_edge_case_prints_the_same_with_provenance(
    name: str, arms: tuple[Sandbox, BwrapSandbox]
) -> None:
    language: Language = "r" if name.endswith(".R") else "python"
    code = (EDGE / name).read_text()
    _both(arms, code, language, {"data/d.csv": EDGE_CSV.encode()})

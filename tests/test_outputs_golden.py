"""Output provenance changes nothing a script prints: every golden script and the edge-case corpus
run with the hooks and without them print the same stdout and stderr, and the hooked run knows
where its output came from.

The golden scripts run on one scenario each (``tests/golden/manifest.json``); the edge cases
(``tests/fixtures/outputs``) exercise sinks, files, separators, invisibility, errors in print
methods, redirected and raw Python streams, and scripts that fail or exit with output pending.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from causalverify.families import Language
from causalverify.sandbox import Limits, Sandbox, get_sandbox, line_origins
from causalverify.sandbox.bwrap import BwrapSandbox
from golden_helpers import SANDBOX_MARKS, comparable, golden_regenerate, golden_scenarios

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden"
EDGE = TESTS / "fixtures" / "outputs"
LIMITS = Limits(wall_seconds=180, cpu_seconds=180)

pytestmark = SANDBOX_MARKS


REGEN = golden_regenerate()
_CASES: list[dict[str, Any]] = json.loads((GOLDEN / "manifest.json").read_text())["cases"]
#: one case per golden script
GOLDEN_CASES = list({c["script"]: c for c in reversed(_CASES)}.values())
EDGE_SCRIPTS = sorted(p.name for p in EDGE.iterdir() if p.suffix in (".R", ".py"))
EDGE_CSV = "y,x\n" + "\n".join(f"{(i * 37 % 11) / 3:.4f},{(i * 13 % 7) / 2:.4f}" for i in range(60))


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    return golden_scenarios(tmp_path_factory)


@pytest.fixture(scope="module", params=["warm", "cold"])
def arms(request: pytest.FixtureRequest) -> Iterator[tuple[Sandbox, BwrapSandbox]]:
    warm = request.param == "warm"
    plain = BwrapSandbox(fit_log=False, warm=warm)
    try:
        yield get_sandbox(warm=warm), plain
    finally:
        plain.close()


def _both(
    arms: tuple[Sandbox, BwrapSandbox], code: str, language: Language, files: dict[str, Any]
) -> None:
    hooked, plain = arms
    on = hooked.run(code, language, files, LIMITS)
    off = plain.run(code, language, files, LIMITS)
    assert (on.status, on.exit_code) == (off.status, off.exit_code), on.stderr[-2000:]
    assert comparable(on.stdout) == comparable(off.stdout)
    assert comparable(on.stderr) == comparable(off.stderr)
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

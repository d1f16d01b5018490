"""Output provenance changes nothing a script prints: the edge-case corpus run with the hooks and
without them, side by side, prints the same stdout and stderr, and the hooked run knows where its
output came from.

The edge cases (``tests/fixtures/outputs``) exercise sinks, files, separators, invisibility, errors
in print methods, redirected and raw Python streams, and scripts that fail or exit with output
pending. The golden corpus is checked the same way in ``test_fitlog_golden.py``, against the output
its fixtures stored from runs without the hooks, so it is not run twice more here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from causalverify.families import Language
from causalverify.sandbox import Limits, Sandbox, get_sandbox, line_origins
from causalverify.sandbox.bwrap import BwrapSandbox
from golden_helpers import SANDBOX_MARKS, comparable

TESTS = Path(__file__).resolve().parent
EDGE = TESTS / "fixtures" / "outputs"
LIMITS = Limits(wall_seconds=180, cpu_seconds=180)

pytestmark = SANDBOX_MARKS


EDGE_SCRIPTS = sorted(p.name for p in EDGE.iterdir() if p.suffix in (".R", ".py"))
EDGE_CSV = "y,x\n" + "\n".join(f"{(i * 37 % 11) / 3:.4f},{(i * 13 % 7) / 2:.4f}" for i in range(60))


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


@pytest.mark.parametrize("name", EDGE_SCRIPTS)
def test_edge_case_prints_the_same_with_provenance(
    name: str, arms: tuple[Sandbox, BwrapSandbox]
) -> None:
    language: Language = "r" if name.endswith(".R") else "python"
    code = (EDGE / name).read_text()
    _both(arms, code, language, {"data/d.csv": EDGE_CSV.encode()})

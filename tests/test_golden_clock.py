"""The golden comparisons hold on any day.

Scripts run in the real sandbox with its clock moved to another day: libfaketime (Debian's
``faketime``, installed by ``scripts/install-system.sh --tests``) is preloaded through the
environment the sandbox passes to a command. Two probes print the day and time in every common R
and Python format; on two different days their raw output differs and the golden normaliser
(``tests/golden/regenerate.py``) makes it equal, with no trace of either day left. Then every
golden script whose recorded output may hold a date runs (hooks off, as the fixtures were
recorded) on a day that is not the recording day and must match its fixture.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from causalverify.families import Language
from causalverify.sandbox import Limits
from causalverify.sandbox.base import ExecResult
from causalverify.sandbox.bwrap import SCRATCH, BwrapSandbox, script_command
from causalverify.scenarios.model import Scenario
from golden_helpers import GOLDEN, SANDBOX_MARKS, comparable, golden_regenerate, golden_scenarios

LIBFAKETIME = next(iter(sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))), None)
#: a Tuesday afternoon in July and a Saturday morning in February (a one-digit day), in other years
DAYS = {
    "2031-07-15": ("@2031-07-15 14:03:27", ("2031", "Jul", "Tue", "15", "14:0", "02:0", "PM")),
    "2029-02-03": ("@2029-02-03 03:04:05", ("2029", "Feb", "Sat", "03:0", "AM")),
}


REGEN = golden_regenerate()


def _fake_clock_missing() -> bool:
    if LIBFAKETIME is not None:
        return False
    if os.environ.get("CI"):  # make test installs it: its absence there is a setup failure
        pytest.fail("libfaketime missing: scripts/install-system.sh --tests installs faketime")
    return True


# -- the normaliser leaves everything else alone -------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "No. Observations:                2000   AIC:                  -9331.8219",
        "treated      0.20262990 0.3251785  1.23e-05  [0.155, 0.312]",
        "The effect may be 0.53 (se 0.12); n = 2026 units over 12 periods",
        "Dep. Variable:          y   R-squared:      0.873\nMethod:   Least Squares",
        "event_time::-3:treated   -0.0123   0.0456",
    ],
)
def test_the_normaliser_keeps_what_is_not_a_date(text: str) -> None:
    assert REGEN._untimed(text) == text


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Date:   Wed, 02 Dec 2026   Prob (F)", "Date:   Sat, 03 Feb 2029   Prob (F)"),
        ("Date:   Wed, Dec 02 2026   R-sq", "Date:   Tue, Jul 15 2031   R-sq"),
        ("Time:   02:14:33   Log-Lik", "Time:   14:03:27   Log-Lik"),
        ("Date:  2026-12-02 02:11 BIC:", "Date:  2029-02-03 03:04 BIC:"),
        ('[1] "Wed Dec  2 02:11:05 2026"', '[1] "Tue Jul 15 14:03:27 2031"'),
    ],
)
def test_the_recorded_summaries_are_equal_on_two_days(a: str, b: str) -> None:
    assert a != b and REGEN._untimed(a) == REGEN._untimed(b)


# -- scripts under a shifted clock ---------------------------------------------------------------


def run_on_day(
    box: BwrapSandbox,
    code: str,
    language: Language,
    day: str,
    workspace: Path,
    files: dict[str, Path] | None = None,
) -> ExecResult:
    """Run ``code`` as a plain cell (no fit log) with the sandbox's clock set to ``day``."""
    assert LIBFAKETIME is not None
    workspace.mkdir(parents=True)
    for rel, source in (files or {}).items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, workspace / rel)
    name = "main.R" if language == "r" else "main.py"
    (workspace / name).write_text(code)
    argv = script_command(box.toolchain, language, f"{SCRATCH}/{name}", fit_log=False)
    # the monotonic clock stays real: only the calendar moves
    env = {"LD_PRELOAD": LIBFAKETIME, "FAKETIME": day, "DONT_FAKE_MONOTONIC": "1"}
    return box.run_command(
        argv, workspace=workspace, env=env, limits=Limits(wall_seconds=120, cpu_seconds=120)
    )


def _sandboxed(test: Any) -> Any:
    """The marks of a test that runs scripts in the real sandbox under a shifted clock."""
    for mark in (
        *SANDBOX_MARKS,
        pytest.mark.skipif(_fake_clock_missing(), reason="libfaketime (faketime) not installed"),
    ):
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def box() -> BwrapSandbox:
    return BwrapSandbox(fit_log=False, warm=False)


@_sandboxed
@pytest.mark.parametrize("language", ["r", "python"])
def test_no_trace_of_the_day_survives(
    language: Language, box: BwrapSandbox, tmp_path: Path
) -> None:
    code = (GOLDEN / "clock" / ("probe.R" if language == "r" else "probe.py")).read_text()
    outputs = {}
    for key, (day, _) in DAYS.items():
        result = run_on_day(box, code, language, day, tmp_path / key)
        assert result.ok and result.stdout.endswith("done\n"), result.stderr[-2000:]
        outputs[key] = result.stdout
    first, second = outputs.values()
    assert REGEN._untimed(first) == REGEN._untimed(second)
    for key, (_, traces) in DAYS.items():
        # each day printed itself (the clock did move) and the normaliser hid all of it
        assert [t for t in traces if t in outputs[key]] == list(traces), outputs[key]
        masked = REGEN._untimed(outputs[key])
        assert [t for t in traces if t in masked] == [], masked


#: anything in a fixture that might be part of a date: a year, a clock time, a name
_MAY_BE_A_DATE = re.compile(
    r"(?<![\d.])(?:19|20)\d\d(?![\d.])|\d:\d\d|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr"
    r"|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
)


def _dated_cases() -> list[dict[str, Any]]:
    """One case per golden script whose recorded output may hold a date (its first such case)."""
    cases = json.loads((GOLDEN / "manifest.json").read_text())["cases"]
    seen: set[str] = set()
    picked = []
    for case in cases:
        stdout = (GOLDEN / "fixtures" / f"{case['case']}.stdout").read_text()
        if case["script"] not in seen and _MAY_BE_A_DATE.search(stdout):
            seen.add(case["script"])
            picked.append(case)
    return picked


DATED = _dated_cases()


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Scenario]]:
    return golden_scenarios(tmp_path_factory, "golden-clock")


@_sandboxed
@pytest.mark.parametrize("case", DATED, ids=[c["case"] for c in DATED])
def test_golden_output_matches_on_another_day(
    case: dict[str, Any],
    box: BwrapSandbox,
    scenarios: tuple[Path, dict[str, Scenario]],
    tmp_path: Path,
) -> None:
    root, by_id = scenarios
    sc = by_id[case["scenario"]]
    code = (GOLDEN / "scripts" / case["script"]).read_text()
    day, traces = DAYS["2029-02-03"]
    files = {"data/scenario.csv": root / sc.data_file}
    result = run_on_day(box, code, case["language"], day, tmp_path / "ws", files)
    assert result.ok, result.stderr[-2000:]
    expected = (GOLDEN / "fixtures" / f"{case['case']}.stdout").read_text()
    if REGEN._untimed(expected) != expected:  # the fixture holds a date: this run printed its own
        assert any(t in result.stdout for t in traces), result.stdout
    assert comparable(result.stdout) == comparable(expected)

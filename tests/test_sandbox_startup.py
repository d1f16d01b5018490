"""What a command pays before its first script runs: the warm Python interpreter starts (and its
path is self-tested) only when a Python cell needs it, and a passing self-test is kept between
processes under a key of everything the protections rest on. Speed itself is measured by
``benchmarks/sandbox_startup.py``; these tests check the behaviour that makes it fast."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.sandbox import _factory, _selftest_cache
from causalverify.sandbox.selftest import Check
from causalverify.sandbox.warm import WarmInterpreter

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


@pytest.fixture
def fresh_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, list[Any]]]:
    """A process that has verified no sandbox yet, with its own self-test cache, and spies on
    the warm interpreter's starts and on the self-tests run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(_selftest_cache.SELFTEST_ENV, raising=False)
    monkeypatch.setattr(_factory, "_verified", {})
    seen: dict[str, list[Any]] = {"starts": [], "selftests": []}
    real_start = WarmInterpreter.start

    def start(self: WarmInterpreter) -> Any:
        seen["starts"].append(self)
        return real_start(self)

    def spy(name: str, real: Callable[[Any], list[Check]]) -> Callable[[Any], list[Check]]:
        def run(box: Any) -> list[Check]:
            seen["selftests"].append(name)
            return real(box)

        return run

    monkeypatch.setattr(WarmInterpreter, "start", start)
    monkeypatch.setattr(_factory, "run_cold_selftest", spy("cold", _factory.run_cold_selftest))
    monkeypatch.setattr(_factory, "run_warm_selftest", spy("warm", _factory.run_warm_selftest))
    try:
        yield seen
    finally:
        for box in _factory._verified.values():
            getattr(box, "close", lambda: None)()


def _exec(tmp_path: Path, name: str, code: str) -> dict[str, Any]:
    script, data = tmp_path / name, tmp_path / "d.csv"
    script.write_text(code)
    data.write_text("y\n1\n")
    result = CliRunner().invoke(main, ["exec", str(script), "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.output)
    return out


@pytest.mark.r
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript is not installed")
def test_an_r_script_starts_no_warm_interpreter_and_a_passing_self_test_is_kept(
    tmp_path: Path, fresh_process: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _exec(tmp_path, "a.R", 'cat("ESTIMATE: 1.5\\n")\n')
    assert "ESTIMATE: 1.5" in json.dumps(first)
    assert fresh_process["starts"] == []  # warm is on by default, and never needed here
    assert fresh_process["selftests"] == ["cold"]

    monkeypatch.setattr(_factory, "_verified", {})  # the next command, a new process
    _exec(tmp_path, "a.R", 'cat("ESTIMATE: 1.5\\n")\n')
    assert fresh_process["selftests"] == ["cold"]  # kept from the first

    monkeypatch.setattr(_factory, "_verified", {})
    monkeypatch.setattr(_selftest_cache, "_SYSCTLS", (*_selftest_cache._SYSCTLS, "/x/changed"))
    _exec(tmp_path, "a.R", 'cat("ESTIMATE: 1.5\\n")\n')
    assert fresh_process["selftests"] == ["cold", "cold"]  # what it rests on changed: again


def test_a_python_cell_starts_the_warm_path_after_its_own_self_test(
    tmp_path: Path, fresh_process: dict[str, list[Any]]
) -> None:
    out = _exec(tmp_path, "a.py", 'print("ESTIMATE: 2.5")\n')
    assert "ESTIMATE: 2.5" in json.dumps(out)
    assert fresh_process["selftests"] == ["cold", "warm"]
    assert fresh_process["starts"]  # the cell ran warm, after the warm path passed
    (box,) = _factory._verified.values()
    assert box.warm is not None and box.warm.status().running  # type: ignore[attr-defined]


def test_a_failing_self_test_is_never_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Toolchain:
        bwrap = python = rscript = None

    class Box:
        toolchain = Toolchain()
        seccomp_program = b"\x01"

        def policy(self) -> dict[str, str]:
            return {"kind": "test"}

    verdicts = iter([False, True, True])
    runs: list[bool] = []

    def run(_: Any) -> list[Check]:
        ok = next(verdicts)
        runs.append(ok)
        return [Check(name="network cut", ok=ok, detail="probe")]

    assert not _selftest_cache.cached_selftest(Box(), "cold", run)[0].ok
    assert _selftest_cache.cached_selftest(Box(), "cold", run)[0].ok  # the failure was not kept
    kept = _selftest_cache.cached_selftest(Box(), "cold", run)[0]
    assert runs == [False, True] and kept.ok and "kept from a self-test" in kept.detail
    monkeypatch.setenv(_selftest_cache.SELFTEST_ENV, "always")
    _selftest_cache.cached_selftest(Box(), "cold", run)
    assert runs == [False, True, True]

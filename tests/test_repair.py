"""Repair mode against a real HTTP server on loopback speaking the OpenAI API.

The server's model writes a script that imports a package that is not installed; it fixes the
script only when the last message shows it that error. The run must reach the right number at
turn 2, keep both turns with the cell, never show the model the canonical estimate, report the
curve in summary.json, equal single mode at ``--max-turns 1``, and survive kill -9 in the middle
of a conversation without asking any turn twice.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from causalverify.analysis import pass_at_k
from causalverify.models import ModelAccess, ResponseCache, RetryPolicy, get_provider
from causalverify.models.base import Provider
from causalverify.records import CellRecord, ExecResult
from causalverify.reference import write_response
from causalverify.release import ReportSettings, freeze_run, read_records, verify_release
from causalverify.release._layout import TURNS_FILE
from causalverify.report import write_report
from causalverify.runner import (
    REFERENCE_PANEL,
    RunConfig,
    RunSummary,
    default_stages,
    run_benchmark,
)
from causalverify.runner.repair import ends_conversation, feedback
from causalverify.scenarios import Scenario, build_suite, load_suite
from causalverify.store import RunStore, stable_view
from fake_openai import Behaviour, FakeOpenAIServer, Reply

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]

MISSING = "notapackage_xyz"
RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05, max_retry_after=1.0)
_CLI = "from causalverify.cli import main; main()"


class Fixer:
    """Writes a broken script; writes the textbook one once the feedback shows the error."""

    def __init__(self, scenarios: list[Scenario], hold: threading.Event | None = None) -> None:
        self.scenarios = scenarios
        #: with ``hold``, every fixing answer after the first waits until it is set; ``holding``
        #: is set once one waits (a conversation is then half done: its turn 1 answered)
        self.hold = hold
        self.holding = threading.Event()
        self.fixes = 0
        self._lock = threading.Lock()

    def scenario_of(self, request: dict[str, Any]) -> Scenario:
        text = " ".join(m["content"] for m in request["messages"] if m["role"] != "assistant")
        return next(s for s in self.scenarios if s.title in text)

    def __call__(self, request: dict[str, Any]) -> Behaviour:
        s = self.scenario_of(request)
        textbook = write_response("textbook", s, language="python", protocol="default")
        last = request["messages"][-1]
        if last["role"] == "user" and f"No module named '{MISSING}'" in last["content"]:
            with self._lock:
                self.fixes += 1
                held = self.hold is not None and self.fixes > 1 and not self.hold.is_set()
            if held and self.hold is not None:
                self.holding.set()
                self.hold.wait(timeout=120)
            return Reply(content=textbook, prompt_tokens=300, completion_tokens=80)
        broken = textbook.replace("```python\n", f"```python\nimport {MISSING}\n", 1)
        return Reply(content=broken, prompt_tokens=100, completion_tokens=80)


def run(config: RunConfig, server: FakeOpenAIServer) -> RunSummary:
    cache = ResponseCache(config.access.cache_path)

    def make_provider(spec: str) -> Provider:
        return get_provider(spec, base_url=server.url, cache=cache, retry_policy=RETRY)

    stages = dataclasses.replace(default_stages(config), make_provider=make_provider)
    return run_benchmark(config, stages=stages)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("repair") / "suite"
    build_suite(folder, suite="smoke")
    return folder


def _config(suite: Path, out: Path, **changes: Any) -> RunConfig:
    base = RunConfig(
        suite_dir=suite,
        out_dir=out,
        models=("openai/fixer",),
        languages=("python",),
        workers=2,
        access=ModelAccess(concurrency=2, cache_path=out.parent / f"{out.name}-cache.sqlite"),
        mode="repair",
        max_turns=3,
    )
    return dataclasses.replace(base, **changes)


def _canonical_texts(scenarios: list[Scenario]) -> set[str]:
    out = set()
    for s in scenarios:
        c = s.canonical.estimate
        out |= {repr(c), f"{c:.6f}", f"{c:.5f}", f"{c:.4f}"}
    return out


def test_a_model_that_fixes_what_it_is_shown_is_right_at_turn_two(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    scenarios = load_suite(suite).scenarios
    config = _config(suite, tmp_path / "run")
    with FakeOpenAIServer(responder=Fixer(scenarios)) as server:
        summary = run(config, server)
        requests = [r.body for r in server.requests if r.body is not None]
    assert summary.counts == {"correct": 4}
    assert len(requests) == 8  # two turns per cell, each asked once
    assert summary.requests == 8 and summary.input_tokens == 4 * (100 + 300)
    with RunStore.open(config.out_dir) as store:
        cells = list(store.iter_cells())
    for cell in cells:
        assert [t.status for t in cell.turns] == ["missing_package", "correct"], cell.key
        first, second = cell.turns
        assert first.feedback is None and second.feedback is not None
        shown = second.feedback.content
        assert "ModuleNotFoundError" in shown and MISSING in shown
        # the cell's own fields are its last turn's
        assert cell.code == second.code and cell.scores == second.scores
        assert cell.status == "correct" and cell.prompt_sha256 == first.request_sha256
    # the model never sees the answer, nor whether its number is right
    secrets = _canonical_texts(scenarios)
    for body in requests:
        text = json.dumps(body["messages"])
        assert not [secret for secret in secrets if secret in text], text[:300]
        roles = [m["role"] for m in body["messages"]]
        after = roles.index("assistant") if "assistant" in roles else len(roles)
        for message in body["messages"][after:]:
            if message["role"] == "user":  # execution feedback
                verdict = re.search(
                    r"\b(correct|right|wrong|tolerance|canonical|relative error)\b",
                    message["content"],
                    re.IGNORECASE,
                )
                assert verdict is None, message["content"]
    report = write_report(config.out_dir, config.out_dir / "report", n_resamples=50)
    data = json.loads((report.parent / "summary.json").read_text())
    entry = data["repair"]["openai/fixer"]
    assert entry["L2b_plus_by_turn"] == [0.0, 1.0, 1.0]
    assert entry["L2b_by_turn"] == [0.0, 1.0, 1.0]
    assert entry["turns"] == 3 and entry["turns_used"] == {"2": 4}
    assert entry["repair_gain"]["L2b_plus"] == 1.0
    assert entry["tokens_per_success"] == (4 * (100 + 80 + 300 + 80)) / 4
    assert "Repair mode: turn by turn" in (report.parent / "leaderboard.md").read_text()
    assert (report.parent / "figures" / "repair_by_turn.png").is_file()


def test_one_turn_of_repair_mode_is_single_mode_cell_for_cell(suite: Path, tmp_path: Path) -> None:
    cells = {}
    for name, changes in (
        ("single", {"mode": "single"}),
        ("repair-1", {"mode": "repair", "max_turns": 1}),
    ):
        config = _config(suite, tmp_path / name, models=REFERENCE_PANEL, **changes)
        run_benchmark(config)
        with RunStore.open(config.out_dir) as store:
            cells[name] = [stable_view(r) for r in store.iter_cells()]
    assert len(cells["single"]) == 4 * len(REFERENCE_PANEL)
    assert cells["single"] == cells["repair-1"]


def test_the_offline_panel_repairs_what_feedback_can_fix(suite: Path, tmp_path: Path) -> None:
    config = _config(suite, tmp_path / "panel", models=REFERENCE_PANEL)
    run_benchmark(config)
    with RunStore.open(config.out_dir) as store:
        by_model: dict[str, list[CellRecord]] = {}
        stored = list(store.iter_cells())
        for cell in stored:
            by_model.setdefault(cell.key.model, []).append(cell)
    # mute prints nothing readable, is told so, and prints its estimate at turn 2
    assert all(
        [t.status for t in c.turns] == ["no_estimate", "correct"]
        for c in by_model["reference/mute"]
    )
    # an executed wrong number gets no feedback at all: the analyst cannot see it is wrong
    assert all(not c.turns and c.status == "wrong" for c in by_model["reference/naive"])
    # prose writes no code twice: the repeat ends the conversation before the last turn
    assert all(
        [t.status for t in c.turns] == ["no_code", "no_code"] for c in by_model["reference/prose"]
    )
    # a release carries every turn: rescoring and the recomputed report agree with the frozen
    release = tmp_path / "release"
    freeze_run(
        config.out_dir,
        release,
        report=ReportSettings(seed=7, unit="model", n_resamples=50, title="repair"),
    )
    assert (release / TURNS_FILE).is_file()
    assert [r.turns for r in read_records(release)] == [r.turns for r in stored]
    report = verify_release(release, reexecute=True, limit=6)
    assert not report.hash_problems and not report.rescore_problems, report
    assert report.reexecution is not None and report.reexecution.n_cells == 6
    summary = json.loads((release / "report" / "summary.json").read_text())
    assert summary["repair"]["reference/mute"]["L2b_plus_by_turn"] == [0.0, 1.0, 1.0]


def _count(run_dir: Path) -> int:
    if not (run_dir / "run.sqlite").exists():
        return 0
    with RunStore.open(run_dir) as store:
        return store.count_cells()


@pytest.mark.slow
def test_kill_9_mid_conversation_resumes_without_asking_a_turn_twice(
    suite: Path, tmp_path: Path
) -> None:
    """A run killed with SIGKILL while a conversation is half done (one cell stored, the next
    one's turn 1 answered and executed, its turn 2 asked and unanswered) resumes it from the
    cache: the rerun asks no answered turn again and stores both cells, each right at turn 2.
    Two scenarios suffice; the unanswered turn is held by the server, so no sleep times it."""
    scenarios = load_suite(suite).scenarios
    run_dir = tmp_path / "run"
    command = [
        sys.executable, "-c", _CLI, "run",
        "--suite", str(suite), "--out", str(run_dir),
        "--models", "openai/fixer", "--languages", "python",
        "--mode", "repair", "--max-turns", "3", "--limit", "2",
        "--model-concurrency", "1", "--workers", "1",
        "--cache", str(tmp_path / "cache.sqlite"), "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    # the second cell's turn 2 is held unanswered, so the kill lands while that conversation is
    # half done (turn 1 answered and executed, turn 2 asked); the resumed run is not held
    release = threading.Event()
    fixer = Fixer(scenarios, hold=release)
    with FakeOpenAIServer(responder=fixer) as server:
        command += ["--base-url", server.url]
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        try:
            # killed once the first cell is stored and another's turn 2 is waiting for its answer
            while not (_count(run_dir) >= 1 and fixer.holding.is_set()):
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()
        assert _count(run_dir) == 1, "a held conversation was stored"
        before = server.request_count
        finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert finished.returncode == 0, finished.stderr
        bodies = [json.dumps(r.body["messages"]) for r in server.requests if r.body is not None]
    with RunStore.open(run_dir) as store:
        cells = list(store.iter_cells())
    assert len(cells) == 2 and all(c.status == "correct" and len(c.turns) == 2 for c in cells)
    # every turn-1 request reached the server once: the conversation resumed from the cache, and
    # the stored cell was not asked again; only the turn in flight at the kill (asked, never
    # answered) was asked again
    first_turns = [b for b in bodies if b.count('"role": "user"') == 1]
    assert len(first_turns) == len(set(first_turns)) == 2
    assert len(set(bodies)) == 4  # two cells, two turns each
    assert len(bodies) - len(set(bodies)) <= 1
    assert before < len(bodies)


def _record(status: str, execution: ExecResult | None, canonical: float) -> CellRecord:
    return CellRecord.model_validate(
        {
            "key": {"scenario_id": "s001", "model": "m", "language": "python"},
            "family": "did",
            "difficulty": "easy",
            "beta": 1.0,
            "canonical": canonical,
            "protocol": "default",
            "prompt": [{"role": "user", "content": "analyse"}],
            "prompt_sha256": "x",
            "code": {"language": "python", "code": "print(1)"},
            "execution": execution.model_dump() if execution is not None else None,
            "status": status,
        }
    )


def test_feedback_does_not_depend_on_the_canonical() -> None:
    failed = ExecResult(
        status="error", exit_code=1, stdout="partial\n", stderr="Traceback ...\nKeyError: 'treat'\n",
        wall_seconds=0.1, cpu_seconds=0.1, sandboxed=True,
    )  # fmt: skip
    ran = failed.model_copy(update={"status": "ok", "exit_code": 0, "stderr": ""})
    for status, execution in (("exec_error", failed), ("no_estimate", ran), ("no_code", None)):
        messages = {
            feedback(_record(status, execution, c), "python").content for c in (0.1, -7.5, 1e6)
        }
        assert len(messages) == 1, messages
    text = feedback(_record("exec_error", failed, 0.1), "python").content
    assert "KeyError: 'treat'" in text and "exit" in text and "partial" in text
    huge = failed.model_copy(update={"stderr": "x" * 50_000 + "\nTHE END\n"})
    bounded = feedback(_record("exec_error", huge, 0.1), "python").content
    assert len(bounded) < 4000 and "THE END" in bounded


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_ends_conversation_on_an_estimate_a_repeat_or_the_last_turn() -> None:
    failed = ExecResult(
        status="error", exit_code=1, stdout="", stderr="boom", wall_seconds=0.1,
        cpu_seconds=0.1, sandboxed=True,
    )  # fmt: skip
    turn = _record("exec_error", failed, 1.0).turn_states()[0]
    assert not ends_conversation([turn], 3)
    assert ends_conversation([turn], 1)
    assert ends_conversation([turn, turn.model_copy(update={"turn": 2})], 3)  # same code again
    fixed = turn.model_copy(update={"turn": 2, "status": "wrong", "code": None})
    assert ends_conversation([turn, fixed], 3)

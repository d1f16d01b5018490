"""The Inspect path as a user runs it: ``inspect eval causalverify/causalverify`` as a subprocess
(offline with the reference agents ``causalverify/<agent>``, or against a loopback
OpenAI-compatible server), then ``causalverify import-inspect``, ``freeze`` and ``verify``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.reference import write_response
from causalverify.scenarios import build_suite, load_suite
from causalverify.store import RunStore

pytest.importorskip("inspect_ai")

from inspect_ai.log import read_eval_log, write_eval_log

from fake_openai import FakeOpenAIServer, Reply

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,  # each Inspect subprocess starts Inspect and runs R scripts in the sandbox
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
]

INSPECT = str(Path(sys.executable).parent / "inspect")
DOCS = Path(__file__).resolve().parents[1] / "docs" / "RUNNING.md"
#: no network but loopback: the command runs in a network namespace of its own
OFFLINE = ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--"]
N = 2  # scenarios per run (-T limit=2)


def _inspect(
    args: list[str], log_dir: Path, *, offline: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    log_dir.parent.mkdir(parents=True, exist_ok=True)
    command = [INSPECT, "eval", "causalverify/causalverify", *args]
    command += ["--log-dir", str(log_dir), "--display", "plain", "--max-samples", "1"]
    return subprocess.run(
        [*OFFLINE, *command] if offline else command,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=log_dir.parent,
        env={**os.environ, **(env or {})},
    )


def _log(log_dir: Path) -> Path:
    (log,) = sorted(log_dir.glob("*.eval"))
    return log


def _ok(done: subprocess.CompletedProcess[str], log_dir: Path) -> Any:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = read_eval_log(str(_log(log_dir)))
    assert log.status == "success", (log.error, done.stdout[-2000:])
    return log


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect-cli") / "suite"
    build_suite(folder, suite="smoke")
    return folder


@pytest.fixture(scope="module")
def offline_ok() -> None:
    probe = subprocess.run(
        [
            *OFFLINE,
            sys.executable,
            "-c",
            "import socket; socket.create_connection(('1.1.1.1', 443), 3)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "bwrap:" in probe.stderr:
        pytest.skip(f"no network namespace here: {probe.stderr.strip()}")
    assert probe.returncode != 0, "the offline wrapper reached the network"


@pytest.fixture(scope="module")
def logs(
    suite_dir: Path, offline_ok: None, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """One log per (model, mode), each written by the Inspect CLI with no network: the two
    default-mode models in one invocation (``--model a,b``, a log each, one after the other),
    so Inspect starts once for both, and repair mode in another."""
    out = {}
    for names, extra in (
        ({"causalverify/textbook": "textbook", "causalverify/naive": "naive"}, []),
        ({"causalverify/mute": "repair"}, ["-T", "mode=repair", "-T", "max_turns=3"]),
    ):
        log_dir = tmp_path_factory.mktemp("logs") / "logs"
        args = ["-T", f"suite={suite_dir}", "-T", f"limit={N}", "--model", ",".join(names)]
        done = _inspect([*args, *extra, "--max-tasks", "1"], log_dir, offline=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        written = sorted(log_dir.glob("*.eval"))
        assert len(written) == len(names), written
        for path in written:
            log = read_eval_log(str(path), header_only=True)
            assert log.status == "success", (log.error, done.stdout[-2000:])
            out[names[log.eval.model]] = path
    assert set(out) == {"textbook", "naive", "repair"}, out
    return out


# -- (a) offline -------------------------------------------------------------------------------


def test_the_documented_offline_command_runs_without_network(
    logs: dict[str, Path], suite_dir: Path
) -> None:
    log = read_eval_log(str(logs["textbook"]))
    means = {r.name: r.metrics["mean"].value for r in log.results.scores}
    assert means == {"L1": 1.0, "L2b": 1.0, "L2a": 1.0, "L2b_plus": 1.0}
    assert len(log.samples) == N
    # each agent answers as reference/<agent> does in causalverify run
    scenarios = {s.id: s for s in load_suite(suite_dir).scenarios}
    for agent in ("textbook", "naive"):
        for sample in read_eval_log(str(logs[agent])).samples:
            expected = write_response(
                agent, scenarios[str(sample.id)], language="r", protocol="default"
            )
            assert sample.output.completion == expected
    assert "--model causalverify/textbook" in DOCS.read_text()


def test_a_reference_agent_refuses_prompts_of_other_tasks(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample

    task = Task(dataset=[Sample(input="What is 2 + 2?")])
    (log,) = inspect_eval(
        task, model="causalverify/textbook", log_dir=str(tmp_path), display="none"
    )
    assert log.status == "error"
    assert "answers the prompts of the causalverify task only" in str(log.error)


# -- (b) a local OpenAI-compatible server ------------------------------------------------------


def test_a_local_chat_completions_server_with_responses_api_false(
    suite_dir: Path, tmp_path: Path
) -> None:
    scenarios = load_suite(suite_dir).scenarios
    answers = {
        s.id: write_response("textbook", s, language="r", protocol="default") for s in scenarios
    }

    def respond(request: dict[str, Any]) -> Reply:
        prompt = json.dumps(request)  # chat completions: "messages"; the Responses API: "input"
        found = [s.id for s in scenarios if s.data_file in prompt]
        return Reply(content=answers[found[0]] if len(found) == 1 else "")

    text = DOCS.read_text()
    assert "-M responses_api=false" in text
    with FakeOpenAIServer(respond) as server:
        args = ["-T", f"suite={suite_dir}", "-T", "limit=1", "--model", "openai/local-model"]
        args += ["--model-base-url", server.url]
        key = {"OPENAI_API_KEY": "local"}
        # Inspect sends openai/ models to the Responses API, which such a server does not have
        failed = _inspect(args, tmp_path / "plain" / "logs", env=key)
        assert "/v1/responses" in {r.path for r in server.requests}
        assert "no route /v1/responses" in failed.stdout + failed.stderr
        before = server.request_count
        log = _ok(
            _inspect([*args, "-M", "responses_api=false"], tmp_path / "flag" / "logs", env=key),
            tmp_path / "flag" / "logs",
        )
        assert {r.path for r in server.requests[before:]} == {"/v1/chat/completions"}
    assert {r.name: r.metrics["mean"].value for r in log.results.scores}["L2b_plus"] == 1.0


# -- (c) freeze finds the suite of an imported run ---------------------------------------------


def test_an_imported_run_freezes_without_suite(logs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _cli("import-inspect", logs["textbook"], "--out", run)
    assert done.exit_code == 0, done.output
    frozen = _cli("freeze", run, "--out", tmp_path / "release", "--quiet", "--resamples", "50")
    assert frozen.exit_code == 0, frozen.output
    checked = _cli("verify", tmp_path / "release", "--quiet")
    assert checked.exit_code == 0, checked.output


def test_a_moved_suite_is_named_and_given(
    logs: dict[str, Path], suite_dir: Path, tmp_path: Path
) -> None:
    log_dir = tmp_path / "logs"
    moving = tmp_path / "suite"
    shutil.copytree(suite_dir, moving)
    args = ["-T", f"suite={moving}", "-T", "limit=1", "--model", "causalverify/textbook"]
    _ok(_inspect(args, log_dir, offline=True), log_dir)
    log = _log(log_dir)
    moved = moving.rename(tmp_path / "moved")

    run = tmp_path / "run"
    done = _cli("import-inspect", log, "--out", run)
    assert done.exit_code == 0, done.output
    assert "note: the log's suite folder" in done.output and "--suite DIR" in done.output
    refused = _cli("freeze", run, "--out", tmp_path / "release", "--quiet")
    assert refused.exit_code != 0
    assert "imported from an Inspect log" in refused.output and "--suite DIR" in refused.output
    assert "None" not in refused.output
    given = _cli("freeze", run, "--out", tmp_path / "release", "--suite", moved, "--quiet")
    assert given.exit_code == 0, given.output

    # or given at import: recorded, so freeze needs nothing more
    again = _cli("import-inspect", log, "--out", tmp_path / "run2", "--suite", moved, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["suite_path"] == str(moved.resolve())
    frozen = _cli("freeze", tmp_path / "run2", "--out", tmp_path / "release2", "--quiet")
    assert frozen.exit_code == 0, frozen.output

    # a suite that is not the log's is refused by fingerprint
    other = tmp_path / "other"
    build_suite(other, suite="smoke", seed=7)
    wrong = _cli("import-inspect", log, "--out", tmp_path / "run3", "--suite", other)
    assert wrong.exit_code != 0 and "fingerprint" in wrong.output
    assert not (tmp_path / "run3").exists()


def test_a_named_suite_is_built_again_when_its_folder_is_gone(
    offline_ok: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from causalverify.inspect_eval import task as inspect_task

    home = tmp_path / "home"
    home.mkdir()
    log_dir = tmp_path / "logs"
    args = ["-T", "suite=smoke", "-T", "limit=1", "--model", "causalverify/textbook"]
    # a fresh home for the suite cache; the sandbox's self-test and package caches and the
    # managed R library stay where the other runs keep them (else the self-test runs again)
    env = {
        "HOME": str(home),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"),
        "XDG_DATA_HOME": os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share"),
    }
    _ok(_inspect(args, log_dir, offline=True, env=env), log_dir)
    cache = home / ".cache" / "causalverify" / "inspect"
    assert (cache / "suite-smoke" / "suite.json").is_file()
    shutil.rmtree(cache)
    monkeypatch.setattr(inspect_task, "SUITE_CACHE", cache)

    run = tmp_path / "run"
    done = _cli("import-inspect", _log(log_dir), "--out", run, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["suite_path"] == str((cache / "suite-smoke").resolve())
    frozen = _cli("freeze", run, "--out", tmp_path / "release", "--quiet", "--resamples", "50")
    assert frozen.exit_code == 0, frozen.output


# -- (d) several models' logs in one folder ----------------------------------------------------


def test_logs_of_two_models_share_a_run_folder(logs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = _cli("import-inspect", logs["textbook"], "--out", run, "--json")
    assert first.exit_code == 0, first.output
    second = _cli("import-inspect", logs["naive"], "--out", run, "--json")
    assert second.exit_code == 0, second.output
    assert json.loads(second.output) | {"suite_path": None} == {
        "run_dir": str(run),
        "cells": 2 * N,
        "added": N,
        "unchanged": 0,
        "suite_path": None,
    }
    with RunStore.open(run) as store:
        meta = store.meta()
        models = {c.key.model for c in store.iter_cells()}
    assert models == {"causalverify/textbook", "causalverify/naive"}
    assert meta["models"] == ["causalverify/textbook", "causalverify/naive"]
    assert len(meta["source"]["inspect_logs"]) == 2

    # the same log again: nothing changes
    again = _cli("import-inspect", logs["naive"], "--out", run, "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["added"] == 0 and json.loads(again.output)["unchanged"] == N

    # another log of a model already there, with other answers: refused, the store untouched
    log = read_eval_log(str(logs["naive"]))
    cell = log.samples[0].scores["causalverify_scorer"].metadata["causalverify_cell"]
    cell["timings"] = {**cell["timings"], "model": 9.5}
    other = tmp_path / "other.eval"
    write_eval_log(log, str(other))
    refused = _cli("import-inspect", other, "--out", run)
    assert refused.exit_code != 0
    assert "causalverify/naive" in refused.output and "new folder" in refused.output
    with RunStore.open(run) as store:
        assert store.count_cells() == 2 * N
        assert store.meta() == meta

    # a log of other settings (repair mode) is refused too
    repair = _cli("import-inspect", logs["repair"], "--out", run)
    assert repair.exit_code != 0 and "mode" in repair.output

    report = _cli("report", run, "--resamples", "50", "--quiet")
    assert report.exit_code == 0, report.output
    summary = json.loads((run / "report" / "summary.json").read_text())
    assert set(summary["rates"]) >= {"causalverify/textbook", "causalverify/naive"}


# -- (e) repair mode ---------------------------------------------------------------------------


def test_repair_mode_asks_again_with_feedback_only(
    logs: dict[str, Path], suite_dir: Path, tmp_path: Path
) -> None:
    log = read_eval_log(str(logs["repair"]))
    canonical = {s.id: s.canonical.estimate for s in load_suite(suite_dir).scenarios}
    assert len(log.samples) == N
    for sample in log.samples:
        cell = sample.scores["causalverify_scorer"].metadata["causalverify_cell"]
        # mute prints no estimate at turn 1; shown that, it prints it at turn 2
        assert [t["status"] for t in cell["turns"]] == ["no_estimate", "correct"]
        assert cell["status"] == "correct"
        roles = [m.role for m in sample.messages]
        assert roles[-3:] == ["assistant", "user", "assistant"]
        shown = sample.messages[-2].text
        assert "no estimate could be read" in shown
        value = canonical[str(sample.id)]
        for text in (repr(value), f"{value:.4f}", f"{value:.3f}"):
            assert text not in shown
    means = {r.name: r.metrics["mean"].value for r in log.results.scores}
    assert means["L2b"] == 1.0

    run = tmp_path / "run"
    done = _cli("import-inspect", logs["repair"], "--out", run)
    assert done.exit_code == 0, done.output
    with RunStore.open(run) as store:
        assert store.meta()["mode"] == {"name": "repair", "max_turns": 3}
        assert all(len(c.turns) == 2 for c in store.iter_cells())
    report = _cli("report", run, "--resamples", "50", "--quiet")
    assert report.exit_code == 0, report.output
    summary = json.loads((run / "report" / "summary.json").read_text())
    assert summary["run"]["mode"] == {"name": "repair", "max_turns": 3}


def test_repair_mode_settings_are_checked(suite_dir: Path, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from causalverify.inspect_eval import causalverify_task

    with pytest.raises(ValueError, match="mode must be"):
        causalverify_task(suite=str(suite_dir), mode="repiar")
    with pytest.raises(ValueError, match="max_turns"):
        causalverify_task(suite=str(suite_dir), mode="repair", max_turns=0)
    # one turn: the mute agent is never shown its missing estimate
    task = causalverify_task(suite=str(suite_dir), limit=1, mode="repair", max_turns=1)
    (log,) = inspect_eval(task, model="causalverify/mute", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples
    assert [m.role for m in sample.messages].count("assistant") == 1
    assert (
        sample.scores["causalverify_scorer"].metadata["causalverify_cell"]["status"]
        == "no_estimate"
    )

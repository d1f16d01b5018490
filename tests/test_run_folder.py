"""What a run folder keeps from one invocation to the next, seen from the command line: the
environment the prompts describe is the one recorded when the run started, a folder without a
single answer takes corrected settings, and a second writer stops before building anything."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.sandbox import environment_manifest
from causalverify.store import RunStore
from fake_openai import Behaviour, ErrorReply, FakeOpenAIServer, Reply
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks

NO_CODE = "## 1. Identification Strategy\nA difference in differences, no code today.\n"


@pytest.fixture
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return smoke_suite(shared_root(tmp_path_factory))


def _run_args(suite: Path, out: Path, url: str, cache: Path) -> list[str]:
    return [
        "run", "--suite", str(suite), "--models", "openai/m", "--languages", "r",
        "--limit", "2", "--base-url", url, "--out", str(out), "--cache", str(cache),
    ]  # fmt: skip


def _data_file(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    found = re.search(r"`(data/s\d+\.csv)`", user)
    assert found is not None
    return found.group(1)


def _package_line(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    return next(line for line in user.splitlines() if "installed add-on packages" in line)


@with_marks(needs_r_and_sandbox)
def test_a_resumed_run_keeps_describing_the_environment_it_recorded(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import causalverify.runner.stages

    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    failing: set[str] = set()

    def responder(request: dict[str, Any]) -> Behaviour:
        data = _data_file(request)
        if not failing:
            failing.add(data)  # the first scenario asked gets no answer the first time
        if data in failing:
            return ErrorReply(400, "bad request")
        return Reply(content=NO_CODE)

    with FakeOpenAIServer(responder=responder) as server:
        args = _run_args(suite, out, server.url, cache)
        first = CliRunner().invoke(main, [*args, "--quiet"], env={"OPENAI_API_KEY": ""})
        assert first.exit_code == 3, first.output  # one cell without an answer
        asked_first = [r.body for r in server.requests if r.body is not None]

        recorded = environment_manifest()
        installed = recorded.model_copy(
            update={"r_packages": {**recorded.r_packages, "zzznewpkg": "9.9"}}
        )
        # someone installs an R package into the shared library between the two invocations
        monkeypatch.setattr(causalverify.runner.stages, "environment_manifest", lambda: installed)
        failing.clear()
        failing.add("none")
        second = CliRunner().invoke(main, [*args, "--quiet"], env={"OPENAI_API_KEY": ""})
        asked = [r.body for r in server.requests if r.body is not None][len(asked_first) :]
    assert second.exit_code == 0, second.output
    assert len(asked) == 1  # only the cell without an answer is asked again
    assert _package_line(asked[0]) == _package_line(asked_first[0])
    assert "zzznewpkg" not in json.dumps(asked)
    assert "execution environment changed" in second.output
    assert "R package zzznewpkg 9.9 added" in second.output
    with RunStore.open(out) as store:
        meta = store.meta()
    assert meta["environment"] == recorded.model_dump(mode="json")
    assert meta["environment_changes"] == ["R package zzznewpkg 9.9 added"]


@with_marks(needs_r_and_sandbox)
def test_a_folder_without_an_answer_takes_a_corrected_base_url(suite: Path, tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    env = {"OPENAI_API_KEY": ""}
    with FakeOpenAIServer(responder=lambda _: ErrorReply(404, "no such route")) as wrong:
        typo = CliRunner().invoke(
            main, [*_run_args(suite, out, wrong.url, cache), "--quiet"], env=env
        )
    assert typo.exit_code == 1 and "not found (HTTP 404)" in typo.output, typo.output
    with FakeOpenAIServer(responder=lambda _: Reply(content=NO_CODE)) as right:
        fixed = CliRunner().invoke(
            main, [*_run_args(suite, out, right.url, cache), "--quiet"], env=env
        )
        with FakeOpenAIServer() as other:  # once a cell has an answer, the URL is the run's
            moved = CliRunner().invoke(main, [*_run_args(suite, out, other.url, cache)], env=env)
    assert fixed.exit_code == 0, fixed.output
    with RunStore.open(out) as store:
        assert store.meta()["base_url"] == right.url
        assert {r.status for r in store.iter_cells()} == {"no_code"}
    assert moved.exit_code == 1 and "base_url: stored" in moved.output

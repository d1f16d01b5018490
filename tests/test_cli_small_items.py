"""The smaller things a new user meets at the command line: what a run of unpriced or failing
models says, short model names, rank statistics with few models, advice that points the right
way, a missing key before any building, release metadata without the server, ``prompt`` with an
unknown id and ``calibrate``'s statuses."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from fake_openai import Behaviour, ErrorReply, FakeOpenAIServer, Reply
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks

NO_CODE = "## 1. Identification Strategy\nA difference in differences; no code today.\n"
ENV = {"OPENAI_API_KEY": "", "CAUSALVERIFY_OPENAI_BASE_URL": ""}


@pytest.fixture
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return smoke_suite(shared_root(tmp_path_factory))


def _answers(request: dict[str, Any]) -> Behaviour:
    last = request["messages"][-1]["content"]
    if "confidence" in last.lower():
        return Reply(content="I would rather not say.")  # no readable confidence
    return Reply(content=NO_CODE)


@with_marks(needs_r_and_sandbox)
def test_a_two_model_run_of_unpriced_models(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=_answers) as server:
        args = ["run", "--suite", str(suite), "--models", "openai/model-a,openai/model-b"]
        args += ["--languages", "r", "--limit", "2", "--base-url", server.url, "--out", str(out)]
        args += ["--cache", str(tmp_path / "cache.sqlite")]
        result = CliRunner().invoke(main, [*args, "--quiet"], env=ENV)
        calibrated = CliRunner().invoke(
            main, ["calibrate", str(out), "--cache", str(tmp_path / "cache.sqlite")], env=ENV
        )
    assert result.exit_code == 0, result.output
    assert "$0.0000" not in result.output
    assert "unpriced (openai/model-a, openai/model-b: no known price" in result.output
    rows = [line.split()[0] for line in result.output.splitlines() if "model-" in line[:12]]
    assert rows and set(rows) <= {"model-a", "model-b"}, result.output  # cut at "/" only

    assert calibrated.exit_code == 0, calibrated.output
    assert "unparsable 4" in calibrated.output
    assert "unparsable: the reply stated none of them in a readable form" in calibrated.output

    analyzed = CliRunner().invoke(main, ["analyze", str(out), "--resamples", "50"])
    assert analyzed.exit_code == 0, analyzed.output
    assert "Rank agreement" not in analyzed.output and "Kendall" not in analyzed.output
    report = CliRunner().invoke(main, ["report", str(out), "--resamples", "50"])
    assert report.exit_code == 0, report.output
    page = (out / "report" / "index.html").read_text()
    assert "Kendall τ-b between" not in page
    assert re.search(r'<td class="text">(<a [^>]*>)?openai/model-a', page)  # names left-aligned
    assert '<div class="grid"><table>' in page  # a wide table scrolls inside the page


@with_marks(needs_r_and_sandbox)
def test_requests_that_failed_are_counted(suite: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=lambda _: ErrorReply(400, "bad request")) as server:
        args = ["run", "--suite", str(suite), "--models", "openai/gpt-4o-mini", "--languages"]
        args += ["r", "--limit", "2", "--base-url", server.url, "--out", str(tmp_path / "r")]
        result = CliRunner().invoke(main, [*args, "--cache", str(tmp_path / "c.sqlite")], env=ENV)
    assert result.exit_code == 3, result.output
    assert "0 model requests answered, 2 failed after retries" in result.output


def test_a_missing_key_stops_run_before_anything_is_built(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--suite", "smoke", "--models", "openai/gpt-4o-mini", "--out", str(out)]
    result = CliRunner().invoke(main, args, env=ENV)
    assert result.exit_code == 1 and "OPENAI_API_KEY is not set" in result.output
    assert not out.exists()


def test_advice_points_the_right_way(tmp_path: Path) -> None:
    def error(*args: str) -> str:
        result = CliRunner().invoke(main, list(args), env=ENV)
        assert result.exit_code == 1, result.output
        return result.output

    out = str(tmp_path / "r")
    csv = error("run", "--suite", "notasuite.csv", "--out", out)
    assert "not a named suite (default, smoke, modern, modern-smoke)" in csv
    assert "build --out notasuite.csv" not in csv
    assert "did you mean --suite smoke?" in error("run", "--suite", "smokee", "--out", out)

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.json").write_text("{}\n")
    assert f"{suite} is a suite, not a run" in error("report", str(suite))

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "run.sqlite").write_bytes(b"")
    assert "is an empty file, not a run store" in error("report", str(empty))
    assert (empty / "run.sqlite").stat().st_size == 0  # and it is left as it was
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "run.sqlite").write_bytes(b"not a database at all" * 100)
    text = error("report", str(broken))
    assert "not a readable run store" in text and "another --out folder asks no model" in text


def test_prompt_with_an_unknown_id_lists_the_ids(tmp_path: Path, suite: Path) -> None:
    named = CliRunner().invoke(main, ["prompt", "smoke", "s999"])
    assert named.exit_code == 1 and "build --suite smoke --out DIR" in named.output
    result = CliRunner().invoke(main, ["prompt", str(suite), "s999", "--no-manifest"])
    assert result.exit_code == 1
    assert "no scenario 's999'; its scenarios: s001, s002, s003, s004" in result.output


def test_papers_asks_as_many_models_at_once_as_run() -> None:
    for command in (["run"], ["papers", "run"], ["calibrate"]):
        text = CliRunner().invoke(main, [*command, "--help"], terminal_width=200).output
        line = " ".join(text.split())
        assert re.search(r"--model-concurrency .{0,160}?default: 8[;\]]", line), (command, line)


@with_marks(needs_r_and_sandbox)
def test_a_release_keeps_no_server_address_and_score_out_says_what_next(
    suite: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    server = "http://gpu-box.corp.internal:8000/v1"
    args = ["run", "--suite", str(suite), "--models", "reference/textbook", "--languages", "r"]
    args += ["--limit", "1", "--base-url", server, "--out", str(run), "--quiet"]
    assert CliRunner().invoke(main, args).exit_code == 0
    release = tmp_path / "release"
    frozen = CliRunner().invoke(main, ["freeze", str(run), "--out", str(release)])
    assert frozen.exit_code == 0, frozen.output
    for path in release.rglob("*"):
        if path.is_file():
            assert b"gpu-box.corp.internal" not in path.read_bytes(), path
    assert '"base_url": "<server>"' in (release / "release.json").read_text()
    rescored = CliRunner().invoke(main, ["score", str(release), "--out", str(tmp_path / "s")])
    assert rescored.exit_code == 0, rescored.output
    assert "resumed" not in rescored.output and "causalverify report" in rescored.output

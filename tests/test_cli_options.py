"""One meaning per option across commands, and the commands a careful user reaches for:
``run --seed``, exit status 3, ``--limit`` wherever a command iterates, ``models``, ``exec``'s
verdict and the writer lock of ``papers``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.reference import AGENTS, write_response
from causalverify.scenarios import load_suite
from causalverify.store import RunStore
from causalverify.store.sqlite import writer_lock
from fake_openai import ErrorReply, FakeOpenAIServer
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks


@pytest.fixture
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return smoke_suite(shared_root(tmp_path_factory))


@with_marks(needs_r_and_sandbox)
def test_run_sends_the_seed_per_sample_and_exits_3_when_cells_lack_an_answer(
    suite: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=lambda _: ErrorReply(400, "bad request")) as server:
        args = ["run", "--suite", str(suite), "--models", "openai/m", "--languages", "r"]
        args += ["--base-url", server.url, "--out", str(tmp_path / "run"), "--limit", "1"]
        args += ["--samples", "2", "--seed", "7", "--cache", str(tmp_path / "c.sqlite")]
        args += ["--temperature", "0.25", "--max-tokens", "99", "--reasoning-effort", "low"]
        result = CliRunner().invoke(main, [*args, "--quiet"], env={"OPENAI_API_KEY": ""})
        bodies = [r.body for r in server.requests if r.body is not None]
    assert result.exit_code == 3, result.output
    assert "incomplete: 2 cells without an answer" in result.output
    assert sorted(b["seed"] for b in bodies) == [7, 8]
    # every generation option of the command line reaches the server and the run's metadata
    sent = {(b["temperature"], b["max_tokens"], b["reasoning_effort"]) for b in bodies}
    assert sent == {(0.25, 99, "low")}
    with RunStore.open(tmp_path / "run") as store:
        options = store.meta()["model_options"]
    assert options == {"temperature": 0.25, "max_tokens": 99, "reasoning_effort": "low", "seed": 7}


def test_commands_that_only_ask_models_refuse_workers(tmp_path: Path) -> None:
    for command in (
        ["calibrate", str(tmp_path)],
        ["papers", "run", str(tmp_path), "--models", "x"],
    ):
        result = CliRunner().invoke(main, [*command, "--workers", "2"])
        assert result.exit_code == 2
        assert "--model-concurrency" in result.output, result.output


def test_models_lists_providers_and_every_reference_agent() -> None:
    result = CliRunner().invoke(main, ["models", "--json"], env={"OPENAI_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    specs = [p["spec"] for p in data["providers"]]
    assert specs == ["openai/<model>", "anthropic/<model>", "replay/<dir>[:<slug>]",
                     "reference/<agent>"]  # fmt: skip
    assert data["providers"][0]["status"] == "ready"
    assert [a["spec"] for a in data["reference_agents"]] == [f"reference/{a}" for a in AGENTS]
    text = CliRunner().invoke(main, ["models"], env={"COLUMNS": "100"})
    assert text.exit_code == 0 and "reference/wrong-term" in text.output


@with_marks(needs_r_and_sandbox)
@pytest.mark.parametrize(("agent", "status"), [("textbook", "correct"), ("wrong-term", "wrong")])
def test_exec_prints_the_extraction_and_the_score(
    suite: Path, tmp_path: Path, agent: str, status: str
) -> None:
    scenario = load_suite(suite).get("s001")
    answer = write_response(agent, scenario, language="python", protocol="default")
    script = tmp_path / "a.py"
    script.write_text(answer.split("```python\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    args = ["exec", str(script), "--suite", str(suite), "--scenario", "s001", "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["score"]["status"] == status
    assert data["score"]["canonical"] == scenario.canonical.estimate
    assert data["extraction"]["rule"] and data["extraction"]["value"] is not None
    if agent == "textbook":
        assert data["score"]["rel_error"] < 1e-6
    plain = CliRunner().invoke(main, ["exec", str(script), "--suite", str(suite),
                                      "--scenario", "s001"], env={"COLUMNS": "200"})  # fmt: skip
    assert "extracted estimate" in plain.output and f"{status} against canonical" in plain.output
    bad = CliRunner().invoke(main, ["exec", str(script), "--canonical", "0.3", "--data",
                                    str(suite / "data" / "s001.csv")])  # fmt: skip
    assert bad.exit_code == 2 and "--family" in bad.output


@with_marks(needs_r_and_sandbox)
def test_calibrate_and_papers_take_a_limit_and_papers_the_writer_lock(
    suite: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    cache = ["--cache", str(tmp_path / "c.sqlite")]
    args = ["run", "--suite", str(suite), "--models", "reference/textbook", "--languages", "r"]
    done = CliRunner().invoke(main, [*args, "--out", str(run_dir), "--json", *cache])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)
    assert summary["total"] == 4 and summary["models"][0]["model"] == "reference/textbook"
    assert summary["models"][0]["L2b_plus"] == 1.0 and summary["counts"] == {"correct": 4}
    calibrated = CliRunner().invoke(main, ["calibrate", str(run_dir), "--limit", "2", "--json"])
    assert calibrated.exit_code == 0, calibrated.output
    assert json.loads(calibrated.output)["computed"] == 2
    with sqlite3.connect(run_dir / "run.sqlite") as db:
        (asked,) = db.execute("SELECT COUNT(*) FROM calibration").fetchone()
    assert asked == 2
    papers = ["papers", "run", str(run_dir), "--models", "reference/textbook", "--quiet"]
    with writer_lock(run_dir):
        held = CliRunner().invoke(main, [*papers, "--limit", "3"])
    assert held.exit_code == 1 and "is writing" in held.output
    ran = CliRunner().invoke(main, [*papers, "--limit", "3"])
    assert ran.exit_code == 0, ran.output
    assert "3 prompts" in ran.output
    judge = ["papers", "judge", str(run_dir), "--judge", "reference/textbook", "--limit", "2"]
    judged = CliRunner().invoke(main, [*judge, "--json"])
    assert judged.exit_code == 0, judged.output
    assert json.loads(judged.output)["total"] == 4  # two answers, two layers each


#: commands that print no results to read back: a rendered prompt, installs, writing a sheet
NO_RESULTS = {
    "prompt",
    "r-packages install",
    "audit sample",
    "papers validate",
    "papers audit export",
}


def _leaves(group: click.Group, ctx: click.Context, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            out += _leaves(command, ctx, f"{prefix}{name} ")
        elif command is not None:
            out.append((f"{prefix}{name}", command))
    return out


def test_every_command_that_prints_results_takes_json() -> None:
    ctx = click.Context(main)
    leaves = dict(_leaves(main, ctx))
    assert set(leaves) >= NO_RESULTS
    missing = [
        name
        for name, command in leaves.items()
        if name not in NO_RESULTS and "--json" not in {o for p in command.params for o in p.opts}
    ]
    assert missing == []


def test_build_and_report_print_json(tmp_path: Path) -> None:
    built = CliRunner().invoke(main, ["build", "--out", str(tmp_path / "s"), "--suite", "smoke",
                                      "--json"])  # fmt: skip
    assert built.exit_code == 0, built.output
    data = json.loads(built.output)
    assert data["n_scenarios"] == 4 and sum(data["counts"].values()) == 4
    assert all(key.count("/") == 1 for key in data["counts"])
    run_dir = tmp_path / "run"
    with RunStore.open(run_dir, create=True) as store:
        from test_cli_tables import _records

        for record in _records():
            store.put_cell(record)
    assert CliRunner().invoke(main, ["score", str(run_dir)]).exit_code == 0
    report = CliRunner().invoke(main, ["report", str(run_dir), "--json", "--resamples", "10"])
    assert report.exit_code == 0, (report.output, report.exception)
    assert json.loads(report.output)["n_cells"] == 12
    assert (run_dir / "report" / "index.html").is_file()
    from causalverify.report import write_report

    steps: list[str] = []
    write_report(run_dir, tmp_path / "r2", n_resamples=10, progress=lambda s, d, t: steps.append(s))
    assert steps[0] == "reading the cells" and steps[-1] == "writing leaderboard.md and index.html"
    assert any(s.startswith("analysing") for s in steps) and "drawing the figures" in steps


def test_prices_reach_every_command_that_asks_models(tmp_path: Path) -> None:
    from causalverify.calibration import CalibrationConfig
    from causalverify.calibration.elicit import run_access
    from causalverify.models import ModelAccess
    from causalverify.papers.run import default_factory
    from causalverify.records import RunMeta

    prices = {"models": {"m": {"input": 2.0, "output": 4.0}}}
    calibration = CalibrationConfig(run_dir=tmp_path, access=ModelAccess(prices=prices))
    server = "http://127.0.0.1:9/v1"
    made = [
        run_access(calibration, RunMeta.of({"base_url": server})).factory()("openai/m"),
        default_factory(ModelAccess(prices=prices, base_url=server))("openai/m"),
    ]
    for model in made:
        inner: Any = getattr(model, "inner", model)
        assert inner.prices.cost("m", 1_000_000, 1_000_000) == 6.0
        model.close()  # type: ignore[union-attr]
    for command in (
        ["calibrate", str(tmp_path)],
        ["papers", "run", str(tmp_path), "--models", "x"],
    ):
        result = CliRunner().invoke(main, [*command, "--prices", str(tmp_path / "none.toml")])
        assert result.exit_code == 2 and "--prices" in result.output  # the option exists

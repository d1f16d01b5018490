"""The Inspect AI task, scorer, sandbox and log import, offline with Inspect's mock model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.reference import write_response
from causalverify.report import write_report
from causalverify.scenarios import build_suite, load_suite
from causalverify.store import RunStore

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import Task, task  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402
from inspect_ai.util import sandbox  # noqa: E402

from causalverify.inspect_eval import causalverify_task, log_to_run  # noqa: E402

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect") / "suite"
    build_suite(folder, suite="smoke")
    return folder


def _output(content: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm/model", content=content)
    # token counts given, so Inspect never reaches for a tokenizer
    out.usage = ModelUsage(input_tokens=100, output_tokens=50, total_tokens=150)
    return out


def _textbook_model(suite_dir: Path, language: str) -> Any:
    answers = [
        _output(write_response("textbook", s, language=language, protocol="default"))  # type: ignore[arg-type]
        for s in load_suite(suite_dir).scenarios
    ]
    return get_model("mockllm/model", custom_outputs=answers)


def _eval(target: Any, model: Any, log_dir: Path, **kwargs: Any) -> Any:
    (log,) = inspect_eval(
        target, model=model, log_dir=str(log_dir), max_samples=1, display="none", **kwargs
    )
    assert log.status == "success", log.error
    return log


def _means(log: Any) -> dict[str, float]:
    """The mean of each layer (one score entry per layer of the dict score)."""
    return {r.name: r.metrics["mean"].value for r in log.results.scores}


def test_textbook_answers_score_everything_and_the_log_becomes_a_run(
    suite_dir: Path, tmp_path: Path
) -> None:
    task_ = causalverify_task(suite=str(suite_dir), language="r")
    log = _eval(task_, _textbook_model(suite_dir, "r"), tmp_path / "logs")
    means = _means(log)
    assert means == {"L1": 1.0, "L2a": 1.0, "L2b": 1.0, "L2b_plus": 1.0}, means
    assert len(log.samples) == 4
    # no sample's input holds the canonical estimate
    for sample, scenario in zip(log.samples, load_suite(suite_dir).scenarios, strict=True):
        assert repr(scenario.canonical.estimate) not in json.dumps(
            [m.model_dump() for m in sample.input]
            if not isinstance(sample.input, str)
            else sample.input
        )
    run = log_to_run(Path(log.location), tmp_path / "run")
    with RunStore.open(run) as store:
        cells = list(store.iter_cells())
    assert len(cells) == 4 and all(c.status == "correct" for c in cells)
    assert {c.key.model for c in cells} == {"mockllm/model"}
    assert all(c.response is not None and c.response.output_tokens == 50 for c in cells)
    index = write_report(run, run / "report", n_resamples=50)
    summary = json.loads((index.parent / "summary.json").read_text())
    assert summary["rates"]["mockllm/model"]["L2b_plus"] == 1.0
    assert (index.parent / "explorer" / "cells.js").is_file()


def test_the_task_is_registered_through_the_entry_point(suite_dir: Path, tmp_path: Path) -> None:
    log = _eval(
        "causalverify/causalverify",
        _textbook_model(suite_dir, "python"),
        tmp_path / "logs",
        task_args={"suite": str(suite_dir), "language": "python", "limit": 4},
    )
    assert _means(log)["L2b_plus"] == 1.0


def test_import_inspect_cli(suite_dir: Path, tmp_path: Path) -> None:
    task_ = causalverify_task(suite=str(suite_dir), language="r", limit=2)
    log = _eval(task_, _textbook_model(suite_dir, "r"), tmp_path / "logs")
    out = tmp_path / "imported"
    result = CliRunner().invoke(main, ["import-inspect", log.location, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["cells"] == 2
    assert (out / "run.sqlite").is_file()


@solver
def _probe() -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box = sandbox()
        facts: dict[str, Any] = {}
        first = await box.exec(["sh", "-c", "echo hello > out.txt; cat out.txt; id -u; pwd"])
        facts["first"] = first.stdout.split()
        again = await box.exec(["cat", "out.txt"])  # the folder lasts for the sample
        facts["again"] = again.stdout.strip()
        await box.write_file("sub/data.txt", "payload")
        facts["read"] = await box.read_file("sub/data.txt")
        await box.exec(["ln", "-s", "/etc/shadow", "leak"])
        try:
            await box.read_file("leak")
            facts["leak"] = "read"
        except (FileNotFoundError, PermissionError):  # a link is never followed
            facts["leak"] = "refused"
        net = await box.exec(
            [sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 22), 2)"]
        )
        facts["net"] = net.success
        try:
            await box.exec(["sh", "-c", "sleep 61.25 & sleep 61.25"], timeout=2)
            facts["timeout"] = "finished"
        except TimeoutError:
            facts["timeout"] = "killed"
        state.output = _output(json.dumps(facts))
        return state

    return solve


@task
def _probe_task() -> Task:
    return Task(dataset=[Sample(input="probe")], solver=_probe(), sandbox="causalverify")


def test_the_causalverify_sandbox_serves_other_tasks(tmp_path: Path) -> None:
    log = _eval(_probe_task(), get_model("mockllm/model"), tmp_path / "logs")
    facts = json.loads(log.samples[0].output.completion)
    assert facts["first"][0] == "hello" and facts["first"][1] != "0"
    assert facts["first"][2] == "/scratch"
    assert facts["again"] == "hello" and facts["read"] == "payload"
    assert facts["leak"] == "refused"  # a link in the folder never reaches the host's files
    assert facts["net"] is False
    assert facts["timeout"] == "killed"
    left = subprocess.run(["pgrep", "-f", "sleep 61.25"], capture_output=True, text=True)
    assert left.stdout.strip() == ""  # the timeout killed the whole process tree


def test_unscoreable_cells_are_left_out_of_the_inspect_means_as_in_the_report(
    suite_dir: Path, tmp_path: Path
) -> None:
    from inspect_ai.scorer import Target, mean, scorer

    from causalverify.inspect_eval.task import cell_score, score_answer
    from causalverify.records.status import LAYERS
    from causalverify.scoring import rescore

    records = []
    for i, scenario in enumerate(load_suite(suite_dir).scenarios):
        content = write_response("textbook", scenario, language="r", protocol="default")
        record = score_answer(str(suite_dir), scenario.id, "r", "default", content, "mockllm/model")
        if i == 0:  # a canonical effect too close to zero for a relative error
            record = rescore(record.model_copy(update={"canonical": 0.0}))
        records.append(record)
    assert [r.status for r in records] == ["unscoreable", "correct", "correct", "correct"]
    scores = {r.key.scenario_id: cell_score(r) for r in records}

    @scorer(metrics={layer: [mean()] for layer in LAYERS})
    def stored() -> Any:
        async def score(state: TaskState, target: Target) -> Any:
            return scores[str(state.sample_id)]

        return score

    samples = [Sample(id=r.key.scenario_id, input="answer") for r in records]
    model = get_model("mockllm/model", custom_outputs=[_output("answer") for _ in records])
    log = _eval(Task(dataset=samples, scorer=stored()), model, tmp_path / "logs")
    run = tmp_path / "run"
    with RunStore.open(run, create=True) as store:
        store.put_cells(records)
    write_report(run, run / "report", n_resamples=20)
    summary = json.loads((run / "report" / "summary.json").read_text())
    rates = summary["rates"]["mockllm/model"]
    # Inspect averages the layers over the cells the report counts: the unscoreable cell is in
    # L1..L2b, and left out of L2b+ (not a 0 in its mean)
    assert _means(log) == {layer: rates[layer] for layer in LAYERS}
    assert _means(log)["L2b_plus"] == 1.0

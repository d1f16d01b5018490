"""A cell's failure is that cell's, never the run's: bounded scoring, harness errors, text the
store cannot encode, and answers that broke stages (the parser's depth, a pathological line)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from causalverify.models import ModelAccess, ResponseCache, get_provider
from causalverify.records import (
    CellKey,
    CellRecord,
    CodeRecord,
    ExecResult,
    FitEntry,
    FitTerm,
    Message,
    ModelResponse,
)
from causalverify.reference import write_response
from causalverify.runner import RunConfig, default_stages, run_benchmark
from causalverify.runner.budget import BoundedScorer, ScoringBudget, _Child
from causalverify.sandbox import check_parses
from causalverify.scenarios import load_suite
from causalverify.scoring import rescore
from causalverify.store import RunStore
from fake_openai import FakeOpenAIServer, Reply
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks
from test_runner import Harness

SURROGATE = "\ud800"


def cell(stdout: str = "ESTIMATE: 2.1\n", *, code: str = "print('ESTIMATE: 2.1')\n") -> CellRecord:
    return CellRecord(
        key=CellKey(scenario_id="s001", model="m", language="python"),
        family="did",
        difficulty="easy",
        beta=2.0,
        canonical=2.0,
        protocol="default",
        prompt=[Message(role="user", content="q")],
        prompt_sha256="0" * 64,
        response=ModelResponse(content=f"```python\n{code}```"),
        code=CodeRecord(language="python", code=code, parses=True),
        execution=ExecResult(
            status="ok", exit_code=0, stdout=stdout, stderr="", wall_seconds=0.1, cpu_seconds=0.1
        ),
        status="no_estimate",
    )


# -- the bound on scoring one cell -------------------------------------------------------------


def test_bounded_scoring_equals_scoring_in_process() -> None:
    record = cell()
    with BoundedScorer(ScoringBudget(seconds=60)) as scorer:
        assert scorer(record, tolerance=0.25) == rescore(record, tolerance=0.25)
        assert scorer(record).status == "correct"
        assert len(scorer.pids()) == 1  # one child, reused


def test_a_closed_scorers_children_serve_the_next_scorer_and_end_at_exit(tmp_path: Path) -> None:
    # a run and the next rescoring in one process share the scoring interpreters; a spare that
    # died meanwhile is not handed out, and the spares end when the process does
    with BoundedScorer(ScoringBudget(memory_mb=1536)) as first:
        assert first(cell()).status == "correct"
        (child,) = first.pids()
    with BoundedScorer(ScoringBudget(memory_mb=1536)) as second:
        assert second(cell()).status == "correct"
        assert second.pids() == [child]
    with BoundedScorer(ScoringBudget(memory_mb=1537)) as other_bound:
        other_bound.start(1)
        assert other_bound.pids() != [child]
    os.kill(child, signal.SIGKILL)
    _wait_gone(child)
    with BoundedScorer(ScoringBudget(memory_mb=1536)) as third:
        scored = third(cell())
        assert scored.status == "correct", scored.status_reason
        assert third.pids() != [child]
    script = (
        "from causalverify.runner.budget import BoundedScorer\n"
        "scorer = BoundedScorer()\n"
        "scorer.start(1)\n"
        "print(scorer.pids()[0])\n"
        "scorer.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    _wait_gone(int(out.stdout))


def test_a_child_ended_while_idle_does_not_fail_the_next_cell() -> None:
    # an idle child can be ended before its next cell (killed, or a spare whose exit was still
    # under way when it was handed out): that cell goes to a fresh child; a child that dies on
    # the cell itself is still the cell's harness_error (test_a_scorer_that_dies_on_the_cell_...)
    with BoundedScorer(ScoringBudget(memory_mb=1538)) as scorer:
        assert scorer(cell()).status == "correct"
        (idle,) = scorer.pids()
        os.kill(idle, signal.SIGKILL)  # no wait: the scorer finds out when it uses the child
        scored = scorer(cell())
        assert scored.status == "correct", scored.status_reason
        (fresh,) = scorer.pids()
        assert fresh != idle


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"process {pid} is still running"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_cell_past_the_time_bound_is_stopped_recorded_and_the_next_is_scored() -> None:
    with BoundedScorer(ScoringBudget(seconds=2)) as scorer:
        scorer.start(1)
        (stuck,) = scorer.pids()
        os.kill(stuck, signal.SIGSTOP)  # a child that never answers, whatever the extractor
        record = scorer(cell())
        assert record.status == "extraction_limit"
        assert record.status_reason == (
            "scoring: extraction and scoring took longer than 2 s; stopped"
        )
        assert record.scores is not None and record.scores.L2b and record.scores.L2b_plus is False
        assert record.extraction is None
        with pytest.raises(ProcessLookupError):
            os.kill(stuck, 0)  # killed and reaped
        assert scorer(cell()).status == "correct"  # a new child scores the next cell


def test_a_cell_past_the_memory_bound_is_recorded() -> None:
    big = "x" * (8 << 20) + "\nATT: 2.1\n"  # cannot even be read within 1 MB more
    with BoundedScorer(ScoringBudget(seconds=60, memory_mb=1)) as scorer:
        record = scorer(cell(big))
    assert record.status == "extraction_limit"
    assert "needed more than 1 MB" in record.status_reason


@pytest.mark.parametrize("idle", [False, True], ids=["new child", "idle child"])
def test_a_scorer_that_dies_on_the_cell_gives_harness_error(
    idle: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every child is killed as the cell is sent to it: a new child's death is the cell's
    # harness_error at once; an idle child's, after the one try on a fresh child (which dies too)
    real = _Child.score
    killed: list[int] = []

    def kill_then_score(child: _Child, request: tuple[Any, ...], deadline: float) -> Any:
        os.kill(child.pid, signal.SIGKILL)
        child.process.wait()
        killed.append(child.pid)
        return real(child, request, deadline)

    with BoundedScorer(ScoringBudget(memory_mb=1539)) as scorer:  # a bound no other test uses
        if idle:
            scorer.start(1)
        monkeypatch.setattr(_Child, "score", kill_then_score)
        record = scorer(cell())
    assert record.status == "harness_error"
    assert record.status_reason == "scoring: the scoring process was killed by signal SIGKILL"
    assert len(killed) == (2 if idle else 1) and len(set(killed)) == len(killed)


def test_a_failed_execution_keeps_its_status_and_notes_the_bound() -> None:
    failed = cell().model_copy(
        update={
            "execution": ExecResult(
                status="error", exit_code=1, stdout="", stderr="", wall_seconds=0, cpu_seconds=0
            )
        }
    )
    with BoundedScorer(ScoringBudget(seconds=1)) as scorer:
        scorer.start(1)
        os.kill(scorer.pids()[0], signal.SIGSTOP)
        record = scorer(failed)
    assert record.status == "exec_error" and "longer than 1 s" in record.status_reason


# -- stages that met the model's data ----------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "x = " + "+".join(["1"] * 200_000) + "\n",  # RecursionError in the AST constructor
        "x = " + "-" * 200_000 + "1\n",  # MemoryError in the parser
    ],
    ids=["long-sum", "deep-unary"],
)
def test_code_past_the_parsers_depth_is_a_parse_error(code: str) -> None:
    check = check_parses(code, "python", None)  # type: ignore[arg-type]
    assert not check.ok and check.error is not None
    assert check.error.split(":")[0] in {"RecursionError", "MemoryError"}


def test_lone_surrogates_are_stored_and_read_back(tmp_path: Path) -> None:
    record = cell(f"ATT: 2.1 {SURROGATE}\n", code=f"# {SURROGATE}\nprint('ATT: 2.1')\n")
    entry = FitEntry(function=f"f{SURROGATE}", terms=[FitTerm(term=SURROGATE, estimate=1.0)])
    record = record.model_copy(
        update={"execution": record.execution.model_copy(update={"fits": [entry]})}  # type: ignore[union-attr]
    )
    with RunStore.open(tmp_path, create=True) as store:
        store.put_cell(record)
        (back,) = store.iter_cells()
    assert back == record
    assert back.code is not None and back.code.code == "# \ufffd\nprint('ATT: 2.1')\n"
    assert back.execution is not None and back.execution.fits[0].terms[0].term == "\ufffd"


class _Raising:
    """A stage that fails the way a harness bug met only by odd data would."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.exc


@pytest.mark.parametrize(
    ("stage", "field", "exc"),
    [
        ("code block", "extract_code", RecursionError("maximum recursion depth exceeded")),
        ("parse check", "check_parses", MemoryError()),
        ("scoring", "rescore", UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates")),
    ],
)
def test_an_exception_in_a_stage_is_the_cells_status(
    tmp_path: Path, stage: str, field: str, exc: Exception
) -> None:
    world = Harness(tmp_path, n=2)
    stages = dataclasses.replace(world.stages(), **{field: _Raising(exc)})
    config = world.config(models=("fake/good", "fake/crash"), languages=("r",))
    first = run_benchmark(config, stages=stages, suite=world.suite)
    assert first.computed == first.total == 4
    with RunStore.open(world.out) as store:
        records = list(store.iter_cells())
    assert len(records) == 4
    for record in records:
        assert record.status_reason.startswith(f"{stage}: {type(exc).__name__}")
        if stage == "scoring" and record.key.model == "fake/crash":
            assert record.status == "exec_error"  # the first failing stage names the status
        else:
            assert record.status == "harness_error"
    again = run_benchmark(config, stages=stages, suite=world.suite)  # a resume goes on
    assert again.computed == 0 and again.skipped == 4


def test_a_record_the_store_cannot_serialise_is_stored_without_its_text(tmp_path: Path) -> None:
    world = Harness(tmp_path, n=1)
    real_run = world.sandbox.run

    def run(*args: Any, **kwargs: Any) -> ExecResult:
        result = real_run(*args, **kwargs)
        # made without validation, as a future code path might: not UTF-8 encodable
        return ExecResult.model_construct(**{**dict(result), "stdout": f"2.0 {SURROGATE}"})

    world.sandbox.run = run  # type: ignore[method-assign]
    summary = world.run(world.config(models=("fake/good",), languages=("r",)))
    assert summary.computed == 1
    with RunStore.open(world.out) as store:
        (record,) = list(store.iter_cells())
    assert record.status == "harness_error"
    assert record.status_reason.startswith("store: PydanticSerializationError")
    assert record.response is None and record.execution is None


# -- a run whose answers are crafted, end to end (real sandbox, loopback OpenAI server) ---------


def _crafted_answers(textbook: str) -> dict[int, str]:
    block = textbook[textbook.index("```python") :]
    code = block.split("\n", 1)[1].rsplit("```", 1)[0]
    long_sum = "x = " + "+".join(["1"] * 100_000)
    return {
        1: f"```python\n{long_sum}\n{code}```\n",  # the parser's recursion limit
        2: f"Here {SURROGATE} it is.\n```python\n# {SURROGATE}\n{code}```\n",  # a lone surrogate
        3: f'```python\nprint("a" * 9000)\n{code}```\n',  # a line extraction chews on
        4: textbook,
    }


@with_marks(needs_r_and_sandbox)
def test_a_run_of_crafted_answers_finishes_and_resumes(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite_dir = smoke_suite(shared_root(tmp_path_factory))
    scenarios = load_suite(suite_dir).scenarios

    def responder(request: dict[str, Any]) -> Reply:
        text = " ".join(m["content"] for m in request["messages"])
        s = next(s for s in scenarios if s.title in text)
        textbook = write_response("textbook", s, language="python", protocol="default")
        return Reply(content=_crafted_answers(textbook)[s.index])

    config = RunConfig(
        suite_dir=suite_dir,
        out_dir=tmp_path / "run",
        models=("openai/crafted",),
        languages=("python",),
        workers=2,
        access=ModelAccess(cache_path=tmp_path / "cache.sqlite"),
        scoring_budget=ScoringBudget(seconds=5),
    )
    with FakeOpenAIServer(responder=responder) as server:
        cache = ResponseCache(config.access.cache_path)
        stages = dataclasses.replace(
            default_stages(config),
            make_provider=lambda spec: get_provider(spec, base_url=server.url, cache=cache),
        )
        first = run_benchmark(config, stages=stages)
        with RunStore.open(config.out_dir) as store:
            cells = {r.key.scenario_id: r for r in store.iter_cells()}
        assert first.computed == first.total == len(cells) == 4
        assert cells["s001"].status == "parse_error"
        assert cells["s001"].code is not None
        assert (cells["s001"].code.parse_error or "").startswith("RecursionError")
        assert cells["s002"].status == "correct"
        assert cells["s002"].response is not None
        assert SURROGATE not in (cells["s002"].response.content or "")
        assert "\ufffd" in (cells["s002"].response.content or "")
        # today's extractor may take hours on that line: bounded, the cell is recorded either way
        assert cells["s003"].status in {"correct", "extraction_limit"}
        if cells["s003"].status == "extraction_limit":
            assert "longer than 5 s" in cells["s003"].status_reason
        assert cells["s004"].status == "correct"
        again = run_benchmark(config, stages=stages)
        assert again.computed == 0 and again.skipped == 4


# -- what reports show -------------------------------------------------------------------------


def test_reports_count_and_explain_unfinished_cells(tmp_path: Path) -> None:
    from causalverify.report import write_report

    world = Harness(tmp_path, n=3)
    flaky = _Raising(RecursionError("maximum recursion depth exceeded"))
    real = world.stages()

    def score(record: CellRecord, **settings: Any) -> CellRecord:
        if record.key.scenario_id == "s002" and record.key.model == "fake/good":
            return flaky(record)  # type: ignore[no-any-return]
        return real.rescore(record, **settings)

    stages = dataclasses.replace(real, rescore=score)
    config = world.config(models=("fake/good", "fake/wrong", "fake/crash"), languages=("r",))
    run_benchmark(config, stages=stages, suite=world.suite)
    report = write_report(world.out, tmp_path / "report", n_resamples=20)
    html = report.read_text(encoding="utf-8")
    assert "unfinished: 1 met a harness error (harness_error)" in html
    assert "fitted right, reported wrong (self-reported)" in html
    explorer = "".join(
        p.read_text(encoding="utf-8") for p in (report.parent / "explorer").glob("chunk-*")
    )
    assert "scoring: RecursionError: maximum recursion depth exceeded" in explorer

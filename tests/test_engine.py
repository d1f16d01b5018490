"""The one dispatch engine: concurrency, a second stage, one writer, model lifetime, accounting."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from causalverify.errors import ProviderError
from causalverify.records import ModelResponse
from causalverify.runner.engine import (
    Engine,
    Job,
    Ledger,
    ProgressEvent,
    Stage,
    Tally,
    answer_status,
    holds_answers,
    is_pending,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "causalverify"


class Closable:
    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_bounded_concurrency_one_writer_and_every_model_closed() -> None:
    made: dict[str, Closable] = {}
    lock = threading.Lock()
    running, peak = 0, 0

    def make(spec: str) -> Any:
        assert spec not in made, "a model is made once per spec"
        made[spec] = Closable(spec)
        return made[spec]

    def call(i: int, model: Closable) -> tuple[int, str]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return i, model.spec

    finished: list[tuple[int, str]] = []
    writers: set[int] = set()

    def finish(result: tuple[int, str]) -> None:
        writers.add(threading.get_ident())
        finished.append(result)

    jobs = (Job(f"m{i % 3}", lambda model, i=i: call(i, model)) for i in range(30))
    with Engine(make, concurrency=4) as engine:
        engine.run(jobs, finish)
    assert sorted(finished) == [(i, f"m{i % 3}") for i in range(30)]
    assert peak <= 4 and writers == {threading.get_ident()}
    assert sorted(made) == ["m0", "m1", "m2"] and all(m.closed == 1 for m in made.values())


def test_a_second_stage_runs_elsewhere_and_its_result_is_finished() -> None:
    second = ThreadPoolExecutor(2)
    finished: list[Any] = []

    def then(result: int | str) -> Future[str] | None:
        # what the second stage yields comes back here, and is finished as it is
        if isinstance(result, str) or result % 2:
            return None
        return second.submit(lambda: f"ran {result}")

    jobs = [Job("m", lambda model, i=i: i) for i in range(6)]
    with Engine(lambda spec: Closable(spec), concurrency=2) as engine:
        engine.run(jobs, finished.append, then=then, backlog=4)
    second.shutdown()
    assert sorted(map(str, finished)) == ["1", "3", "5", "ran 0", "ran 2", "ran 4"]


def test_a_result_can_ask_the_model_again_until_it_is_done() -> None:
    # a conversation: each turn is another job for the same model, then the last is finished
    second = ThreadPoolExecutor(2)
    finished: list[Any] = []
    calls: list[tuple[str, int, int]] = []

    def turn(model: Closable, cell: int, n: int) -> tuple[int, int]:
        calls.append((model.spec, cell, n))
        return cell, n

    def then(result: Any) -> Future[Any] | Job[Any] | None:
        if isinstance(result, tuple) and len(result) == 2:
            return second.submit(lambda: ("executed", *result))
        _, cell, n = result
        if n < cell % 3 + 1:
            return Job(f"m{cell}", lambda model: turn(model, cell, n + 1))
        return None

    jobs = [Job(f"m{i}", lambda model, i=i: turn(model, i, 1)) for i in range(6)]
    with Engine(lambda spec: Closable(spec), concurrency=2) as engine:
        engine.run(jobs, finished.append, then=then, backlog=2)
    second.shutdown()
    assert sorted(finished) == sorted(("executed", i, i % 3 + 1) for i in range(6))
    assert sorted(calls) == sorted((f"m{i}", i, n) for i in range(6) for n in range(1, i % 3 + 2))


def test_a_setup_error_stops_the_run_keeps_what_finished_and_closes_models() -> None:
    model = Closable("m")
    finished: list[int] = []

    def call(i: int) -> int:
        if i == 3:
            raise ProviderError("401: bad key")
        return i

    engine = Engine(None, concurrency=1, models={"m": model})
    with pytest.raises(ProviderError, match="bad key"), engine:
        engine.run((Job("m", lambda _, i=i: call(i)) for i in range(10)), finished.append)
    assert {0, 1, 2} <= set(finished) and 3 not in finished and model.closed == 1


def test_tally_counts_only_paid_answers_and_the_status_vocabulary() -> None:
    tally = Tally()
    tally.add("openai/x", ModelResponse(content="a", input_tokens=3, output_tokens=4, cost_usd=0.5))
    tally.add("openai/x", ModelResponse(content="a", cached=True, cost_usd=9.0))
    tally.add("openai/x", ModelResponse(content=None, error="HTTP 500"))
    tally.add("reference/textbook", ModelResponse(content="a"))
    assert (tally.requests, tally.input_tokens, tally.output_tokens, tally.cost_usd) == (
        1,
        3,
        4,
        0.5,
    )
    assert answer_status(ModelResponse(content=None, error="x")) == "api_error"
    assert answer_status(ModelResponse(content="  ")) == "no_response"
    assert answer_status(ModelResponse(content="ok")) == "ok"
    assert is_pending({}, "k") and is_pending({"k": "api_error"}, "k")
    assert not is_pending({"k": "wrong"}, "k")


def test_every_command_that_asks_models_goes_through_the_engine() -> None:
    """No other module keeps a dispatch loop of its own."""
    for rel in ("runner/run.py", "calibration/elicit.py", "papers/run.py"):
        text = (SRC / rel).read_text(encoding="utf-8")
        assert "Engine(" in text, rel
        assert "ThreadPoolExecutor" not in text and "wait(" not in text, rel
        assert "RETRY" not in text.replace("RETRY_STATUSES", ""), rel


def test_a_stage_runs_on_the_engines_second_pool_of_its_own_size() -> None:
    lock = threading.Lock()
    running, peak = 0, 0
    names: set[str] = set()

    def execute(i: int) -> str:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            names.add(threading.current_thread().name)
        time.sleep(0.02)
        with lock:
            running -= 1
        return f"ran {i}"

    def then(result: int | str) -> Stage[str] | None:
        return None if isinstance(result, str) else Stage(lambda: execute(result))

    finished: list[str] = []
    jobs = [Job("m", lambda model, i=i: i) for i in range(8)]
    with Engine(lambda spec: Closable(spec), concurrency=4, name="t") as engine:
        engine.run(jobs, finished.append, then=then, backlog=4, stage_workers=2)
        with pytest.raises(ValueError, match="stage_workers"):
            engine.run([Job("m", lambda model: 0)], finished.append, then=then)
    assert sorted(finished) == sorted(f"ran {i}" for i in range(8))
    assert peak == 2 and all(n.startswith("t-stage") for n in names)


def test_the_ledger_skips_final_statuses_asks_the_rest_and_tells_progress() -> None:
    keys = ["a", "b", "c", "d"]
    stored = {"a": "correct", "b": "api_error", "d": "wrong"}
    events: list[ProgressEvent] = []
    ledger = Ledger(keys, stored, task="rows", progress=events.append)
    assert ledger.todo == ["b", "c"] and ledger.skipped == 2
    assert holds_answers(stored) and not holds_answers({"x": "api_error"})
    paid = ModelResponse(content="x", input_tokens=2, output_tokens=3, cost_usd=0.25)

    def finish(result: str) -> None:
        ledger.finished(result, "openai/m", [paid], record=result)

    jobs = [Job("m", lambda model, k=k: "ok" if k == "b" else "api_error") for k in ledger.todo]
    with Engine(lambda spec: Closable(spec), concurrency=1) as engine:
        engine.run(jobs, finish, ledger=ledger)
    assert [e.kind for e in events] == ["start", "cell", "cell", "done"]
    assert [e.done for e in events] == [2, 3, 4, 4] and {e.total for e in events} == {4}
    assert {e.task for e in events} == {"rows"} and events[1].record == "ok"
    assert events[-1].counts == {"api_error": 1, "correct": 1, "ok": 1, "wrong": 1}
    assert (ledger.computed, ledger.tally.requests, ledger.tally.cost_usd) == (2, 2, 0.5)
    # a resume asks only what is still pending: the row that failed
    again = Ledger(keys, {**stored, "b": "ok", "c": "api_error"}, task="rows")
    assert again.todo == ["c"] and again.skipped == 3

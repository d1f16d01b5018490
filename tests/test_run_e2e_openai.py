"""End to end against a real HTTP server on loopback speaking the OpenAI API, with faults.

Two models answer four scenarios (R). The server injects 429 with Retry-After, 500s, slow
answers, malformed JSON, a truncated answer, an empty answer and prose; the run must complete
with the right status per cell, lose nothing, never pay twice, and add up its costs.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from causalverify.models import ModelAccess, ResponseCache, RetryPolicy, get_provider
from causalverify.models.base import Provider
from causalverify.reference import write_response
from causalverify.runner import RunConfig, RunSummary, default_stages, run_benchmark
from causalverify.scenarios import Scenario, load_suite
from causalverify.store import RunStore
from fake_openai import Behaviour, ErrorReply, FakeOpenAIServer, RawReply, Reply
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite

pytestmark = needs_r_and_sandbox

PRICES = {
    "models": {
        "model-a": {"input": 1000.0, "output": 2000.0},
        "model-b": {"input": 500.0, "output": 500.0},
    }
}
RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05, max_retry_after=2.0)


class Script:
    """Decides each request's behaviour from (model, scenario) and how often it was asked."""

    def __init__(self, scenarios: list[Scenario]) -> None:
        self.scenarios = scenarios
        self.seen: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()
        self.healthy = False  # after the first run every fault is gone

    def scenario_of(self, request: dict[str, Any]) -> Scenario:
        text = " ".join(m["content"] for m in request["messages"])
        return next(s for s in self.scenarios if s.title in text)

    def __call__(self, request: dict[str, Any]) -> Behaviour:
        s = self.scenario_of(request)
        key = (request["model"], s.id)
        with self.lock:
            self.seen[key] += 1
            attempt = self.seen[key]
        textbook = write_response("textbook", s, language="r", protocol="default")
        good = Reply(content=textbook, prompt_tokens=100, completion_tokens=50)
        if self.healthy:
            return good
        return self.faults(key[0], s.index, attempt, textbook) or good

    @staticmethod
    def faults(model: str, index: int, attempt: int, textbook: str) -> Behaviour | None:
        if model == "model-a":
            if index == 1 and attempt == 1:
                return ErrorReply(status=429, headers={"Retry-After": "1"})
            if index == 2 and attempt == 1:
                return ErrorReply(status=500)
            if index == 3:
                return RawReply(body=b'{"id": "x", "choices": [')
            if index == 4:
                cut = textbook[: textbook.index("```r") + 40]
                return Reply(
                    content=cut, finish_reason="length", prompt_tokens=100, completion_tokens=8192
                )
            return None
        if index == 1:
            return Reply(content=textbook, prompt_tokens=100, completion_tokens=50, delay=1.5)
        if index == 2:
            return ErrorReply(status=503)
        if index == 3:
            return Reply(
                content="I would run two-stage least squares.",
                prompt_tokens=100,
                completion_tokens=10,
            )
        return Reply(content="", prompt_tokens=100, completion_tokens=0)


EXPECTED = {
    ("openai/model-a", "s001"): "correct",  # after a 429 honouring Retry-After
    ("openai/model-a", "s002"): "correct",  # after a 500
    ("openai/model-a", "s003"): "api_error",  # malformed JSON every time
    ("openai/model-b", "s001"): "correct",  # slow
    ("openai/model-b", "s002"): "api_error",  # 503 every time
    ("openai/model-b", "s003"): "no_code",
    ("openai/model-b", "s004"): "no_response",
}


def run(config: RunConfig, server: FakeOpenAIServer) -> RunSummary:
    cache = ResponseCache(config.access.cache_path)

    def make_provider(spec: str) -> Provider:
        return get_provider(
            spec, base_url=server.url, cache=cache, prices=PRICES, retry_policy=RETRY
        )

    stages = dataclasses.replace(default_stages(config), make_provider=make_provider)
    return run_benchmark(config, stages=stages)


def test_faults_statuses_cache_and_costs(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite_dir = smoke_suite(shared_root(tmp_path_factory))
    script = Script(load_suite(suite_dir).scenarios)
    config = RunConfig(
        suite_dir=suite_dir,
        out_dir=tmp_path / "run",
        models=("openai/model-a", "openai/model-b"),
        languages=("r",),
        workers=2,
        access=ModelAccess(concurrency=4, cache_path=tmp_path / "cache.sqlite"),
    )
    with FakeOpenAIServer(responder=script) as server:
        first = run(config, server)
        first_requests = server.request_count
        with RunStore.open(config.out_dir) as store:
            cells = {(r.key.model, r.key.scenario_id): r for r in store.iter_cells()}
        assert len(cells) == first.total == 8 and first.computed == 8
        assert {k: cells[k].status for k in EXPECTED} == EXPECTED
        truncated = cells[("openai/model-a", "s004")]
        assert truncated.response is not None and truncated.response.truncated
        assert truncated.status in {"no_code", "parse_error", "exec_error"}
        assert script.seen[("model-a", "s001")] == 2 and script.seen[("model-a", "s003")] == 3
        assert cells[("openai/model-b", "s002")].response.error  # type: ignore[union-attr]
        paid = [c.response for c in cells.values() if c.response and c.response.error is None]
        assert first.requests == len(paid) == 6
        assert first.cost_usd == pytest.approx(sum(p.cost_usd for p in paid))
        expected_cost = 2 * (0.1 + 0.1) + (0.1 + 16.384) + (0.05 + 0.025) + 0.05 + 0.005 + 0.05
        assert first.cost_usd == pytest.approx(expected_cost)
        assert first.input_tokens == 600

        script.healthy = True  # the same command again: only the two api_error cells are asked
        second = run(config, server)
        assert server.request_count == first_requests + 2
        assert second.computed == 2 and second.skipped == 6 and second.requests == 2
        with RunStore.open(config.out_dir) as store:
            after = {(r.key.model, r.key.scenario_id): r for r in store.iter_cells()}
        assert after[("openai/model-a", "s003")].status == "correct"
        assert after[("openai/model-b", "s002")].status == "correct"
        assert all(after[k] == cells[k] for k in cells if cells[k].status != "api_error")

        third = run(dataclasses.replace(config, out_dir=tmp_path / "copy"), server)
        assert server.request_count == first_requests + 2  # a new run folder: all from the cache
        assert third.computed == 8 and third.requests == 0 and third.cost_usd == 0.0

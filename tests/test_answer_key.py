"""No model can see the answer: API providers get messages and settings only; offline agents
(reference panel, replay) get the scenario's brief, never its true effect or canonical estimate.

Spies stand in for both kinds of model in a real run, a real calibration and a real Experiment A
run, and record every argument they receive; nothing they received may hold the answer key.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from causalverify.calibration import CalibrationConfig, calibrate_run
from causalverify.models import CellContext, ModelAccess, ModelOptions, get_provider
from causalverify.models._sdk import SdkProvider
from causalverify.models.cached import CachedProvider
from causalverify.papers.run import AskSettings, run_papers
from causalverify.records import Message, ModelResponse, ScenarioBrief
from causalverify.reference import write_response
from causalverify.runner import ProgressEvent, RunConfig, default_stages, run_benchmark
from causalverify.scenarios import load_suite
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks

#: what a scenario knows that no model may: field names anywhere in what a model receives
SECRET_FIELDS = {"beta", "canonical", "params", "estimate", "dgp_effect", "baseline_effect"}


def test_api_providers_take_messages_and_settings_only() -> None:
    for cls in (SdkProvider, CachedProvider):
        names = list(inspect.signature(cls.complete).parameters)
        assert names == ["self", "messages", "options", "sample"], cls
    assert not hasattr(SdkProvider, "answer") and not hasattr(CachedProvider, "answer")


def test_the_brief_holds_no_answer() -> None:
    assert set(ScenarioBrief.model_fields) == {"id", "family", "data_file", "facts"}
    assert set(f.name for f in dataclasses.fields(CellContext)) == {
        "scenario",
        "language",
        "protocol",
        "sample",
        "turn",  # a repair-mode turn number: the feedback itself is in the messages
        "request",  # "declare" when the last message asks for the printed estimate
    }


def _walk(value: Any) -> Iterator[tuple[str | None, Any]]:
    """Every (field name, value) reachable from ``value``."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            item = getattr(value, name)
            yield name, item
            yield from _walk(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            yield f.name, item
            yield from _walk(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key), item
            yield from _walk(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield None, item
            yield from _walk(item)


class Spy:
    """Records every call's arguments; ``inner`` answers."""

    def __init__(self, spec: str, inner: Any = None) -> None:
        self.spec, self.inner = spec, inner
        self.calls: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()

    def _record(self, *args: Any) -> None:
        with self.lock:
            self.calls.append(args)


class ApiSpy(Spy):
    """An API model: it has only the provider method."""

    def complete(
        self, messages: Sequence[Message], *, options: ModelOptions, sample: int = 0
    ) -> ModelResponse:
        self._record(list(messages), options, sample)
        return ModelResponse(content="I would use a difference in differences.")


class AgentSpy(Spy):
    """An offline agent wrapping a real one."""

    def answer(
        self, messages: Sequence[Message], *, options: ModelOptions, context: CellContext | None
    ) -> ModelResponse:
        self._record(list(messages), options, context)
        response: ModelResponse = self.inner.answer(messages, options=options, context=context)
        return response


def _assert_no_answer(spies: Sequence[Spy], suite: Any) -> None:
    secrets = []
    for s in suite.scenarios:
        value = s.canonical.estimate
        secrets += [repr(value), f"{value:.6g}", f"{value:.4g}"]
    calls = [call for spy in spies for call in spy.calls]
    assert calls
    for call in calls:
        for name, value in _walk(call):
            assert name not in SECRET_FIELDS, (name, call)
            if isinstance(value, float):
                assert all(value != s.canonical.estimate for s in suite.scenarios)
            if isinstance(value, str):
                assert not any(secret in value for secret in secrets), value[:200]


@with_marks(needs_r_and_sandbox)
def test_no_model_receives_the_answer_in_a_run_calibration_or_papers_run(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    suite_dir = smoke_suite(shared_root(tmp_path_factory))
    suite = load_suite(suite_dir)
    api = ApiSpy("openai/spy")
    agent = AgentSpy("reference/textbook", get_provider("reference/textbook"))
    spies: dict[str, Spy] = {api.spec: api, agent.spec: agent}
    config = RunConfig(
        suite_dir=suite_dir,
        out_dir=tmp_path / "run",
        models=tuple(spies),
        languages=("r", "python"),
        workers=2,
        access=ModelAccess(cache_path=tmp_path / "cache.sqlite"),
    )
    stages = dataclasses.replace(default_stages(config), make_provider=spies.__getitem__)
    events: list[ProgressEvent] = []
    summary = run_benchmark(config, stages=stages, progress=events.append)
    assert summary.counts.get("correct") == 8  # the agent still answers every cell right
    assert len(api.calls) == len(agent.calls) == 8
    calibrated = CalibrationConfig(run_dir=config.out_dir, models=tuple(spies))
    calibrate_run(calibrated, make_provider=spies.__getitem__, progress=events.append)
    contexts = [call[2] for call in agent.calls]
    assert {c.protocol for c in contexts} == {"default", "calibration/default"}
    assert all(type(c.scenario) is ScenarioBrief for c in contexts)
    settings = AskSettings(make_provider=spies.__getitem__, progress=events.append)
    paper_agent = AgentSpy("reference/naive", None)
    paper_agent.inner = type("Echo", (), {"answer": lambda *a, **k: ModelResponse(content="x")})()
    spies[paper_agent.spec] = paper_agent
    run_papers(config.out_dir, models=[api.spec, paper_agent.spec], settings=settings, limit=2)
    assert len(paper_agent.calls) == 2 and all(call[2] is None for call in paper_agent.calls)
    _assert_no_answer([api, agent, paper_agent], suite)
    # one progress report for all three: the engine's, named by task
    assert all(type(e) is ProgressEvent for e in events)
    assert {e.task for e in events} == {"cells", "confidences", "papers (standard)"}
    for task in ("cells", "confidences", "papers (standard)"):
        kinds = [e.kind for e in events if e.task == task]
        assert kinds[0] == "start" and kinds[-1] == "done" and set(kinds[1:-1]) == {"cell"}
    # the agent's answers are the ones the full scenario would give: the brief is enough
    s = suite.scenarios[0]
    brief = ScenarioBrief.of(s)
    for language in ("r", "python"):
        full = write_response("textbook", s, language=language, protocol="default")
        assert write_response("textbook", brief, language=language, protocol="default") == full

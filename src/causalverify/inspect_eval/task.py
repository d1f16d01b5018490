"""The Inspect task and scorer (see :mod:`causalverify.inspect_eval`)."""

from __future__ import annotations

import asyncio
import functools
import math
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from causalverify.families import Language
from causalverify.records import CellKey, CellRecord, ModelResponse, counted_layers
from causalverify.records.status import LAYERS
from causalverify.runner.cell import Answered, CellTask, execute
from causalverify.runner.config import RunConfig
from causalverify.runner.stages import Stages, default_stages
from causalverify.runner.suite import balanced_subset, ensure_suite
from causalverify.scenarios import Suite, load_suite

#: where named suites are built for Inspect runs
SUITE_CACHE = Path.home() / ".cache" / "causalverify" / "inspect"


@functools.cache
def _suite(spec: str) -> Suite:
    """A named suite (built once into :data:`SUITE_CACHE`) or a built suite's folder."""
    return load_suite(ensure_suite(spec, SUITE_CACHE))


@functools.cache
def _stages(suite_dir: str, protocol: str) -> tuple[Stages, RunConfig]:
    config = RunConfig(
        suite_dir=Path(suite_dir),
        out_dir=SUITE_CACHE / "unused",
        protocol=protocol,  # type: ignore[arg-type]
    )
    return default_stages(config), config


@functools.cache
def _rendered(suite_dir: str, scenario_id: str, language: Language, protocol: str) -> Any:
    """The prompt of a scenario, rendered once for the task and its scorer alike."""
    loaded = _suite(suite_dir)
    stages, _ = _stages(suite_dir, protocol)
    scenario = loaded.get(scenario_id)
    return stages.render(
        scenario,
        loaded.read_data(scenario),
        language=language,
        protocol=protocol,
        manifest=stages.manifest,
    )


def _messages(rendered: Any) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for m in rendered.messages:
        if m.role == "system":
            out.append(ChatMessageSystem(content=m.content))
        else:
            out.append(ChatMessageUser(content=m.content))
    return out


@task(name="causalverify")
def causalverify_task(
    suite: str = "smoke",
    language: str = "r",
    protocol: str = "default",
    limit: int | None = None,
) -> Task:
    """CausalVerify's Experiment B as an Inspect task.

    Parameters
    ----------
    suite
        A named suite (``default``, ``smoke``, ``modern``, ``modern-smoke``; built once under
        ``~/.cache/causalverify/inspect``) or the folder of a built suite.
    language
        ``r`` or ``python``: the language the model is asked to write.
    protocol
        ``default`` or ``paper`` (see the prompts).
    limit
        Use only this many scenarios, spread evenly over the designs.
    """
    if language not in ("r", "python"):
        raise ValueError(f"language must be 'r' or 'python', got {language!r}")
    loaded = _suite(suite)
    samples = []
    for scenario in balanced_subset(loaded.scenarios, limit):
        rendered = _rendered(str(loaded.root), scenario.id, language, protocol)
        samples.append(
            Sample(
                id=scenario.id,
                input=_messages(rendered),
                target=repr(scenario.canonical.estimate),
                metadata={
                    "suite_dir": str(loaded.root),
                    "scenario_id": scenario.id,
                    "family": scenario.family,
                    "language": language,
                    "protocol": protocol,
                },
            )
        )
    return Task(
        dataset=MemoryDataset(samples, name=f"causalverify-{Path(str(suite)).name}"),
        solver=generate(),
        scorer=causalverify_scorer(),
    )


def score_answer(
    suite_dir: str,
    scenario_id: str,
    language: Language,
    protocol: str,
    content: str,
    model: str,
    tokens: tuple[int, int] = (0, 0),
) -> CellRecord:
    """Execute and score one answer exactly as a benchmark cell is."""
    loaded = _suite(suite_dir)
    stages, config = _stages(suite_dir, protocol)
    scenario = loaded.get(scenario_id)
    rendered = _rendered(suite_dir, scenario_id, language, protocol)
    cell = CellTask(
        key=CellKey(scenario_id=scenario_id, model=model, language=language),
        scenario=scenario,
        data_path=loaded.data_path(scenario),
        prompt=rendered,
        protocol=protocol,
    )
    response = ModelResponse(
        content=content, model=model, input_tokens=tokens[0], output_tokens=tokens[1]
    )
    return execute(Answered(cell, response, 0.0), stages, config)


@scorer(metrics={layer: [mean(), stderr()] for layer in LAYERS})
def causalverify_scorer() -> Any:
    """Run the answer's code in the sandbox and score every layer (see the module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        usage = state.output.usage
        tokens = (usage.input_tokens, usage.output_tokens) if usage is not None else (0, 0)
        record = await asyncio.to_thread(
            score_answer,
            str(meta["suite_dir"]),
            str(meta["scenario_id"]),
            meta["language"],
            str(meta["protocol"]),
            state.output.completion,
            str(state.model),
            tokens,
        )
        return cell_score(record)

    return score


def cell_score(record: CellRecord) -> Score:
    """The Inspect score of a scored cell, counted as the report counts it.

    Each layer is 1.0 or 0.0; a layer the report leaves the cell out of (L2b+ of an unscoreable
    cell, every layer of a cell without an answer) is NaN, Inspect's "no score", which its
    metrics skip instead of averaging in as 0. A cell left out of every layer is unscored.
    """
    counted = counted_layers(record.status, record.scores)
    scores = record.scores
    answer = None if scores is None or scores.estimate is None else repr(scores.estimate)
    metadata = {"causalverify_cell": record.model_dump(mode="json")}
    if all(v is None for v in counted.values()):
        return Score.unscored(
            reason=record.status, answer=answer, explanation=record.status, metadata=metadata
        )
    return Score(
        value={layer: math.nan if v is None else v for layer, v in counted.items()},
        answer=answer,
        explanation=record.status,
        metadata=metadata,
    )

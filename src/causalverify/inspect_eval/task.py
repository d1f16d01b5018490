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
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from causalverify.families import Language
from causalverify.inspect_eval.reference_model import remember_prompt
from causalverify.records import (
    CellKey,
    CellRecord,
    Message,
    ModelResponse,
    TurnRecord,
    counted_layers,
    messages_sha256,
)
from causalverify.records.status import LAYERS
from causalverify.runner.cell import Answered, CellTask, conversation, execute, execute_turn
from causalverify.runner.config import RunConfig
from causalverify.runner.meta import suite_fingerprint
from causalverify.runner.repair import ends_conversation, feedback
from causalverify.runner.stages import Stages, default_stages
from causalverify.runner.suite import balanced_subset, ensure_suite
from causalverify.scenarios import Suite, load_suite

#: where named suites are built for Inspect runs
SUITE_CACHE = Path.home() / ".cache" / "causalverify" / "inspect"
#: where a repair-mode sample keeps its cell record (every turn) for the scorer
CELL_STORE_KEY = "causalverify_cell"


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
    rendered = stages.render(
        scenario,
        loaded.read_data(scenario),
        language=language,
        protocol=protocol,
        manifest=stages.manifest,
    )
    remember_prompt(rendered.messages, scenario, language, protocol)  # for causalverify/<agent>
    return rendered


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
    mode: str = "single",
    max_turns: int = 3,
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
    mode
        ``single`` (one answer) or ``repair``: as ``causalverify run --mode repair``, an answer
        whose code failed or printed no readable estimate is followed by execution feedback
        (:func:`causalverify.runner.repair.feedback`: what the code did, never the canonical
        estimate or whether a number is right) and asked again, up to ``max_turns`` turns.
    max_turns
        Turns a sample may take in repair mode (at least 1).
    """
    if language not in ("r", "python"):
        raise ValueError(f"language must be 'r' or 'python', got {language!r}")
    if mode not in ("single", "repair"):
        raise ValueError(f"mode must be 'single' or 'repair', got {mode!r}")
    if int(max_turns) < 1:
        raise ValueError(f"max_turns must be at least 1, got {max_turns!r}")
    turns = int(max_turns) if mode == "repair" else 1
    loaded = _suite(suite)
    root = str(Path(loaded.root).resolve())
    fingerprint = suite_fingerprint(loaded.scenarios)
    samples = []
    for scenario in balanced_subset(loaded.scenarios, limit):
        rendered = _rendered(root, scenario.id, language, protocol)
        samples.append(
            Sample(
                id=scenario.id,
                input=_messages(rendered),
                target=repr(scenario.canonical.estimate),
                metadata={
                    "suite_dir": root,
                    "suite_fingerprint": fingerprint,
                    "scenario_id": scenario.id,
                    "family": scenario.family,
                    "language": language,
                    "protocol": protocol,
                    "mode": mode,
                    "max_turns": turns,
                },
            )
        )
    return Task(
        dataset=MemoryDataset(samples, name=f"causalverify-{Path(str(suite)).name}"),
        solver=repair_solver(turns) if mode == "repair" else generate(),
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
    cell = _cell(suite_dir, scenario_id, language, protocol, model)
    stages, config = _stages(suite_dir, protocol)
    return execute(Answered(cell, _response(content, model, tokens), 0.0), stages, config)


def score_turn(
    suite_dir: str,
    scenario_id: str,
    language: Language,
    protocol: str,
    content: str,
    model: str,
    tokens: tuple[int, int],
    history: tuple[TurnRecord, ...],
    asked: Message | None,
) -> CellRecord:
    """Execute and score one turn of a repair-mode sample exactly as a repair run's turn is:
    ``history`` holds the earlier turns, ``asked`` the feedback this answer replies to; the
    record lists every turn once there is more than one."""
    cell = _cell(suite_dir, scenario_id, language, protocol, model)
    stages, config = _stages(suite_dir, protocol)
    request = messages_sha256(conversation(cell, history, asked))
    answered = Answered(cell, _response(content, model, tokens), 0.0, history, asked, request)
    return execute_turn(answered, stages, config).record


def _cell(
    suite_dir: str, scenario_id: str, language: Language, protocol: str, model: str
) -> CellTask:
    loaded = _suite(suite_dir)
    scenario = loaded.get(scenario_id)
    return CellTask(
        key=CellKey(scenario_id=scenario_id, model=model, language=language),
        scenario=scenario,
        data_path=loaded.data_path(scenario),
        prompt=_rendered(suite_dir, scenario_id, language, protocol),
        protocol=protocol,
    )


def _response(content: str, model: str, tokens: tuple[int, int]) -> ModelResponse:
    return ModelResponse(
        content=content, model=model, input_tokens=tokens[0], output_tokens=tokens[1]
    )


def _tokens(state: TaskState) -> tuple[int, int]:
    usage = state.output.usage
    return (usage.input_tokens, usage.output_tokens) if usage is not None else (0, 0)


@solver
def repair_solver(max_turns: int) -> Solver:
    """Generate, run the answer, and while the conversation goes on (as
    :func:`causalverify.runner.repair.ends_conversation` decides) append the execution feedback
    and generate again; the cell record, with every turn, is kept for the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        history: tuple[TurnRecord, ...] = ()
        asked: Message | None = None
        while True:
            if asked is not None:
                state.messages.append(ChatMessageUser(content=asked.content))
            state = await generate(state)
            record = await asyncio.to_thread(
                score_turn,
                str(meta["suite_dir"]),
                str(meta["scenario_id"]),
                meta["language"],
                str(meta["protocol"]),
                state.output.completion,
                str(state.model),
                _tokens(state),
                history,
                asked,
            )
            turns = record.turn_states()
            if ends_conversation(turns, max_turns) or state.completed:
                break
            history, asked = tuple(turns), feedback(record, meta["language"])
        state.store.set(CELL_STORE_KEY, record.model_dump(mode="json"))
        return state

    return solve


@scorer(metrics={layer: [mean(), stderr()] for layer in LAYERS})
def causalverify_scorer() -> Any:
    """Run the answer's code in the sandbox and score every layer (see the module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        kept = state.store.get(CELL_STORE_KEY)
        if kept is not None:  # repair mode: the solver ran and scored every turn
            record = CellRecord.model_validate(kept)
        else:
            meta = state.metadata
            record = await asyncio.to_thread(
                score_answer,
                str(meta["suite_dir"]),
                str(meta["scenario_id"]),
                meta["language"],
                str(meta["protocol"]),
                state.output.completion,
                str(state.model),
                _tokens(state),
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

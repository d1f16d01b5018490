"""One cell, end to end: ask the model, take the code, parse it, run it, score it.

Failures of the model or of its code become the cell's status; only setup problems raise
(:class:`~causalverify.errors.CausalVerifyError`). Anything else that goes wrong while a stage
handles the cell's model-controlled data (an answer nested past the parser's depth, text the
store cannot encode, a bug met only by odd output) becomes that cell's ``harness_error``, with
the stage and the exception in ``status_reason``: stored like any other cell, final on resume.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from causalverify.errors import CausalVerifyError, SandboxUnavailableError
from causalverify.estimators import canonical_inference
from causalverify.families import Family
from causalverify.models import CellContext, Model, ModelOptions, ask
from causalverify.records import (
    CanonicalInference,
    CellKey,
    CellRecord,
    CodeRecord,
    Message,
    ModelResponse,
    ScenarioBrief,
    TurnRecord,
    answer_status,
    execution_status,
    messages_sha256,
    storable,
)
from causalverify.runner.declare import Declared, check_declaration, declares, needs_declaration
from causalverify.sandbox.codeblocks import find_code_blocks
from causalverify.scoring import SCORING_STAGE, score_unread

if TYPE_CHECKING:
    from causalverify.runner.config import RunConfig
    from causalverify.runner.stages import Rendered, Stages
    from causalverify.scenarios.model import Scenario


@dataclass(frozen=True)
class CellTask:
    """A cell to compute, with its scenario, data file and rendered prompt."""

    key: CellKey
    scenario: Scenario
    data_path: Path
    prompt: Rendered
    protocol: str


@dataclass(frozen=True)
class Answered:
    """A cell whose model call returned (in repair mode: one turn of it).

    ``history`` holds the cell's earlier turns, ``feedback`` the message that asked for this one
    and ``request_sha256`` the hash of the whole request of this turn.
    """

    task: CellTask
    response: ModelResponse
    seconds: float
    history: tuple[TurnRecord, ...] = ()
    feedback: Message | None = None
    request_sha256: str = ""


@dataclass(frozen=True)
class Turned:
    """A turn of a repair-mode cell, executed and scored; ``record`` is the cell so far."""

    task: CellTask
    record: CellRecord


def conversation(
    task: CellTask, history: tuple[TurnRecord, ...] = (), feedback: Message | None = None
) -> list[Message]:
    """The messages of a turn: the cell's prompt, then each earlier turn's feedback and answer,
    then ``feedback`` (turn 1: the prompt alone)."""
    messages = list(task.prompt.messages)
    for turn in history:
        if turn.feedback is not None:
            messages.append(turn.feedback)
        content = turn.response.content if turn.response is not None else None
        messages.append(Message(role="assistant", content=content or ""))
    if feedback is not None:
        messages.append(feedback)
    return messages


def answer(
    task: CellTask,
    provider: Model,
    options: ModelOptions,
    history: tuple[TurnRecord, ...] = (),
    feedback: Message | None = None,
) -> Answered:
    """Ask ``provider`` for the cell's answer (transient failures come back as an error response).

    An API provider gets the messages and options only; an offline agent also the cell context,
    whose scenario is the answer-free brief. With ``history`` and ``feedback`` this is a later
    turn of a repair-mode conversation.
    """
    context = CellContext(
        scenario=ScenarioBrief.of(task.scenario),
        language=task.key.language,
        protocol=task.protocol,
        sample=task.key.sample,
        turn=len(history) + 1,
    )
    if options.seed is not None and task.key.sample:  # sample k asks with seed + k
        options = dataclasses.replace(options, seed=options.seed + task.key.sample)
    messages = conversation(task, history, feedback)
    start = time.perf_counter()
    response = ask(provider, messages, options=options, context=context)
    seconds = time.perf_counter() - start
    return Answered(task, response, seconds, history, feedback, messages_sha256(messages))


def execute_turn(
    answered: Answered, stages: Stages, config: RunConfig, judge: Model | None = None
) -> Turned:
    """:func:`execute` one turn of a repair-mode cell; the record lists every turn when there
    has been more than one (a one-turn cell is stored exactly as in single mode)."""
    record = execute(answered, stages, config, judge)
    turn = TurnRecord.of(
        record,
        turn=len(answered.history) + 1,
        feedback=answered.feedback,
        request_sha256=answered.request_sha256 or record.prompt_sha256,
    )
    turns = [*answered.history, turn]
    if len(turns) > 1:
        record = record.model_copy(update={"turns": turns})
    return Turned(answered.task, record)


#: characters of an exception's message kept in ``status_reason``
_REASON_CHARS = 1000


class _Progress:
    """How far :func:`execute` got with a cell: the stage running and the record so far."""

    def __init__(self) -> None:
        self.stage = "record"
        self.record: CellRecord | None = None


def execute(
    answered: Answered, stages: Stages, config: RunConfig, judge: Model | None = None
) -> CellRecord:
    """Extract, parse-check, run and score an answered cell; return its final record.

    An unexpected exception in a stage becomes the cell's ``harness_error`` (see the module
    docstring); setup errors are raised.

    Raises
    ------
    SandboxUnavailableError
        If the sandbox reports that it could not run at all (a setup problem, not a cell status).
    CausalVerifyError
        Any other setup problem a stage reports.
    """
    progress = _Progress()
    try:
        return _execute(answered, stages, config, judge, progress)
    except CausalVerifyError:
        raise
    except Exception as exc:  # the cell's failure, never the run's
        return _harness_failure(answered, config, progress, exc)


def _harness_failure(
    answered: Answered | None, config: RunConfig, progress: _Progress, exc: Exception
) -> CellRecord:
    """The cell as far as it got, with ``harness_error`` and the stage and exception."""
    reason = storable(f"{progress.stage}: {type(exc).__name__}: {exc}"[:_REASON_CHARS])
    record = progress.record
    if record is None:
        assert answered is not None  # a cell past its answer has a record
        timings = {"model": round(answered.seconds, 6)}
        record = _base_record(answered.task, config, answered.response, timings)
    try:
        scored = score_unread(
            record,
            status="harness_error",
            reason=reason,
            profile=config.profile,
            tolerance=config.tolerance,
            extractor=config.extractor,
        )
    except Exception:  # the layers cannot be derived: store the cell without
        scored = record.model_copy(update={"scores": None, "status_reason": reason})
    if progress.stage != SCORING_STAGE:
        # a stage before scoring failed: the status the layers give (no_code, exec_error, ...)
        # would say something the cell did not do
        scored = scored.model_copy(update={"status": "harness_error"})
    return scored


def _execute(
    answered: Answered,
    stages: Stages,
    config: RunConfig,
    judge: Model | None,
    progress: _Progress,
) -> CellRecord:
    task, response = answered.task, answered.response
    timings = {"model": round(answered.seconds, 6)}
    record = progress.record = _base_record(task, config, response, timings)
    answer = answer_status(response)
    if answer == "api_error":
        return record.model_copy(update={"status": "api_error"})
    if answer == "no_response":
        progress.stage = SCORING_STAGE
        return _score(record, stages, config)
    language = task.key.language
    progress.stage = "code block"
    block = stages.extract_code(response.content or "", language, policy=config.code_policy)
    if block is None:
        code = CodeRecord(language=language, code=None)
        progress.stage = SCORING_STAGE
        return _score(record.model_copy(update={"code": code, "status": "no_code"}), stages, config)
    start = time.perf_counter()
    progress.stage = "parse check"
    check = stages.check_parses(block.code, language, stages.sandbox)
    timings["parse"] = round(time.perf_counter() - start, 6)
    blocks = sum(b.language == language for b in find_code_blocks(response.content or ""))
    code = CodeRecord(
        language=language,
        code=block.code,
        block_index=block.index,
        blocks=blocks,
        several_blocks=blocks > 1,
        parses=check.ok,
        parse_error=check.error,
    )
    progress.record = record.model_copy(update={"code": code})
    if not check.ok:
        update = {"code": code, "status": "parse_error", "timings": timings}
        progress.stage = SCORING_STAGE
        return _score(record.model_copy(update=update), stages, config)
    start = time.perf_counter()
    progress.stage = "execution"
    result = stages.sandbox.run(
        block.code, language, {task.scenario.data_file: task.data_path}, config.limits
    )
    timings["execute"] = round(time.perf_counter() - start, 6)
    if result.status == "sandbox_unavailable":
        raise SandboxUnavailableError(f"the sandbox could not run a script: {result.detail}")
    executed = record.model_copy(
        update={
            "code": code,
            "execution": result,
            # provisional when it ran: scoring decides between no_estimate, wrong and correct
            "status": execution_status(result) or "no_estimate",
            "timings": timings,
        }
    )
    progress.record = executed
    if config.judge_all:
        progress.stage = "judge"
        executed = _judge(executed, stages, judge)
        progress.record = executed
    progress.stage = SCORING_STAGE
    scored = _score(executed, stages, config)
    if declares(config, task.key.model) and needs_declaration(scored):
        return scored  # the declaration is asked first; the judge only if it does not settle
    return _resolve_undecided(scored, stages, config, judge, progress)


def settle_declaration(
    declared: Declared, stages: Stages, config: RunConfig, judge: Model | None = None
) -> Turned:
    """Check a cell's declaration, store it with the cell and rescore the cell with it (an
    accepted token is the extractor's ``declared``); a cell still undecided then goes to the
    judge when one is configured. A failure here is the cell's ``harness_error``."""
    progress = _Progress()
    progress.stage = "declaration"
    progress.record = declared.record
    try:
        declaration = check_declaration(declared)
        timings = {**declared.record.timings, "declare": round(declared.seconds, 6)}
        record = declared.record.model_copy(update={"declaration": declaration, "timings": timings})
        progress.record = record
        progress.stage = SCORING_STAGE
        record = _score(record, stages, config)
        record = _resolve_undecided(record, stages, config, judge, progress)
    except CausalVerifyError:
        raise
    except Exception as exc:  # the cell's failure, never the run's
        record = _harness_failure(None, config, progress, exc)
    return Turned(declared.task, record)


def _resolve_undecided(
    record: CellRecord,
    stages: Stages,
    config: RunConfig,
    judge: Model | None,
    progress: _Progress,
) -> CellRecord:
    """Ask the judge about a cell whose deterministic extraction is undecided, and rescore it
    (its reading resolves the cell); every other cell is returned as it is."""
    undecided = record.extraction is not None and record.extraction.undecided
    if judge is None or config.judge_all or not undecided:
        return record
    progress.stage = "judge"
    judged = _judge(record, stages, judge)
    progress.record = judged
    progress.stage = SCORING_STAGE
    return _score(judged, stages, config)


def _base_record(
    task: CellTask, config: RunConfig, response: ModelResponse, timings: dict[str, float]
) -> CellRecord:
    scenario = task.scenario
    return CellRecord(
        key=task.key,
        family=scenario.family,
        difficulty=scenario.difficulty,
        beta=scenario.beta,
        canonical=scenario.canonical.estimate,
        conversions=dict(scenario.conversions),
        inference=_inference(task.data_path, scenario.family, scenario.csv_sha256),
        protocol=config.protocol,
        prompt=list(task.prompt.messages),
        prompt_sha256=task.prompt.sha256,
        response=response,
        status="no_response",
        timings=timings,
    )


@functools.lru_cache(maxsize=256)
def _inference(path: Path, family: Family, sha256: str) -> CanonicalInference | None:
    """The canonical inference of a scenario's data (once per file; None if it cannot be had:
    the layer it feeds is then left out, the cell is not failed)."""
    import pandas as pd

    del sha256  # part of the cache key only
    try:
        return canonical_inference(pd.read_csv(path), family)
    except (CausalVerifyError, OSError, ValueError, KeyError):
        return None


def _judge(record: CellRecord, stages: Stages, judge: Model | None) -> CellRecord:
    """Ask the judge for the estimate when a judge is configured."""
    if judge is None or stages.judge_extract is None:
        return record
    if record.execution is None or record.code is None:
        return record
    value = stages.judge_extract(
        judge,
        code=record.code.code or "",
        stdout=record.execution.stdout,
        family=record.family,
    )
    return record.model_copy(update={"judge": value})


def _score(record: CellRecord, stages: Stages, config: RunConfig) -> CellRecord:
    start = time.perf_counter()
    scored = stages.rescore(
        record, profile=config.profile, tolerance=config.tolerance, extractor=config.extractor
    )
    timings = dict(scored.timings)
    timings["score"] = round(time.perf_counter() - start, 6)
    return scored.model_copy(update={"timings": timings})

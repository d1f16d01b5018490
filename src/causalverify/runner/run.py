"""Orchestration of a run: plan the cells, skip finished ones, answer, execute, store.

Model calls go through the dispatch engine (:mod:`causalverify.runner.engine`, at most
``config.access.concurrency`` at once); executions run on the engine's second stage
(``workers`` threads, each waiting on one sandboxed execution, local or on Dask workers). The
main thread is the only writer of the store: a cell is written in one transaction the moment it
is finished, so a crash loses at most the cells in flight, and a rerun with the same settings
continues where it stopped; which cells are done and skipped is the engine's
:class:`~causalverify.runner.engine.Ledger`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causalverify.errors import StoreError
from causalverify.models import Model
from causalverify.records import CellKey, CellRecord, storable
from causalverify.runner.cell import (
    Answered,
    CellTask,
    Turned,
    answer,
    execute,
    execute_turn,
    settle_declaration,
)
from causalverify.runner.config import RunConfig
from causalverify.runner.declare import Declared, ask_declaration, declares, needs_declaration
from causalverify.runner.engine import Engine, Job, Ledger, Stage, holds_answers, is_pending
from causalverify.runner.meta import (
    build_meta,
    environment_changes,
    merge_meta,
    read_meta,
    recorded_environment,
)
from causalverify.runner.repair import ends_conversation, feedback
from causalverify.runner.stages import Rendered, Stages, close_stages, default_stages
from causalverify.runner.suite import balanced_subset
from causalverify.runner.summary import ProgressCallback, RunSummary, summarize_models
from causalverify.sandbox.dask import DaskSandbox
from causalverify.scenarios import load_suite
from causalverify.store.sqlite import STORE_FILE, RunStore, writer_lock

if TYPE_CHECKING:
    from causalverify.scenarios.model import Scenario


def run_benchmark(
    config: RunConfig,
    *,
    progress: ProgressCallback | None = None,
    stages: Stages | None = None,
    suite: Any | None = None,
) -> RunSummary:
    """Run (or resume) a benchmark and return its summary.

    Parameters
    ----------
    config
        What to run.
    progress
        Called with a :class:`ProgressEvent` at the start, after every cell and at the end.
    stages
        The collaborators; :func:`~causalverify.runner.stages.default_stages` by default.
    suite
        An already loaded suite (``load_suite(config.suite_dir)`` by default).

    Raises
    ------
    StoreError
        If the run folder belongs to a run with an incompatible configuration.
    SetupError
        If a provider, the sandbox or the suite cannot be used.
    """
    started = time.perf_counter()
    if suite is None:
        suite = load_suite(config.suite_dir)
    if stages is not None:
        return _run(config, progress, stages, suite, started)
    stages = default_stages(config)
    # a Dask cluster this run started, or joined, and the scoring processes are let go when the
    # run ends
    own = stages.sandbox if isinstance(stages.sandbox, DaskSandbox) else None
    with contextlib.ExitStack() as stack:
        stack.callback(close_stages, stages)
        if own is not None:
            stack.enter_context(contextlib.closing(own))
        return _run(config, progress, stages, suite, started)


def _run(
    config: RunConfig,
    progress: ProgressCallback | None,
    stages: Stages,
    suite: Any,
    started: float,
) -> RunSummary:
    scenarios = balanced_subset(suite.scenarios, config.limit)
    keys = plan_cells(scenarios, config)
    stored = _stored_statuses(config.out_dir)
    todo = [k for k in keys if is_pending(stored, k.as_tuple())]
    # Models are made (specs, keys checked) before the store exists, so a typo in --models or a
    # missing key leaves no run folder behind; the engine closes them whatever happens.
    providers = {spec: stages.make_provider(spec) for spec in dict.fromkeys(k.model for k in todo)}
    engine = Engine(
        stages.make_provider,
        concurrency=config.access.concurrency,
        models=providers,
        name="cv-model",
    )
    with engine, writer_lock(config.out_dir), RunStore.open(config.out_dir, create=True) as store:
        # read again under the lock: a writer that finished meanwhile is not redone
        stored = {k: str(v) for k, v in store.statuses().items()}
        stored_meta = store.meta()
        answered = holds_answers(stored)
        stages, changes = _pin_environment(stages, stored_meta if answered else {})
        recorded = read_meta(stored_meta, config.out_dir)
        meta = build_meta(
            config,
            stages,
            suite.scenarios,
            suite.root,
            suite_name=getattr(suite, "meta", {}).get("suite"),
            # recorded once the environment changed, and kept from then on
            environment_changes=(
                changes if changes or recorded.environment_changes is not None else None
            ),
        )
        try:
            meta = merge_meta(recorded, meta, store.held_values())
        except StoreError:
            if answered:
                raise
            # no cell has an answer: nothing to protect, the corrected settings start afresh
            store.delete_cells()
            stored = {}
        store.set_meta(meta.stored())
        by_tuple = {k.as_tuple(): k for k in keys}
        ledger = Ledger(list(by_tuple), stored, task="cells", progress=progress)
        todo = [by_tuple[k] for k in ledger.todo]
        tasks = _tasks(todo, scenarios, suite, stages, config)
        _Dispatcher(config, stages, store, ledger).go(tasks, engine)
        records = [r for r in store.iter_cells() if r.key.as_tuple() in by_tuple]
    tally = ledger.tally
    return RunSummary(
        run_dir=config.out_dir,
        total=len(keys),
        skipped=ledger.skipped,
        computed=ledger.computed,
        counts=dict(sorted(Counter(r.status for r in records).items())),
        models=summarize_models(records, config.models),
        wall_seconds=time.perf_counter() - started,
        requests=tally.requests,
        cost_usd=tally.cost_usd,
        input_tokens=tally.input_tokens,
        output_tokens=tally.output_tokens,
        environment_changes=tuple(changes),
        failed_requests=tally.failed,
    )


def _pin_environment(stages: Stages, stored_meta: dict[str, Any]) -> tuple[Stages, list[str]]:
    """The stages with the environment manifest the run recorded when it started (so a resumed
    run renders the prompts its stored cells were asked with), and what has changed since."""
    recorded = recorded_environment(stored_meta)
    if recorded is None or stages.manifest is None:
        return stages, []
    changes = environment_changes(recorded, stages.manifest)
    return dataclasses.replace(stages, manifest=recorded), changes


def _stored_statuses(run_dir: Path) -> dict[tuple[str, str, str, int], str]:
    """The statuses stored in ``run_dir`` (empty when it has no store yet; nothing is created)."""
    if not (run_dir / STORE_FILE).exists():
        return {}
    with RunStore.open(run_dir) as store:
        return {k: str(v) for k, v in store.statuses().items()}


def plan_cells(scenarios: Sequence[Scenario], config: RunConfig) -> list[CellKey]:
    """Every cell of the run, scenario-major (so a scenario's data is needed only briefly)."""
    return [
        CellKey(scenario_id=s.id, model=model, language=language, sample=sample)
        for s in scenarios
        for model in config.models
        for language in config.languages
        for sample in range(config.samples)
    ]


def _tasks(
    keys: Sequence[CellKey],
    scenarios: Sequence[Scenario],
    suite: Any,
    stages: Stages,
    config: RunConfig,
) -> Iterator[CellTask]:
    """Lazily render prompts (once per scenario and language) as cells are dispatched."""
    by_id = {s.id: s for s in scenarios}
    prompts: dict[tuple[str, str], Rendered] = {}
    for key in keys:
        scenario = by_id[key.scenario_id]
        if (scenario.id, key.language) not in prompts:
            prompts.clear()  # keys are scenario-major: earlier prompts are no longer needed
            data = suite.read_data(scenario)
            for language in config.languages:
                prompts[(scenario.id, language)] = stages.render(
                    scenario,
                    data,
                    language=language,
                    protocol=config.protocol,
                    manifest=stages.manifest,
                )
        yield CellTask(
            key=key,
            scenario=scenario,
            data_path=suite.data_path(scenario),
            prompt=prompts[(scenario.id, key.language)],
            protocol=config.protocol,
        )


class _Dispatcher:
    """Feeds a run's cells to the engine and writes each one the moment it is finished."""

    def __init__(
        self, config: RunConfig, stages: Stages, store: RunStore, ledger: Ledger[Any]
    ) -> None:
        self.config, self.stages, self.store, self.ledger = config, stages, store, ledger

    def go(self, tasks: Iterator[CellTask], engine: Engine) -> None:
        judge = self._judge_provider(engine) if self.ledger.todo else None
        options = self.config.access.options
        turns = self.config.turns
        stages, config = self.stages, self.config

        def after(result: Answered | Turned | Declared) -> Stage[Any] | Job[Any] | None:
            if isinstance(result, Answered):
                if turns == 1:
                    return Stage(functools.partial(_executed, result, stages, config, judge))
                return Stage(functools.partial(execute_turn, result, stages, config, judge))
            if isinstance(result, Declared):
                return Stage(functools.partial(settle_declaration, result, stages, config, judge))
            record = result.record
            if record.declaration is not None:
                return None
            states = record.turn_states()
            if not ends_conversation(states, turns):
                # repair mode: ask again with the execution feedback
                call = functools.partial(
                    answer,
                    result.task,
                    options=options,
                    history=tuple(states),
                    feedback=feedback(record, record.key.language),
                )
                return Job(record.key.model, call)
            if declares(config, record.key.model) and needs_declaration(record):
                # one more message in the same conversation: which printed number is it
                ask = functools.partial(ask_declaration, result.task, record, options=options)
                return Job(record.key.model, ask)
            return None

        jobs = (Job(t.key.model, functools.partial(answer, t, options=options)) for t in tasks)
        engine.run(
            jobs,
            self._finish,
            then=after,
            backlog=2 * config.workers,
            stage_workers=config.workers if self.ledger.todo else 0,
            ledger=self.ledger,
        )

    def _finish(self, result: CellRecord | Turned) -> None:
        record = result.record if isinstance(result, Turned) else result
        record = self._put(record)
        responses = [turn.response for turn in record.turn_states()]
        if record.declaration is not None:
            responses.append(record.declaration.response)
        self.ledger.finished(record.status, record.key.model, responses, record)

    def _put(self, record: CellRecord) -> CellRecord:
        """Store ``record``; a record that cannot be serialised is stored without its
        model-controlled parts, as ``harness_error`` (a database error still stops the run)."""
        try:
            self.store.put_cell(record)
        except sqlite3.Error:
            raise
        except Exception as exc:  # the cell's failure, never the run's
            record = unstorable(record, exc)
            self.store.put_cell(record)
        return record

    def _judge_provider(self, engine: Engine) -> Model | None:
        # with the deterministic extractor the judge reads only the undecided cells
        if self.config.judge_model is None:
            return None
        return engine.model(self.config.judge_model)


def _executed(answered: Answered, stages: Stages, config: RunConfig, judge: Model | None) -> Turned:
    """:func:`execute` a single-mode cell, keeping its task (a declaration may follow)."""
    return Turned(answered.task, execute(answered, stages, config, judge))


def unstorable(record: CellRecord, exc: Exception) -> CellRecord:
    """``record`` without what came from the model or its code (answer, code, execution,
    extraction, judge, turns), as ``harness_error`` with the reason it could not be stored."""
    reason = storable(f"store: {type(exc).__name__}: {exc}"[:1000])
    dropped = ("response", "code", "execution", "extraction", "judge", "declaration")
    return record.model_copy(
        update={
            **dict.fromkeys(dropped),
            "turns": [],
            "status": "harness_error",
            "status_reason": reason,
        }
    )

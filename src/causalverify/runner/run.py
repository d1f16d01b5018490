"""Orchestration of a run: plan the cells, skip finished ones, answer, execute, store.

Model calls run on their own bounded thread pool (``model_concurrency``); executions go through
an :class:`~causalverify.runner.executor.Executor` (``workers``). The main thread is the only
writer of the store: a cell is written in one transaction the moment it is finished, so a crash
loses at most the cells in flight, and a rerun with the same settings continues where it stopped.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causalverify.models import is_offline
from causalverify.records import CellKey, CellRecord
from causalverify.runner.cell import Answered, CellTask, answer, execute
from causalverify.runner.config import RunConfig
from causalverify.runner.executor import Executor, LocalPoolExecutor
from causalverify.runner.meta import build_meta, merge_meta
from causalverify.runner.stages import Rendered, Stages, default_stages
from causalverify.runner.suite import balanced_subset
from causalverify.runner.summary import (
    ProgressCallback,
    ProgressEvent,
    RunSummary,
    summarize_models,
)
from causalverify.store.sqlite import STORE_FILE, RunStore, writer_lock

if TYPE_CHECKING:
    from causalverify.models.base import Model, ModelOptions
    from causalverify.scenarios.model import Scenario

#: statuses a rerun computes again (everything else is final)
RETRY_STATUSES: frozenset[str] = frozenset({"api_error"})
#: provider kinds that answer without a model request


def run_benchmark(
    config: RunConfig,
    *,
    progress: ProgressCallback | None = None,
    stages: Stages | None = None,
    executor: Executor | None = None,
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
    executor
        Where executions run; a :class:`LocalPoolExecutor` with ``config.workers`` by default.
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
        from causalverify.scenarios import load_suite

        suite = load_suite(config.suite_dir)
    stages = stages if stages is not None else default_stages(config)
    scenarios = balanced_subset(suite.scenarios, config.limit)
    keys = plan_cells(scenarios, config)
    stored = _stored_statuses(config.out_dir)
    todo = [k for k in keys if stored.get(k.as_tuple(), "api_error") in RETRY_STATUSES]
    # Providers are made (specs, keys checked) before the store exists, so a typo in --models
    # or a missing key leaves no run folder behind.
    providers = {spec: stages.make_provider(spec) for spec in dict.fromkeys(k.model for k in todo)}
    try:
        with writer_lock(config.out_dir), RunStore.open(config.out_dir, create=True) as store:
            meta = build_meta(config, stages, suite.scenarios, suite.root)
            store.set_meta(merge_meta(store.meta(), meta, store.held_values()))
            # read again under the lock: a writer that finished meanwhile is not redone
            stored = {k: str(v) for k, v in store.statuses().items()}
            todo = [k for k in todo if stored.get(k.as_tuple(), "api_error") in RETRY_STATUSES]
            pending = {k.as_tuple() for k in todo}
            skipped: Counter[str] = Counter(
                str(stored[k.as_tuple()]) for k in keys if k.as_tuple() not in pending
            )
            tasks = _tasks(todo, scenarios, suite, stages, config)
            run = _Dispatcher(config, stages, store, progress, total=len(keys), skipped=skipped)
            run.go(tasks, len(todo), executor, providers)
            wanted = {k.as_tuple() for k in keys}
            records = [r for r in store.iter_cells() if r.key.as_tuple() in wanted]
    finally:
        for provider in providers.values():
            _close(provider)
    return RunSummary(
        run_dir=config.out_dir,
        total=len(keys),
        skipped=sum(skipped.values()),
        computed=run.computed,
        counts=dict(sorted(Counter(r.status for r in records).items())),
        models=summarize_models(records, config.models),
        wall_seconds=time.perf_counter() - started,
        requests=run.requests,
        cost_usd=run.cost_usd,
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
    )


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
    """Keeps a bounded number of cells in flight and writes each one as it finishes."""

    def __init__(
        self,
        config: RunConfig,
        stages: Stages,
        store: RunStore,
        progress: ProgressCallback | None,
        *,
        total: int,
        skipped: Counter[str],
    ) -> None:
        self.config, self.stages, self.store, self.progress = config, stages, store, progress
        self.total = total
        self.skipped = sum(skipped.values())
        self.counts: Counter[str] = Counter(skipped)
        self.computed = self.requests = self.input_tokens = self.output_tokens = 0
        self.cost_usd = 0.0

    def go(
        self,
        tasks: Iterator[CellTask],
        n_tasks: int,
        executor: Executor | None,
        providers: dict[str, Model],
    ) -> None:
        self._emit("start")
        if n_tasks:
            judge = self._judge_provider()
            own = executor is None
            pool = executor if executor is not None else LocalPoolExecutor(self.config.workers)
            models = ThreadPoolExecutor(self.config.model_concurrency, "cv-model")
            try:
                self._loop(tasks, providers, judge, pool, models)
            finally:
                models.shutdown(wait=True, cancel_futures=True)
                if own:
                    pool.shutdown(wait=True, cancel_futures=True)
        self._emit("done")

    def _loop(
        self,
        tasks: Iterator[CellTask],
        providers: dict[str, Model],
        judge: Model | None,
        pool: Executor,
        models: ThreadPoolExecutor,
    ) -> None:
        options = _model_options(self.config)
        cap = self.config.model_concurrency + 2 * self.config.workers
        in_flight: set[Future[Any]] = set()
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < cap:
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                    break
                in_flight.add(models.submit(answer, task, providers[task.key.model], options))
            if not in_flight:
                return
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                in_flight.discard(future)
                result = future.result()  # a setup error stops the run; stored cells are kept
                if isinstance(result, Answered):
                    in_flight.add(pool.submit(execute, result, self.stages, self.config, judge))
                else:
                    self._finish(result)

    def _finish(self, record: CellRecord) -> None:
        self.store.put_cell(record)
        self.computed += 1
        self.counts[record.status] += 1
        response = record.response
        if response is not None and not response.cached and response.error is None:
            self.requests += int(not is_offline(record.key.model))
            self.cost_usd += response.cost_usd
            self.input_tokens += response.input_tokens
            self.output_tokens += response.output_tokens
        self._emit("cell", record)

    def _judge_provider(self) -> Model | None:
        if self.config.extractor == "deterministic" or self.config.judge_model is None:
            return None
        return self.stages.make_provider(self.config.judge_model)

    def _emit(self, kind: Any, record: CellRecord | None = None) -> None:
        if self.progress is not None:
            self.progress(
                ProgressEvent(
                    kind=kind,
                    total=self.total,
                    done=self.skipped + self.computed,
                    skipped=self.skipped,
                    counts=dict(self.counts),
                    record=record,
                )
            )


def _model_options(config: RunConfig) -> ModelOptions:
    from causalverify.models.base import ModelOptions

    return ModelOptions(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        reasoning_effort=config.reasoning_effort,
        timeout_seconds=config.request_timeout,
        seed=config.seed,
    )


def _close(provider: Model) -> None:
    closer = getattr(provider, "close", None)
    if callable(closer):
        closer()

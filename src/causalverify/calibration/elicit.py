"""Elicit confidences for the stored answers of a run: cached, resumable and concurrent.

Every stored cell with a non-empty Experiment B answer is shown to the model that wrote it (the
same provider spec) with :func:`~causalverify.calibration.prompts.calibration_messages`. Calls go
through the dispatch engine; the calling thread is the only writer of the store and writes each
row in its own transaction as soon as it is answered, so an interrupted elicitation continues
where it stopped. Which rows are done is the engine's
:class:`~causalverify.runner.engine.Ledger`: rows with status ``api_error`` are asked again on
the next run; all others are final.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causalverify.calibration.parse import parse_confidences
from causalverify.calibration.prompts import calibration_messages, context_protocol
from causalverify.errors import SetupError, SuiteError
from causalverify.models import CellContext, Model, ModelAccess, ModelOptions, ask
from causalverify.records import (
    CellKey,
    CellRecord,
    Message,
    ModelResponse,
    RunMeta,
    ScenarioBrief,
    answer_status,
    messages_sha256,
)
from causalverify.runner.engine import Engine, Job, Ledger, ProgressEvent
from causalverify.runner.meta import suite_fingerprint
from causalverify.runner.suite import balanced_subset
from causalverify.scenarios import load_suite
from causalverify.store.calibration import CONFIDENCE_TYPES, CalibrationProtocol, CalibrationRecord
from causalverify.store.sqlite import RunStore, writer_lock

if TYPE_CHECKING:
    from causalverify.scenarios.model import Scenario


@dataclass(frozen=True, kw_only=True)
class CalibrationConfig:
    """What to elicit.

    Parameters
    ----------
    run_dir
        A run folder with a run store.
    models
        Model specs to ask (each is shown its own answers); ``None``: every model of the run
        except ``replay/…`` ones, which hold answers only to Experiment B prompts.
    protocol
        The calibration prompt, ``"default"`` or ``"paper"``.
    access
        How the models are reached (:class:`~causalverify.models.ModelAccess`); a ``base_url``
        of ``None`` uses the run's. The generation options are always the run's (temperature,
        max tokens, reasoning effort), whatever ``access.options`` holds.
    suite_dir
        The run's suite folder, when it has moved since the run (default: the recorded path).
    command_line
        Recorded in the run metadata.
    limit
        Only the answers to this many scenarios, spread evenly over the design families as
        ``run --limit`` spreads them.
    """

    run_dir: Path
    models: tuple[str, ...] | None = None
    protocol: CalibrationProtocol = "default"
    access: ModelAccess = field(default_factory=ModelAccess)
    suite_dir: Path | None = None
    command_line: tuple[str, ...] = ()
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if self.protocol not in ("default", "paper"):
            raise ValueError(f"protocol must be 'default' or 'paper', got {self.protocol!r}")


#: the calibration arm's progress reports are the engine's (``task="confidences"``)
CalibrationProgress = ProgressEvent


@dataclass(frozen=True)
class CalibrationSummary:
    """What an elicitation did."""

    run_dir: Path
    protocol: str
    models: tuple[str, ...]
    total: int
    skipped: int
    computed: int
    not_eligible: int
    requests: int
    cost_usd: float
    counts: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0


@dataclass(frozen=True)
class _Task:
    cell: CellRecord
    scenario: Scenario
    messages: list[Message]


def record_from_response(
    key: CellKey,
    protocol: CalibrationProtocol,
    messages: Sequence[Message],
    response: ModelResponse,
) -> CalibrationRecord:
    """Turn a provider response into a calibration record (a failure is a status, not an error)."""
    base: dict[str, Any] = {
        "key": key,
        "protocol": protocol,
        "prompt": list(messages),
        "prompt_sha256": messages_sha256(messages),
        "response": response,
    }
    answer = answer_status(response)
    if answer == "api_error":
        reason = f"api error: {response.error}"
        return CalibrationRecord(
            **base,
            confidences=dict.fromkeys(CONFIDENCE_TYPES),
            missing=dict.fromkeys(CONFIDENCE_TYPES, reason),
            status="api_error",
        )
    if answer == "no_response":
        return CalibrationRecord(
            **base,
            confidences=dict.fromkeys(CONFIDENCE_TYPES),
            missing=dict.fromkeys(CONFIDENCE_TYPES, "no response: empty answer"),
            status="no_response",
        )
    parsed = parse_confidences(response.content)
    return CalibrationRecord(
        **base,
        confidences=parsed.confidences,
        missing=parsed.missing,
        scale=parsed.scale,
        status=parsed.status,
    )


def elicit(
    task: _Task, provider: Model, options: ModelOptions, protocol: CalibrationProtocol
) -> CalibrationRecord:
    """Ask ``provider`` for its confidences in one stored answer."""
    key = task.cell.key
    context = CellContext(
        scenario=ScenarioBrief.of(task.scenario),
        language=key.language,
        protocol=context_protocol(protocol),
        sample=key.sample,
    )
    response = ask(provider, task.messages, options=options, context=context)
    return record_from_response(key, protocol, task.messages, response)


def select_models(run_models: Sequence[str], wanted: Sequence[str] | None) -> tuple[str, ...]:
    """The models to ask: ``wanted`` (each must be in the run) or the run's non-replay models.

    Raises
    ------
    SetupError
        If a wanted model is not in the run, or is a ``replay/…`` model.
    """
    if wanted is None:
        return tuple(m for m in run_models if not m.startswith("replay/"))
    unknown = [m for m in wanted if m not in run_models]
    if unknown:
        raise SetupError(
            f"{', '.join(unknown)} did not answer in this run (its models: "
            f"{', '.join(run_models)}); each model is asked about its own answers"
        )
    replay = [m for m in wanted if m.startswith("replay/")]
    if replay:
        raise SetupError(
            f"{', '.join(replay)} replays stored Experiment B answers and cannot state "
            "confidences; leave it out of --models"
        )
    return tuple(wanted)


def _load_suite(meta: RunMeta, override: Path | None) -> Any:
    folder = override if override is not None else Path(meta.suite_path or "")
    if not (folder / "suite.json").is_file():
        raise SuiteError(f"the run's suite is not at {folder}; pass its folder with --suite")
    suite = load_suite(folder)
    if meta.suite_fingerprint not in (None, suite_fingerprint(suite.scenarios)):
        raise SuiteError(
            f"the suite at {folder} is not the one this run used (fingerprint differs)"
        )
    return suite


def _options(meta: RunMeta) -> ModelOptions:
    stored = meta.model_options
    return ModelOptions(
        temperature=stored.temperature,
        max_tokens=int(stored.max_tokens or 8192),
        reasoning_effort=stored.reasoning_effort,
    )


def run_access(config: CalibrationConfig, meta: RunMeta) -> ModelAccess:
    """How the run's models are reached: the config's access, with the run's server unless the
    config names another, and the run's generation options."""
    access = config.access
    base_url = access.base_url if access.base_url is not None else meta.base_url
    return access.replace(base_url=base_url, options=_options(meta))


def _tasks(
    cells: Sequence[CellRecord], suite: Any, protocol: CalibrationProtocol, tolerance: float
) -> Iterator[_Task]:
    by_id = {s.id: s for s in suite.scenarios}
    for cell in cells:
        scenario = by_id.get(cell.key.scenario_id)
        if scenario is None:
            raise SuiteError(f"scenario {cell.key.scenario_id} of the run is not in the suite")
        messages = calibration_messages(
            title=scenario.title,
            research_question=scenario.research_question,
            data_description=scenario.data_description,
            data_file=scenario.data_file,
            answer=(cell.response.content or "") if cell.response is not None else "",
            protocol=protocol,
            tolerance=tolerance,
        )
        yield _Task(cell, scenario, messages)


def calibrate_run(
    config: CalibrationConfig,
    *,
    make_provider: Callable[[str], Model] | None = None,
    progress: Callable[[CalibrationProgress], None] | None = None,
) -> CalibrationSummary:
    """Elicit (or resume eliciting) confidences for a stored run.

    Parameters
    ----------
    config
        What to elicit.
    make_provider
        Creates a provider from a spec (default: :func:`causalverify.models.get_provider` with
        the response cache, and the run's base URL unless the config names one).
    progress
        Called with a :class:`CalibrationProgress` at the start, after every row and at the end.

    Raises
    ------
    StoreError
        If ``config.run_dir`` holds no run store.
    SetupError
        If a model cannot be asked (not in the run, a replay model, a missing API key).
    SuiteError
        If the run's suite cannot be found.
    """
    started = time.perf_counter()
    with RunStore.open(config.run_dir) as store, writer_lock(config.run_dir):
        meta = store.run_meta()
        models = select_models(list(meta.models), config.models)
        cells = [c for c in store.iter_cells() if c.key.model in models]
        if config.limit is not None:
            scenarios = _load_suite(meta, config.suite_dir).scenarios
            kept = {s.id for s in balanced_subset(scenarios, config.limit)}
            cells = [c for c in cells if c.key.scenario_id in kept]
        eligible = [
            c for c in cells if c.response is not None and (c.response.content or "").strip()
        ]
        by_key = {c.key.as_tuple(): c for c in eligible}
        stored = store.calibration_statuses(config.protocol)
        ledger = Ledger(list(by_key), stored, task="confidences", progress=progress)
        store.set_meta({"calibration": _meta_entry(meta, config, models)})
        access = run_access(config, meta)
        tasks: Iterator[_Task] = iter(())
        if ledger.todo:
            suite = _load_suite(meta, config.suite_dir)
            todo = [by_key[k] for k in ledger.todo]
            tasks = _tasks(todo, suite, config.protocol, meta.scoring.tolerance)
        factory = make_provider or (access.factory() if ledger.todo else None)
        _elicit_all(store, ledger, tasks, factory, access, config.protocol)
    return CalibrationSummary(
        run_dir=config.run_dir,
        protocol=config.protocol,
        models=models,
        total=len(eligible),
        skipped=ledger.skipped,
        computed=ledger.computed,
        not_eligible=len(cells) - len(eligible),
        requests=ledger.tally.requests,
        cost_usd=ledger.tally.cost_usd,
        counts=dict(sorted(ledger.counts.items())),
        wall_seconds=time.perf_counter() - started,
    )


def _meta_entry(meta: RunMeta, config: CalibrationConfig, models: Sequence[str]) -> dict[str, Any]:
    entry = dict(meta.calibration or {})
    previous = entry.get(config.protocol, {}).get("models", [])
    entry[config.protocol] = {
        "models": sorted(set(previous) | set(models)),
        "command_line": list(config.command_line),
    }
    return entry


def _elicit_all(
    store: RunStore,
    ledger: Ledger[Any],
    tasks: Iterator[_Task],
    factory: Callable[[str], Model] | None,
    access: ModelAccess,
    protocol: CalibrationProtocol,
) -> None:
    """Ask every task through the engine and store each row as it arrives."""

    def finish(record: CalibrationRecord) -> None:
        store.put_calibration(record)
        ledger.finished(record.status, record.key.model, [record.response], record)

    call = functools.partial(elicit, options=access.options, protocol=protocol)
    jobs = (Job(t.cell.key.model, functools.partial(call, t)) for t in tasks)
    with Engine(factory, concurrency=access.concurrency, name="cv-calibrate") as engine:
        engine.run(jobs, finish, ledger=ledger)

"""The one dispatch engine: every command that asks models (a run, the calibration arm,
Experiment A and its RID ablation) goes through :class:`Engine`.

What it owns:

- **concurrency**: at most ``concurrency`` model calls run at once, on the engine's own thread
  pool, and the queue ahead of them stays bounded, so jobs are made only as they are needed;
- **a second stage**: a finished call may hand its result to a :class:`Stage` (a run executes
  the answer's code in the sandbox there), which runs on a second pool of ``stage_workers``
  threads, and the engine waits for that too;
- **one writer**: every finished job is passed to ``finish`` on the calling thread, so a store
  written there is written by one thread, one job at a time, as soon as the job is done;
- **model lifetime**: a model is made the first time a job names it (or handed in ready made)
  and closed when the engine stops, whatever stopped it;
- **resume and progress** (:class:`Ledger`): which keys of a task are done (stored with a final
  status) and skipped, which are asked now, whether a store holds any answer (a store without
  one takes changed settings as a new one would), the count of every status, the requests,
  tokens and cost of the answers paid for (:class:`Tally`), and the :class:`ProgressEvent` s;
  :data:`RETRY_STATUSES` is the one list of stored statuses that are asked again.

Retries, rate limits and the response cache live in the models themselves
(:mod:`causalverify.models`, reached through one
:class:`~causalverify.models.ModelAccess`), so they apply wherever a model is asked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from causalverify.models import Model, is_offline
from causalverify.records import ModelResponse, answer_status

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

#: stored statuses that a resumed command asks again (the model never answered); every other
#: status is final
RETRY_STATUSES: frozenset[str] = frozenset({"api_error"})


def is_pending(stored: Mapping[Any, str], key: Any) -> bool:
    """Whether the job ``key`` must be asked: never stored, or stored with a retry status."""
    return stored.get(key, "api_error") in RETRY_STATUSES


@dataclass
class Tally:
    """Requests, tokens and cost of the answers a command paid for (cached and failed answers
    cost nothing; offline agents make no requests)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    #: calls that still failed after their retries (``api_error``: no answer, nothing paid)
    failed: int = 0

    def add(self, spec: str, response: ModelResponse | None) -> None:
        """Count one answer of the model ``spec``."""
        if response is None or response.cached:
            return
        if response.error is not None:
            self.failed += int(response.content is None and not is_offline(spec))
            return
        self.requests += int(not is_offline(spec))
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens
        self.cost_usd += response.cost_usd


@dataclass(frozen=True)
class Job(Generic[T]):
    """One model call: ``call(model)`` runs on the engine's pool with the model ``spec`` names."""

    spec: str
    call: Callable[[Model], T]


@dataclass(frozen=True)
class Stage(Generic[T]):
    """Work that follows a model call off the model pool: ``call()`` runs on the engine's second
    pool (``stage_workers`` threads; a run executes an answer's code in the sandbox there)."""

    call: Callable[[], T]


@dataclass(frozen=True, kw_only=True)
class ProgressEvent:
    """A step of work done through the engine, the one progress report of a run, the
    calibration arm and Experiment A: ``start`` once, ``cell`` per finished job (a run's cell, a
    calibration row, an Experiment A answer), ``done`` once.

    ``total`` counts every job of the task, ``done`` those finished (including the ones stored
    before, counted in ``skipped``); ``counts`` is per status; ``task`` names the work
    (``"cells"``, ``"confidences"``, ``"papers (standard)"``, ...).
    """

    kind: Literal["start", "cell", "done"]
    total: int
    done: int
    skipped: int
    counts: Mapping[str, int]
    task: str = "cells"
    record: Any = None


#: what a command hands the engine's users to hear about progress
ProgressCallback = Callable[[ProgressEvent], None]


class Ledger(Generic[K]):
    """Resume and progress of one task through the engine.

    Parameters
    ----------
    keys
        Every job of the task, in the order it is asked.
    stored
        The status stored for each key done before (a key not in it was never asked).
    task
        What the progress events call the work.
    progress
        Called with a :class:`ProgressEvent` at the start, after every finished job and at the
        end (see :meth:`Engine.run`).

    A key stored with a final status is done and skipped (its status counted from the start);
    one never stored, or stored with a status of :data:`RETRY_STATUSES`, is asked now
    (:attr:`todo`).
    """

    def __init__(
        self,
        keys: Sequence[K],
        stored: Mapping[K, str],
        *,
        task: str,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.keys = list(keys)
        self.task, self.progress = task, progress
        self.todo: list[K] = [k for k in self.keys if is_pending(stored, k)]
        pending = set(self.todo)
        #: the statuses of the keys kept from before
        self.kept: Counter[str] = Counter(str(stored[k]) for k in self.keys if k not in pending)
        self.counts: Counter[str] = Counter(self.kept)
        self.computed = 0
        self.tally = Tally()

    @property
    def skipped(self) -> int:
        """Keys done before, not asked again."""
        return sum(self.kept.values())

    def finished(
        self, status: str, spec: str, responses: Iterable[ModelResponse | None], record: Any = None
    ) -> None:
        """Count one finished job: its status, the answers of ``spec`` it paid for, and tell."""
        self.computed += 1
        self.counts[status] += 1
        for response in responses:
            self.tally.add(spec, response)
        self.emit("cell", record)

    def emit(self, kind: Literal["start", "cell", "done"], record: Any = None) -> None:
        """Tell ``progress`` where the task is."""
        if self.progress is not None:
            self.progress(
                ProgressEvent(
                    kind=kind,
                    task=self.task,
                    total=len(self.keys),
                    done=self.skipped + self.computed,
                    skipped=self.skipped,
                    counts=dict(sorted(self.counts.items())),
                    record=record,
                )
            )


def holds_answers(stored: Mapping[Any, str]) -> bool:
    """Whether a store with these statuses holds an answer to protect: a key stored with a final
    status. A store without one (every call failed, e.g. at a mistyped server URL) may take
    changed settings, as a new store would."""
    return any(status not in RETRY_STATUSES for status in stored.values())


class Engine:
    """Runs :class:`Job` s with bounded concurrency and hands every result to one writer.

    Parameters
    ----------
    make_model
        Makes the model a spec names, the first time a job needs it.
    concurrency
        Model calls in flight at once.
    models
        Models already made (checked before anything was written); the engine closes them too.
    name
        Thread-name prefix of the pool.
    """

    def __init__(
        self,
        make_model: Callable[[str], Model] | None,
        *,
        concurrency: int,
        models: Mapping[str, Model] | None = None,
        name: str = "cv-model",
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self._make = make_model
        self._models: dict[str, Model] = dict(models or {})
        self.concurrency = concurrency
        self.name = name

    def model(self, spec: str) -> Model:
        """The model for ``spec``, made on first use."""
        if spec not in self._models:
            if self._make is None:
                raise ValueError(f"no model for {spec!r} and no way to make one")
            self._models[spec] = self._make(spec)
        return self._models[spec]

    def run(
        self,
        jobs: Iterable[Job[Any]],
        finish: Callable[[Any], None],
        *,
        then: Callable[[Any], Future[Any] | Stage[Any] | Job[Any] | None] | None = None,
        backlog: int = 0,
        stage_workers: int = 0,
        ledger: Ledger[Any] | None = None,
    ) -> None:
        """Run every job; each result reaches ``finish`` on this thread as soon as it is done.

        ``then(result)`` may return a :class:`Stage` (run on the second pool of
        ``stage_workers`` threads), a future (a second stage running elsewhere) or another
        :class:`Job` (the next turn of a conversation); what that yields goes to ``then`` again,
        and a result for which ``then`` returns None goes to ``finish``. ``backlog`` lets that
        many more jobs wait beyond the ones running, so a second stage never starves. An
        exception in a job (a setup error) stops the run after the jobs in flight; results
        finished before it have been handed over. With a ``ledger``, its ``start`` event comes
        first and its ``done`` event after the last job (none when a job raised).
        """
        if ledger is not None:
            ledger.emit("start")
        cap = self.concurrency + max(backlog, self.concurrency)
        source = iter(jobs)
        in_flight: set[Future[Any]] = set()
        pool = ThreadPoolExecutor(self.concurrency, self.name)
        stages = ThreadPoolExecutor(stage_workers, f"{self.name}-stage") if stage_workers else None
        try:
            exhausted = False
            while True:
                while not exhausted and len(in_flight) < cap:
                    job = next(source, None)
                    if job is None:
                        exhausted = True
                        break
                    in_flight.add(pool.submit(job.call, self.model(job.spec)))
                if not in_flight:
                    break
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    in_flight.discard(future)
                    result = future.result()  # a setup error stops here; stored results stay
                    follow = then(result) if then is not None else None
                    if follow is None:
                        finish(result)
                    elif isinstance(follow, Job):
                        in_flight.add(pool.submit(follow.call, self.model(follow.spec)))
                    elif isinstance(follow, Stage):
                        if stages is None:
                            raise ValueError("a Stage needs stage_workers")
                        in_flight.add(stages.submit(follow.call))
                    else:
                        in_flight.add(follow)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            if stages is not None:
                stages.shutdown(wait=True, cancel_futures=True)
        if ledger is not None:
            ledger.emit("done")

    def close(self) -> None:
        """Close every model the engine holds (those with a ``close`` method)."""
        models, self._models = list(self._models.values()), {}
        for model in models:
            closer = getattr(model, "close", None)
            if callable(closer):
                closer()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "RETRY_STATUSES",
    "Engine",
    "Job",
    "Ledger",
    "ProgressCallback",
    "ProgressEvent",
    "Stage",
    "Tally",
    "answer_status",
    "holds_answers",
    "is_pending",
]

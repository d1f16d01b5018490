"""The one dispatch engine: every command that asks models (a run, the calibration arm,
Experiment A and its RID ablation) goes through :class:`Engine`.

What it owns:

- **concurrency**: at most ``concurrency`` model calls run at once, on the engine's own thread
  pool, and the queue ahead of them stays bounded, so jobs are made only as they are needed;
- **a second stage**: a finished call may hand its result to another pool (a run executes the
  answer's code in the sandbox there) and the engine waits for that too;
- **one writer**: every finished job is passed to ``finish`` on the calling thread, so a store
  written there is written by one thread, one job at a time, as soon as the job is done;
- **model lifetime**: a model is made the first time a job names it (or handed in ready made)
  and closed when the engine stops, whatever stopped it;
- **accounting**: requests, tokens and cost of the answers that were not cached
  (:class:`Tally`), and the count of every status so far, for progress;
- **resume**: :data:`RETRY_STATUSES` is the one list of stored statuses that are asked again.

Retries, rate limits and the response cache live in the models themselves
(:mod:`causalverify.models`), so they apply wherever a model is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from causalverify.models import Model, ResponseCache, get_provider, is_offline
from causalverify.records import ModelResponse

T = TypeVar("T")

#: stored statuses that a resumed command asks again (the model never answered); every other
#: status is final
RETRY_STATUSES: frozenset[str] = frozenset({"api_error"})

AnswerStatus = Literal["api_error", "no_response", "ok"]


def answer_status(response: ModelResponse) -> AnswerStatus:
    """The one reading of a model's response: ``api_error`` when the call failed for good,
    ``no_response`` for an empty answer, ``ok`` otherwise."""
    if response.content is None and response.error is not None:
        return "api_error"
    return "ok" if (response.content or "").strip() else "no_response"


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


def model_factory(
    *,
    base_url: str | None = None,
    cache_path: Path | None = None,
    prices: Mapping[str, Any] | None = None,
    max_requests_per_minute: float | None = None,
) -> Callable[[str], Model]:
    """The models every command uses: :func:`~causalverify.models.get_provider` with one
    response cache, the server URL, the price overrides and the client-side rate limit."""
    cache = ResponseCache(cache_path)

    def make(spec: str) -> Model:
        return get_provider(
            spec,
            base_url=base_url,
            cache=cache,
            prices=prices,
            max_requests_per_minute=max_requests_per_minute,
        )

    return make


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
        then: Callable[[Any], Future[Any] | Job[Any] | None] | None = None,
        backlog: int = 0,
    ) -> None:
        """Run every job; each result reaches ``finish`` on this thread as soon as it is done.

        ``then(result)`` may return a future (a second stage running elsewhere) or another
        :class:`Job` (the next turn of a conversation); what that yields goes to ``then`` again,
        and a result for which ``then`` returns None goes to ``finish``. ``backlog`` lets that many more jobs wait beyond the ones
        running, so a second stage never starves. An exception in a job (a setup error) stops
        the run after the jobs in flight; results finished before it have been handed over.
        """
        cap = self.concurrency + max(backlog, self.concurrency)
        source = iter(jobs)
        in_flight: set[Future[Any]] = set()
        pool = ThreadPoolExecutor(self.concurrency, self.name)
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
                    return
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    in_flight.discard(future)
                    result = future.result()  # a setup error stops here; stored results stay
                    follow = then(result) if then is not None else None
                    if follow is None:
                        finish(result)
                    elif isinstance(follow, Job):
                        in_flight.add(pool.submit(follow.call, self.model(follow.spec)))
                    else:
                        in_flight.add(follow)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

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
    "ProgressCallback",
    "ProgressEvent",
    "Tally",
    "answer_status",
    "is_pending",
    "model_factory",
]

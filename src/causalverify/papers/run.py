"""Ask models the Experiment A prompts: answers, labels, RID answers and S3 judgements.

Every call goes through the same providers as Experiment B (one
:class:`~causalverify.models.ModelAccess`: server, response cache, prices, rate limit) and the
dispatch engine. The calling thread is the only writer of
:class:`~causalverify.papers.store.PaperStore` and stores each row as it arrives, so an
interrupted run resumes where it stopped (the engine's
:class:`~causalverify.runner.engine.Ledger` says which rows are done).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from causalverify.errors import SetupError
from causalverify.models import Model, ModelAccess, ModelOptions, ask
from causalverify.papers.heuristic import PaperAgent
from causalverify.papers.prompts import Arm, Layer, judge_messages, label_messages, paper_messages
from causalverify.papers.records import PaperRecord, default_corpus_path, load_papers
from causalverify.papers.store import Exchange, PaperStore, Table
from causalverify.records import Message, ModelResponse, messages_sha256
from causalverify.runner.engine import (
    Engine,
    Ledger,
    ProgressCallback,
    ProgressEvent,
    answer_status,
)
from causalverify.runner.engine import Job as EngineJob
from causalverify.sampling import evenly
from causalverify.store.sqlite import writer_lock

ProviderFactory = Callable[[str], Model]


@dataclass(frozen=True)
class Job:
    """One prompt to send: where its answer is stored and which model answers."""

    table: Table
    key: tuple[str, ...]
    model: str
    messages: list[Message]


#: Experiment A's progress reports are the engine's (``task`` names the kind of prompt)
Progress = ProgressEvent


@dataclass(frozen=True)
class AskSummary:
    """What one call of :func:`ask_all` did."""

    task: str
    total: int
    skipped: int
    asked: int
    requests: int
    cost_usd: float
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class AskSettings:
    """How Experiment A asks its models: the one model access, and two hooks.

    Parameters
    ----------
    access
        How the models are reached (server, cache, prices, rate limit, calls in flight,
        generation options).
    make_provider
        Overrides model creation (tests); default: :func:`default_factory`.
    progress
        Called with a :class:`Progress` at the start, after each row and at the end.
    """

    access: ModelAccess = field(default_factory=ModelAccess)
    make_provider: ProviderFactory | None = None
    progress: ProgressCallback | None = None


def default_factory(access: ModelAccess) -> ProviderFactory:
    """Models made by ``access``; a ``reference/<agent>`` spec is the agent's Experiment A
    answerer (:class:`PaperAgent`)."""
    models = access.factory()

    def make(spec: str) -> Model:
        kind, _, agent = spec.strip().partition("/")
        if kind == "reference":
            return PaperAgent(agent, spec=spec)
        return models(spec)

    return make


def _call(job: Job, provider: Model, *, options: ModelOptions) -> tuple[Job, Exchange]:
    response: ModelResponse = ask(provider, job.messages, options=options)
    exchange = Exchange(
        prompt=job.messages,
        prompt_sha256=messages_sha256(job.messages),
        response=response,
        status=answer_status(response),
    )
    return job, exchange


def ask_all(
    store: PaperStore, jobs: Sequence[Job], *, task: str, settings: AskSettings
) -> AskSummary:
    """Ask every job not yet answered (or answered with an API error) and store the answers,
    through the dispatch engine.

    Raises
    ------
    ProviderError, SetupError
        If a provider cannot be created or fails for good; rows stored so far are kept.
    """
    access = settings.access
    statuses = {t: store.statuses(t) for t in {j.table for j in jobs}}
    stored = {(t, key): status for t, rows in statuses.items() for key, status in rows.items()}
    ledger = Ledger([(j.table, j.key) for j in jobs], stored, task=task, progress=settings.progress)
    pending = set(ledger.todo)
    todo = [j for j in jobs if (j.table, j.key) in pending]
    factory = settings.make_provider or (default_factory(access) if todo else None)

    def finish(result: tuple[Job, Exchange]) -> None:
        job, exchange = result
        store.put(job.table, job.key, exchange)
        ledger.finished(exchange.status, job.model, [exchange.response])

    calls = (EngineJob(j.model, functools.partial(_call, j, options=access.options)) for j in todo)
    with Engine(factory, concurrency=access.concurrency, name="cv-papers") as engine:
        engine.run(calls, finish, ledger=ledger)
    return AskSummary(
        task,
        len(jobs),
        ledger.skipped,
        ledger.computed,
        ledger.tally.requests,
        ledger.tally.cost_usd,
        dict(sorted(ledger.counts.items())),
    )


def corpus_for(store: PaperStore, corpus: Path | None = None) -> tuple[PaperRecord, ...]:
    """The corpus of a store: ``corpus`` (recorded on first use) or the recorded/shipped one."""
    meta = store.meta()
    if corpus is not None:
        papers = load_papers(corpus, min_papers=1, min_per_family=0)
        digest = _sha(corpus)
        if meta.get("corpus_sha256") not in (None, digest):
            raise SetupError(f"{corpus} is not the corpus this run used (its SHA-256 differs)")
        store.set_meta({"corpus_path": str(corpus), "corpus_sha256": digest})
        return papers
    recorded = meta.get("corpus_path")
    path = Path(recorded) if recorded else default_corpus_path()
    papers = load_papers(path, min_papers=1, min_per_family=0) if recorded else load_papers()
    store.set_meta({"corpus_sha256": meta.get("corpus_sha256", _sha(path))})
    return papers


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _add_models(store: PaperStore, key: str, models: Sequence[str]) -> None:
    previous = store.meta().get(key, [])
    store.set_meta({key: [*previous, *(m for m in models if m not in previous)]})


def run_papers(
    run_dir: Path,
    *,
    models: Sequence[str],
    arm: Arm = "standard",
    paper_ids: Sequence[str] | None = None,
    corpus: Path | None = None,
    settings: AskSettings | None = None,
    limit: int | None = None,
) -> AskSummary:
    """Ask each model for an analysis plan of each paper (resumable).

    Parameters
    ----------
    run_dir
        The run folder; ``papers.sqlite`` is created in it.
    models
        Model specs.
    arm
        ``"standard"`` (seven sections) or ``"rid"`` (pre-commitment).
    paper_ids
        A subset of paper ids (default: the whole corpus).
    corpus
        A JSONL corpus (default: the shipped one).
    settings
        How to reach the models.
    limit
        Only this many of the papers, at even steps through the corpus.
    """
    with _writing(run_dir) as store:
        papers = evenly(_select(corpus_for(store, corpus), paper_ids), limit)
        _add_models(store, "models" if arm == "standard" else "rid_models", models)
        jobs = [
            Job("answers", (p.id, m, arm), m, paper_messages(p, arm=arm))
            for m in models
            for p in papers
        ]
        return ask_all(store, jobs, task=f"papers ({arm})", settings=settings or AskSettings())


@contextmanager
def _writing(run_dir: Path, *, create: bool = True) -> Iterator[PaperStore]:
    """The paper store, opened under the run folder's writer lock (one writer per folder)."""
    with writer_lock(run_dir), PaperStore.open(run_dir, create=create) as store:
        yield store


def _select(papers: Sequence[PaperRecord], ids: Sequence[str] | None) -> list[PaperRecord]:
    if ids is None:
        return list(papers)
    by_id = {p.id: p for p in papers}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise SetupError(f"unknown paper ids: {', '.join(unknown)}")
    return [by_id[i] for i in ids]


def labeller_pool(
    labellers: Sequence[str], evaluated: Sequence[str], *, exclude_evaluated: bool
) -> list[str]:
    """The labellers to ask; with ``exclude_evaluated`` the evaluated models are left out.

    Raises
    ------
    SetupError
        If no labeller is left, or a labeller is named twice.
    """
    if len(set(labellers)) != len(labellers):
        raise SetupError("a labeller is named twice in --labellers")
    pool = [m for m in labellers if not (exclude_evaluated and m in evaluated)]
    if not pool:
        raise SetupError(
            "no labeller left after leaving out the evaluated models; name other labellers"
        )
    return pool


def run_labels(
    run_dir: Path,
    *,
    labellers: Sequence[str],
    exclude_evaluated: bool = False,
    corpus: Path | None = None,
    settings: AskSettings | None = None,
    limit: int | None = None,
) -> tuple[list[str], AskSummary]:
    """Ask each labeller for every paper's method family and direction (strict JSON); with
    ``limit``, for that many papers at even steps through the corpus.

    Returns
    -------
    tuple
        The labeller pool actually used (recorded as the run's labellers) and the summary.
    """
    with _writing(run_dir) as store:
        papers = evenly(corpus_for(store, corpus), limit)
        evaluated = [*store.meta().get("models", []), *store.meta().get("rid_models", [])]
        pool = labeller_pool(labellers, evaluated, exclude_evaluated=exclude_evaluated)
        store.set_meta({"labellers": pool, "labellers_exclude_evaluated": exclude_evaluated})
        jobs = [Job("votes", (p.id, m), m, label_messages(p)) for m in pool for p in papers]
        return pool, ask_all(store, jobs, task="labels", settings=settings or AskSettings())


def run_judge(
    run_dir: Path, *, judge: str, settings: AskSettings | None = None, limit: int | None = None
) -> AskSummary:
    """Ask ``judge`` for the one-word method and direction of every stored answer (S3); with
    ``limit``, of that many answers at even steps through them."""
    layers: tuple[Layer, ...] = ("method", "direction")
    with _writing(run_dir, create=False) as store:
        store.set_meta({"judge": judge})
        answered = evenly(
            [(key, ex) for key, ex in store.rows("answers") if ex.status == "ok"], limit
        )
        jobs = [
            Job("judgements", (*key, layer, judge), judge, judge_messages(ex.text, layer))
            for key, ex in answered
            for layer in layers
        ]
        return ask_all(store, jobs, task="judge", settings=settings or AskSettings())


def rid_subset(paper_ids: Sequence[str], *, n: int, seed: int) -> list[str]:
    """A seeded subset of ``n`` paper ids (all of them when ``n`` is larger), in corpus order."""
    if n >= len(paper_ids):
        return list(paper_ids)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    chosen = set(rng.choice(len(paper_ids), size=n, replace=False).tolist())
    return [pid for i, pid in enumerate(paper_ids) if i in chosen]


def run_rid(
    run_dir: Path,
    *,
    models: Sequence[str],
    n: int,
    seed: int,
    corpus: Path | None = None,
    settings: AskSettings | None = None,
) -> tuple[list[str], list[AskSummary]]:
    """The RID ablation: both arms for a seeded subset of papers per model.

    The standard-arm answers already stored are reused; only missing ones are asked.

    Returns
    -------
    tuple
        The subset of paper ids and the summaries of the two arms.
    """
    with _writing(run_dir) as store:
        ids = [p.id for p in corpus_for(store, corpus)]
        subset = rid_subset(ids, n=n, seed=seed)
        store.set_meta({"rid": {"n": n, "seed": seed, "papers": subset}})
    summaries = [
        run_papers(
            run_dir, models=models, arm=arm, paper_ids=subset, corpus=corpus, settings=settings
        )
        for arm in ("standard", "rid")
    ]
    return subset, summaries

"""The frozen configuration of a benchmark run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from causalverify.families import LANGUAGES, Language
from causalverify.models.access import ModelAccess
from causalverify.records import DEFAULT_TOLERANCE
from causalverify.runner.budget import ScoringBudget
from causalverify.sandbox.base import Limits

Protocol = Literal["paper", "default"]
Profile = Literal["paper", "default"]
Extractor = Literal["deterministic", "judge", "both"]

#: the offline reference panel, in the order it is reported
REFERENCE_PANEL: tuple[str, ...] = (
    "reference/textbook",
    "reference/naive",
    "reference/cumulative",
    "reference/wrong-term",
    "reference/naive-se",
    "reference/fragile",
    "reference/mute",
    "reference/prose",
)


def default_workers() -> int:
    """The number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """Everything that decides which cells a run computes and how.

    Parameters
    ----------
    suite_dir
        A built suite folder (``causalverify build``).
    out_dir
        The run folder; holds ``run.sqlite``.
    models
        Provider specs, e.g. ``"reference/textbook"`` or ``"openai/gpt-4o"``.
    languages
        Languages asked for, each a separate cell.
    samples
        Independent answers per (scenario, model, language); sample ``k`` enters the cache key.
    workers
        Cells executing in the sandbox at the same time.
    access
        How the models are reached (:class:`~causalverify.models.ModelAccess`): server URL,
        response cache (``None``: the user-wide default), prices, rate limit, model calls in
        flight at the same time (across all models) and the generation options; sample ``k``
        of a cell asks with ``seed + k``.
    limit
        Use only ``limit`` scenarios, spread evenly over the design families
        (:func:`~causalverify.runner.suite.balanced_subset`).
    protocol
        Prompt protocol; ``paper`` also takes the first R block of an answer, as published.
    profile, tolerance, extractor
        Scoring, passed to :func:`causalverify.scoring.rescore`.
    judge_model
        Provider spec of the extraction judge. With ``extractor="deterministic"`` it reads only
        the cells whose deterministic extraction is undecided (and the declaration did not
        settle), and its reading resolves them; ``judge`` and ``both`` judge every executed cell.
    declare
        Ask a cell whose script printed no ``ESTIMATE:`` line, or whose extraction is undecided,
        which printed number is its estimate (:mod:`causalverify.runner.declare`); only under
        the ``default`` protocol and never for replayed answers.
    unsafe
        Run code without the sandbox (development only; recorded in the metadata).
    executor, scheduler
        ``local``: executions run in this machine's sandbox; ``dask``: on Dask workers, each in
        its own sandbox (:mod:`causalverify.sandbox.dask`), at the scheduler's address or on a
        local cluster of ``workers`` processes. The stored cells are the same either way.
    mode, max_turns
        ``single``: one answer per cell (the published protocol). ``repair``: after an answer
        whose code is missing, fails or prints no readable estimate, the model is shown the
        execution feedback and asked again, up to ``max_turns`` turns in all
        (:mod:`causalverify.runner.repair`).
    warm
        Fork Python cells from a warm interpreter (:mod:`causalverify.sandbox.warm`); None
        follows the ``CAUSALVERIFY_WARM`` setting (on by default). Results do not depend on it.
    limits
        Resource limits of one execution.
    scoring_budget
        Time and memory that extracting and scoring one cell may take
        (:mod:`causalverify.runner.budget`); a cell past it is stored as ``extraction_limit``.
    command_line
        The command that started the run, recorded in the metadata.
    """

    suite_dir: Path
    out_dir: Path
    models: tuple[str, ...] = REFERENCE_PANEL
    languages: tuple[Language, ...] = LANGUAGES
    samples: int = 1
    workers: int = field(default_factory=default_workers)
    access: ModelAccess = field(default_factory=ModelAccess)
    limit: int | None = None
    protocol: Protocol = "default"
    profile: Profile = "default"
    tolerance: float = DEFAULT_TOLERANCE
    extractor: Extractor = "deterministic"
    judge_model: str | None = None
    declare: bool = True
    unsafe: bool = False
    warm: bool | None = None
    executor: Literal["local", "dask"] = "local"
    scheduler: str | None = None
    mode: Literal["single", "repair"] = "single"
    max_turns: int = 3
    limits: Limits = field(default_factory=Limits)
    scoring_budget: ScoringBudget = field(default_factory=ScoringBudget)
    command_line: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("a run needs at least one model")
        if not self.languages:
            raise ValueError("a run needs at least one language")
        if len(set(self.models)) != len(self.models):
            raise ValueError(f"models are repeated: {', '.join(self.models)}")
        for name, value in (("samples", self.samples), ("workers", self.workers)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if self.executor not in ("local", "dask"):
            raise ValueError(f"executor must be 'local' or 'dask', got {self.executor!r}")
        if self.scheduler is not None and self.executor != "dask":
            raise ValueError("a scheduler address needs --executor dask")
        if self.executor == "dask" and self.unsafe:
            raise ValueError("--executor dask runs every script in the workers' sandboxes")
        if self.mode not in ("single", "repair"):
            raise ValueError(f"mode must be 'single' or 'repair', got {self.mode!r}")
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {self.max_turns}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if self.tolerance <= 0:
            raise ValueError(f"tolerance must be positive, got {self.tolerance}")
        if self.extractor != "deterministic" and self.judge_model is None:
            raise ValueError(f"extractor {self.extractor!r} needs a judge model")

    @property
    def turns(self) -> int:
        """Turns a cell may take: ``max_turns`` in repair mode, 1 in single mode."""
        return self.max_turns if self.mode == "repair" else 1

    @property
    def judge_all(self) -> bool:
        """Whether the judge reads every executed cell (``extractor`` judge or both), rather
        than only the undecided ones."""
        return self.extractor != "deterministic"

    @property
    def code_policy(self) -> Literal["paper", "default"]:
        """The code-block extraction policy that goes with the protocol."""
        return "paper" if self.protocol == "paper" else "default"

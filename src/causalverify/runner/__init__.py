"""Orchestration of a benchmark run; the dispatch engine every command that asks models uses,
with its resume and progress bookkeeping; rescoring a stored run."""

from __future__ import annotations

from causalverify.runner.config import REFERENCE_PANEL, RunConfig, default_workers
from causalverify.runner.engine import (
    RETRY_STATUSES,
    Engine,
    Job,
    Ledger,
    Stage,
    Tally,
    answer_status,
    holds_answers,
    is_pending,
)
from causalverify.runner.meta import merge_meta, suite_fingerprint
from causalverify.runner.rescore import score_run
from causalverify.runner.run import plan_cells, run_benchmark
from causalverify.runner.stages import Stages, default_stages
from causalverify.runner.summary import ModelSummary, ProgressEvent, RunSummary

__all__ = [
    "REFERENCE_PANEL",
    "RETRY_STATUSES",
    "Engine",
    "Job",
    "Ledger",
    "ModelSummary",
    "ProgressEvent",
    "RunConfig",
    "RunSummary",
    "Stage",
    "Stages",
    "Tally",
    "answer_status",
    "default_stages",
    "default_workers",
    "holds_answers",
    "is_pending",
    "merge_meta",
    "plan_cells",
    "run_benchmark",
    "score_run",
    "suite_fingerprint",
]

"""Orchestration of a benchmark run; the dispatch engine every command that asks models uses;
the ``Executor`` seam behind which executions run; rescoring a stored run."""

from __future__ import annotations

from causalverify.runner.config import REFERENCE_PANEL, RunConfig, default_workers
from causalverify.runner.engine import (
    RETRY_STATUSES,
    Engine,
    Job,
    Tally,
    answer_status,
    is_pending,
    model_factory,
)
from causalverify.runner.executor import Executor, LocalPoolExecutor
from causalverify.runner.meta import merge_meta, suite_fingerprint
from causalverify.runner.rescore import score_run
from causalverify.runner.run import plan_cells, run_benchmark
from causalverify.runner.stages import Stages, default_stages
from causalverify.runner.summary import ModelSummary, ProgressEvent, RunSummary

__all__ = [
    "REFERENCE_PANEL",
    "RETRY_STATUSES",
    "Engine",
    "Executor",
    "Job",
    "LocalPoolExecutor",
    "ModelSummary",
    "ProgressEvent",
    "RunConfig",
    "RunSummary",
    "Stages",
    "Tally",
    "answer_status",
    "default_stages",
    "default_workers",
    "is_pending",
    "merge_meta",
    "model_factory",
    "plan_cells",
    "run_benchmark",
    "score_run",
    "suite_fingerprint",
]

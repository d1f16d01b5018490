"""Orchestration of a benchmark run, and the ``Executor`` seam behind which executions run."""

from __future__ import annotations

from causalverify.runner.config import REFERENCE_PANEL, RunConfig, default_workers
from causalverify.runner.executor import Executor, LocalPoolExecutor
from causalverify.runner.meta import merge_meta, suite_fingerprint
from causalverify.runner.run import RETRY_STATUSES, plan_cells, run_benchmark
from causalverify.runner.stages import Stages, default_stages
from causalverify.runner.summary import ModelSummary, ProgressEvent, RunSummary

__all__ = [
    "REFERENCE_PANEL",
    "RETRY_STATUSES",
    "Executor",
    "LocalPoolExecutor",
    "ModelSummary",
    "ProgressEvent",
    "RunConfig",
    "RunSummary",
    "Stages",
    "default_stages",
    "default_workers",
    "merge_meta",
    "plan_cells",
    "run_benchmark",
    "suite_fingerprint",
]

"""The stage functions a run calls, gathered in one object so tests can substitute fakes.

:func:`default_stages` wires in the real prompts, providers, sandbox, code extraction and scoring;
each is imported only when a run starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from causalverify.extraction import judge_extract
from causalverify.families import Language
from causalverify.prompts import render_experiment_b
from causalverify.records import CellRecord, ExtractionRecord, Message
from causalverify.runner.budget import BoundedScorer
from causalverify.sandbox import check_parses, environment_manifest, extract_code, get_sandbox
from causalverify.sandbox.base import Sandbox
from causalverify.sandbox.dask import DaskSandbox

if TYPE_CHECKING:
    import pandas as pd

    from causalverify.families import Family
    from causalverify.models.base import Model
    from causalverify.records import Manifest
    from causalverify.runner.config import RunConfig
    from causalverify.scenarios.model import Scenario


class Rendered(Protocol):
    """A rendered prompt: its messages and their hash."""

    @property
    def messages(self) -> tuple[Message, ...]: ...

    @property
    def sha256(self) -> str: ...


class CodeBlockLike(Protocol):
    """A code block taken from an answer."""

    @property
    def code(self) -> str: ...

    @property
    def index(self) -> int: ...


class ParseCheckLike(Protocol):
    """The result of a parse check."""

    @property
    def ok(self) -> bool: ...

    @property
    def error(self) -> str | None: ...


class RenderFn(Protocol):
    def __call__(
        self,
        scenario: Scenario,
        data: pd.DataFrame,
        *,
        language: Language,
        protocol: Any,
        manifest: Manifest | None,
    ) -> Rendered: ...


class ExtractCodeFn(Protocol):
    def __call__(
        self, response: str, language: Language, *, policy: Any
    ) -> CodeBlockLike | None: ...


class RescoreFn(Protocol):
    def __call__(
        self, record: CellRecord, *, profile: Any, tolerance: float, extractor: Any
    ) -> CellRecord: ...


class JudgeFn(Protocol):
    def __call__(
        self, provider: Model, *, code: str, stdout: str, family: Family
    ) -> ExtractionRecord: ...


@dataclass(frozen=True, kw_only=True)
class Stages:
    """The collaborators of a run."""

    render: RenderFn
    make_provider: Callable[[str], Model]
    sandbox: Sandbox
    extract_code: ExtractCodeFn
    check_parses: Callable[[str, Language, Sandbox], ParseCheckLike]
    rescore: RescoreFn
    judge_extract: JudgeFn | None = None
    manifest: Manifest | None = None
    sandbox_policy: Mapping[str, Any] | None = None


def default_stages(config: RunConfig) -> Stages:
    """Wire the real stages for ``config`` (the sandbox is set up here; it may raise).

    Cells are scored by a :class:`~causalverify.runner.budget.BoundedScorer` under
    ``config.scoring_budget`` (its child processes end with :func:`close_stages`).

    Raises
    ------
    SandboxUnavailableError
        If the sandbox cannot run and ``config.unsafe`` is false.
    """
    sandbox: Sandbox
    if config.executor == "dask":
        sandbox = DaskSandbox(
            scheduler=config.scheduler, workers=config.workers, limits=config.limits
        )
    else:
        sandbox = get_sandbox(unsafe=config.unsafe, warm=config.warm)
    return Stages(
        render=render_experiment_b,
        make_provider=config.access.factory(),
        sandbox=sandbox,
        extract_code=extract_code,
        check_parses=check_parses,
        rescore=BoundedScorer(config.scoring_budget),
        judge_extract=judge_extract,
        manifest=environment_manifest(),
        sandbox_policy=describe_sandbox(sandbox, unsafe=config.unsafe),
    )


def close_stages(stages: Stages) -> None:
    """End what :func:`default_stages` started that outlives a cell (the scoring processes)."""
    closer = getattr(stages.rescore, "close", None)
    if callable(closer):
        closer()


def describe_sandbox(sandbox: Sandbox, *, unsafe: bool) -> dict[str, Any]:
    """A JSON-able description of the sandbox policy, for the run metadata."""
    policy: Any = getattr(sandbox, "policy", None)
    if callable(policy):
        policy = policy()
    if hasattr(policy, "model_dump"):
        policy = policy.model_dump(mode="json")
    elif policy is not None and not isinstance(policy, dict):
        policy = repr(policy)
    description = {
        "kind": type(sandbox).__name__,
        "unsafe": unsafe,
        "sandboxed": getattr(sandbox, "sandboxed", None),
        "scratch_mb": getattr(sandbox, "scratch_mb", None),
        "policy": policy,
    }
    result: dict[str, Any] = json.loads(json.dumps(description, sort_keys=True, default=repr))
    return result

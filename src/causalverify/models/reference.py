"""``reference/<agent>``: the offline reference panel as a provider (no network, zero cost)."""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from types import ModuleType

from causalverify.errors import ProviderError
from causalverify.models.base import CellContext, ModelOptions
from causalverify.records import Message, ModelResponse


def _reference_module() -> ModuleType:
    return importlib.import_module("causalverify.reference")


class ReferenceProvider:
    """Answers with :func:`causalverify.reference.write_response` for the cell's scenario.

    A calibration call (``context.protocol`` ``"calibration/<protocol>"``) is answered with
    :func:`causalverify.reference.write_confidence` instead. An Experiment A prompt, sent
    without a cell context, is answered by :func:`causalverify.papers.heuristic.answer`.

    The answer depends only on (agent, scenario, language, protocol): the messages and options
    are not used. Tokens and cost are zero.
    """

    kind = "reference"

    def __init__(self, agent: str, *, spec: str) -> None:
        agents = getattr(_reference_module(), "AGENTS", None)
        if agents is not None and agent not in agents:
            raise ProviderError(
                f"unknown reference agent {agent!r}; choose one of {', '.join(agents)}"
            )
        self.agent = agent
        self.spec = spec

    def complete(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        context: CellContext | None = None,
    ) -> ModelResponse:
        """Write the agent's answer for ``context.scenario``.

        Raises
        ------
        ProviderError
            If no cell context is given (the agent needs the scenario).
        """
        if context is None:
            # Experiment A prompts (papers, labels, RID, judge) carry the paper in the messages
            paper_answer = importlib.import_module("causalverify.papers.heuristic").answer
            content = paper_answer(self.agent, messages)
            if content is not None:
                return ModelResponse(content=content, stop_reason="stop", model=self.spec)
            raise ProviderError(
                f"{self.spec} needs the cell context (scenario, language, protocol)"
            )
        start = time.monotonic()
        module = _reference_module()
        kind, _, calibration_protocol = context.protocol.partition("/")
        # "calibration/<protocol>": the retrospective confidence prompt of the calibration arm
        write = module.write_confidence if kind == "calibration" else module.write_response
        content = write(
            self.agent,
            context.scenario,
            language=context.language,
            protocol=calibration_protocol if kind == "calibration" else context.protocol,
        )
        return ModelResponse(
            content=content,
            stop_reason="stop",
            latency_seconds=time.monotonic() - start,
            model=self.spec,
        )

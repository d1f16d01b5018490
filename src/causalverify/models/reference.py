"""``reference/<agent>``: the offline reference panel as an offline agent (no network, no cost)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from causalverify.errors import ProviderError
from causalverify.models.base import CellContext, ModelOptions
from causalverify.records import Message, ModelResponse
from causalverify.reference import (
    repaired_agent,
    require_agent,
    write_confidence,
    write_declaration,
    write_response,
)


class ReferenceProvider:
    """Answers with :func:`causalverify.reference.write_response` for the cell's scenario brief.

    A calibration call (``context.protocol`` ``"calibration/<protocol>"``) is answered with
    :func:`causalverify.reference.write_confidence` instead. The agent sees the scenario's brief
    only (:class:`~causalverify.records.ScenarioBrief`: never the true effect or the canonical
    estimate). Prompts that are not about a scenario (Experiment A) are answered by the papers
    arm's own reference agents (:mod:`causalverify.papers.heuristic`).

    The answer depends only on (agent, scenario, language, protocol, turn): the messages and
    options are not used, except by a declaration request (``context.request == "declare"``),
    which is answered from the stdout excerpt the last message shows
    (:func:`causalverify.reference.write_declaration`). At a later turn of a repair-mode conversation ``fragile`` and ``mute``
    answer as ``textbook`` (:func:`causalverify.reference.repaired_agent`). Tokens and cost are zero.
    """

    kind = "reference"

    def __init__(self, agent: str, *, spec: str) -> None:
        self.agent = require_agent(agent)
        self.spec = spec

    def answer(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        context: CellContext | None,
    ) -> ModelResponse:
        """Write the agent's answer for ``context.scenario``.

        Raises
        ------
        ProviderError
            If no cell context is given (the agent needs the scenario).
        """
        if context is None:
            raise ProviderError(
                f"{self.spec} needs the cell context (scenario, language, protocol)"
            )
        start = time.monotonic()
        kind, _, calibration_protocol = context.protocol.partition("/")
        # "calibration/<protocol>": the retrospective confidence prompt of the calibration arm
        if context.request == "declare":
            content = write_declaration(messages[-1].content if messages else "")
        elif kind == "calibration":
            content = write_confidence(
                self.agent,
                context.scenario,
                language=context.language,
                protocol=calibration_protocol,  # type: ignore[arg-type]
            )
        else:
            content = write_response(
                repaired_agent(self.agent, context.turn),
                context.scenario,
                language=context.language,
                protocol=context.protocol,  # type: ignore[arg-type]
            )
        return ModelResponse(
            content=content,
            stop_reason="stop",
            latency_seconds=time.monotonic() - start,
            model=self.spec,
        )

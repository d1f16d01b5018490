"""``--model causalverify/<agent>``: the offline reference panel as an Inspect model.

The agents are those of ``reference/<agent>`` in ``causalverify run`` (``textbook``, ``naive``,
``cumulative``, ``wrong-term``, ``naive-se``, ``fragile``, ``mute``, ``prose``): each answer is
written offline, without network or cost, and gives its token counts (zero), so Inspect never
fetches a tokenizer to count them (Inspect's ``mockllm/model`` does, on first use). At a later
turn of a repair-mode sample (``-T mode=repair``) ``fragile`` and ``mute`` answer as
``textbook``, as they do in a native repair run.

An agent needs the scenario it answers for, which a model API is not given: the task records
every prompt it renders (:func:`remember_prompt`), and the scenario is found from the first
user message. The agent sees the scenario's brief only (never the canonical estimate). Prompts
of other tasks are refused with a clear error.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from causalverify.errors import ProviderError
from causalverify.families import Language
from causalverify.models import CellContext, ModelOptions
from causalverify.models.reference import ReferenceProvider
from causalverify.records import Message, ScenarioBrief, ScenarioFacts


@dataclass(frozen=True)
class _Origin:
    brief: ScenarioBrief
    language: Language
    protocol: str


#: the cell of every prompt the task rendered in this process, by the hash of its user message
_ORIGINS: dict[str, _Origin] = {}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def remember_prompt(
    messages: tuple[Message, ...], scenario: ScenarioFacts, language: Language, protocol: str
) -> None:
    """Record which scenario, language and protocol the prompt ``messages`` was rendered for."""
    user = next(m.content for m in messages if m.role == "user")
    _ORIGINS[_digest(user)] = _Origin(ScenarioBrief.of(scenario), language, protocol)


@modelapi(name="causalverify")
class ReferenceModelAPI(ModelAPI):
    """A reference agent (the model name) answering the causalverify task's prompts."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's own default
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        try:
            self.provider = ReferenceProvider(model_name, spec=f"causalverify/{model_name}")
        except ProviderError as exc:
            raise ValueError(str(exc).replace("reference agent", "causalverify agent")) from exc

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        users = [m.text for m in input if m.role == "user"]
        origin = _ORIGINS.get(_digest(users[0])) if users else None
        if origin is None:
            raise ValueError(
                f"causalverify/{self.model_name} answers the prompts of the causalverify task "
                "only (inspect eval causalverify/causalverify --model "
                f"causalverify/{self.model_name})"
            )
        context = CellContext(
            scenario=origin.brief,
            language=origin.language,
            protocol=origin.protocol,
            turn=1 + sum(m.role == "assistant" for m in input),
        )
        messages = [Message(role=m.role, content=m.text) for m in input if m.role != "tool"]
        response = self.provider.answer(messages, options=ModelOptions(), context=context)
        output = ModelOutput.from_content(
            model=str(self.model_name), content=response.content or ""
        )
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output

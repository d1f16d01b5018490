"""The model interface: options, the ``Provider`` protocol (API models: messages and settings
only), the ``OfflineAgent`` protocol (simulated models: also the cell context) and :func:`ask`.

Every provider answers :meth:`Provider.complete` with a
:class:`~causalverify.records.ModelResponse`. Transient failures that outlast the retries come
back as ``ModelResponse(content=None, error=...)`` (a cell status, never an exception); permanent
setup problems (no API key, 401/403, unknown provider or model) raise
:class:`~causalverify.errors.ProviderError` or :class:`~causalverify.errors.SetupError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from causalverify.families import Language
from causalverify.records import Message, ModelResponse, ScenarioBrief


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """Per-model generation options.

    Parameters
    ----------
    temperature
        Sampling temperature; ``None`` leaves the server's default (nothing is sent).
    max_tokens
        Upper bound on generated tokens.
    reasoning_effort
        ``"low"``, ``"medium"``, ``"high"`` (or any value the server accepts); ``None`` sends none.
    timeout_seconds
        Timeout of one HTTP attempt (retries get a fresh timeout each).
    seed
        Sampling seed for servers that take one (OpenAI-compatible ``seed``); ``None`` sends
        none. Providers whose API has no seed ignore it.
    """

    temperature: float | None = None
    max_tokens: int = 8192
    reasoning_effort: str | None = None
    timeout_seconds: float = 300.0
    seed: int | None = None

    def cache_fields(self) -> dict[str, Any]:
        """The options that change the answer (the timeout does not), for cache keys.

        ``seed`` is there only when set, so answers cached without one keep their keys.
        """
        fields: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
        }
        if self.seed is not None:
            fields["seed"] = self.seed
        return fields


@dataclass(frozen=True, kw_only=True)
class CellContext:
    """What an offline agent may know about the cell it answers for: the scenario's brief (never
    its true effect, parameters or canonical estimate), the language, the protocol and the
    sample. Only :class:`OfflineAgent` ever receives it (see :func:`ask`).

    ``turn`` is above 1 when the messages end with execution feedback on the agent's previous
    answer (repair mode). ``protocol`` is the Experiment B protocol (``"default"``, ``"paper"``) or, for the calibration
    arm, ``"calibration/<protocol>"``. ``request`` is ``"declare"`` when the last user message
    asks which printed number is the estimate (it shows the end of the script's stdout).
    """

    scenario: ScenarioBrief
    language: Language
    protocol: str
    sample: int = 0
    #: the turn of a repair-mode conversation (1: the single-shot prompt; later turns follow
    #: execution feedback, the last user message)
    turn: int = 1
    #: what the last user message asks for: an answer to the prompt (or to repair feedback), or
    #: the declaration of the printed estimate
    request: Literal["answer", "declare"] = "answer"


@runtime_checkable
class Provider(Protocol):
    """A model behind an API: it receives the messages and the generation settings, nothing else.

    ``sample`` numbers repeated answers to the same prompt (it enters the response-cache key);
    ``spec`` is the string the provider was created from.
    """

    spec: str

    def complete(
        self, messages: Sequence[Message], *, options: ModelOptions, sample: int = 0
    ) -> ModelResponse:
        """Answer one chat conversation; thread-safe."""
        ...


@runtime_checkable
class OfflineAgent(Protocol):
    """An answerer that simulates a model without one (``reference/…``, ``replay/…``).

    It gets the cell's :class:`CellContext` through :meth:`answer`, a channel that API providers
    do not have; ``context`` is ``None`` for prompts that are not about a scenario.
    """

    spec: str

    def answer(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        context: CellContext | None,
    ) -> ModelResponse:
        """Answer one prompt; thread-safe."""
        ...


#: what :func:`~causalverify.models.get_provider` returns
Model = Provider | OfflineAgent


def ask(
    model: Model,
    messages: Sequence[Message],
    *,
    options: ModelOptions,
    context: CellContext | None = None,
) -> ModelResponse:
    """The one place a model is asked: an offline agent gets the cell context, an API provider
    only the messages, the options and the sample number.

    Raises
    ------
    TypeError
        If ``model`` is neither a :class:`Provider` nor an :class:`OfflineAgent`.
    """
    if isinstance(model, OfflineAgent):
        return model.answer(messages, options=options, context=context)
    if isinstance(model, Provider):
        sample = context.sample if context is not None else 0
        return model.complete(messages, options=options, sample=sample)
    raise TypeError(f"{model!r} is neither a provider nor an offline agent")

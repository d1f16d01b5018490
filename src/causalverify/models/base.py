"""The provider interface: options, cell context and the ``Provider`` protocol.

Every provider answers :meth:`Provider.complete` with a
:class:`~causalverify.records.ModelResponse`. Transient failures that outlast the retries come
back as ``ModelResponse(content=None, error=...)`` (a cell status, never an exception); permanent
setup problems (no API key, 401/403, unknown provider or model) raise
:class:`~causalverify.errors.ProviderError` or :class:`~causalverify.errors.SetupError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from causalverify.families import Language
from causalverify.records import Message, ModelResponse

if TYPE_CHECKING:
    from causalverify.scenarios.model import Scenario


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
    """What a provider may know about the cell it answers for.

    API providers ignore it except for ``sample``, which enters the cache key so that repeated
    samples of the same prompt are separate answers. Offline providers (``reference``, ``replay``)
    need the scenario to produce or look up the answer.
    """

    scenario: Scenario
    language: Language
    protocol: str
    sample: int = 0


@runtime_checkable
class Provider(Protocol):
    """A source of model answers; ``spec`` is the string it was created from."""

    spec: str

    def complete(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        context: CellContext | None = None,
    ) -> ModelResponse:
        """Answer one chat conversation; thread-safe."""
        ...

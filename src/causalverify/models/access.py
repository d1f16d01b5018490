"""How a command reaches its models: one settings object every command builds and passes.

A run, the calibration arm and Experiment A ask models the same way: a server URL, a response
cache, price overrides, a client-side rate limit, retries, the number of calls in flight and the
generation options. :class:`ModelAccess` holds all of them; :meth:`ModelAccess.factory` makes
the models a command asks. API keys are read from the environment by the providers
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``; see :mod:`causalverify.models.openai_provider`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causalverify.models.base import ModelOptions
from causalverify.models.cache import ResponseCache
from causalverify.models.providers import get_provider

if TYPE_CHECKING:
    from causalverify.models.base import Model
    from causalverify.models.retry import RetryPolicy


@dataclass(frozen=True, kw_only=True)
class ModelAccess:
    """Model-access settings of a command.

    Parameters
    ----------
    base_url
        Server URL for API providers (``openai``/``anthropic``); ``None``: their environment
        variables, else the vendor's URL.
    cache_path
        The response cache; ``None`` uses the user-wide default cache.
    prices
        Token price overrides (as ``--prices``), for the cost of API answers.
    max_requests_per_minute
        Client-side rate limit for API providers; ``None`` for none.
    concurrency
        Model calls in flight at once (``--model-concurrency``).
    options
        Generation options (temperature, max tokens, reasoning effort, seed, request timeout).
    retry_policy
        Retries of API providers (``None``: the providers' default).
    """

    base_url: str | None = None
    cache_path: Path | None = None
    prices: Mapping[str, Any] | None = None
    max_requests_per_minute: float | None = None
    concurrency: int = 8
    options: ModelOptions = field(default_factory=ModelOptions)
    retry_policy: RetryPolicy | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"model concurrency must be at least 1, got {self.concurrency}")

    def replace(self, **changes: Any) -> ModelAccess:
        """A copy with ``changes`` (fields of this class)."""
        return dataclasses.replace(self, **changes)

    def factory(self) -> Callable[[str], Model]:
        """Makes the model a spec names, all with one response cache, the server URL, the price
        overrides, the rate limit and the retry policy."""
        cache = ResponseCache(self.cache_path)

        def make(spec: str) -> Model:
            return get_provider(
                spec,
                base_url=self.base_url,
                cache=cache,
                prices=self.prices,
                max_requests_per_minute=self.max_requests_per_minute,
                retry_policy=self.retry_policy,
            )

        return make


__all__ = ["ModelAccess"]

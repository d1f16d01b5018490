"""Making a model from its spec: ``<kind>/<name>``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from causalverify.errors import ProviderError
from causalverify.models.anthropic_provider import AnthropicProvider
from causalverify.models.base import Model, Provider
from causalverify.models.cache import ResponseCache
from causalverify.models.cached import CachedProvider
from causalverify.models.openai_provider import OpenAIProvider
from causalverify.models.pricing import PriceTable
from causalverify.models.ratelimit import RateLimiter
from causalverify.models.reference import ReferenceProvider
from causalverify.models.replay import ReplayProvider, parse_replay_spec
from causalverify.models.retry import RetryPolicy

#: Provider kinds understood by :func:`get_provider`.
KINDS: Final[tuple[str, ...]] = ("openai", "anthropic", "replay", "reference")
#: Kinds that answer locally: their calls are not API requests and cost nothing.
OFFLINE_KINDS: Final[tuple[str, ...]] = ("replay", "reference")


def is_offline(spec: str) -> bool:
    """Whether ``spec`` names a provider that answers without calling an API."""
    return spec.strip().partition("/")[0] in OFFLINE_KINDS


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``"<kind>/<rest>"``.

    Raises
    ------
    ProviderError
        If the spec has no ``/``, an empty part, or an unknown kind.
    """
    kind, sep, rest = spec.strip().partition("/")
    if not sep or not rest or kind not in KINDS:
        raise ProviderError(
            f"unknown model {spec!r}: write <kind>/<name> with kind one of {', '.join(KINDS)} "
            "(e.g. openai/gpt-4o, reference/textbook, replay/<dir>)"
        )
    return kind, rest


def get_provider(
    spec: str,
    *,
    base_url: str | None = None,
    cache: ResponseCache | None = None,
    prices: Mapping[str, Any] | PriceTable | None = None,
    max_requests_per_minute: float | None = None,
    retry_policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Model:
    """Create the model named by ``spec``: a :class:`Provider` for API kinds, an
    :class:`OfflineAgent` for ``replay`` and ``reference``. Ask it through :func:`ask`.

    Parameters
    ----------
    spec
        ``openai/<model>``, ``anthropic/<model>``, ``replay/<dir>[:<slug>]`` or
        ``reference/<agent>``.
    base_url
        Server URL for ``openai`` / ``anthropic`` (else their environment variables).
    cache
        Response cache for API providers (``openai``, ``anthropic``); offline kinds skip it.
    prices
        Price overrides merged over the defaults (or a ready :class:`PriceTable`).
    max_requests_per_minute
        Client-side rate limit for API providers; ``None`` for none.
    retry_policy
        Retry settings for API providers (default: 6 attempts, backoff from 1 s to 60 s).
    sleep
        The function used to wait between retries (tests inject a recorder).

    Raises
    ------
    ProviderError
        Unknown kind, unknown agent, missing replay folder, missing API key.
    SetupError
        An optional SDK is not installed.
    """
    kind, rest = parse_spec(spec)
    if kind == "reference":
        return ReferenceProvider(rest, spec=spec)
    if kind == "replay":
        folder, slug = parse_replay_spec(rest)
        return ReplayProvider(folder, spec=spec, slug=slug)
    table = prices if isinstance(prices, PriceTable) else PriceTable(prices)
    limiter = RateLimiter(max_requests_per_minute) if max_requests_per_minute else None
    provider = _api_provider(kind, rest, spec, base_url, table, limiter, retry_policy, sleep)
    if cache is None:
        return provider

    return CachedProvider(
        provider, cache, kind=kind, model=rest, base_url=getattr(provider, "base_url", None)
    )


def _api_provider(
    kind: str,
    model: str,
    spec: str,
    base_url: str | None,
    prices: PriceTable,
    limiter: RateLimiter | None,
    retry_policy: RetryPolicy | None,
    sleep: Callable[[float], None],
) -> Provider:
    provider_class: type[OpenAIProvider | AnthropicProvider] = (
        OpenAIProvider if kind == "openai" else AnthropicProvider
    )
    return provider_class(
        model,
        spec=spec,
        base_url=base_url,
        prices=prices,
        rate_limiter=limiter,
        retry_policy=retry_policy,
        sleep=sleep,
    )

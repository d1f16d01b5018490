"""A provider wrapper that answers from the :class:`ResponseCache` before calling the model."""

from __future__ import annotations

from collections.abc import Sequence

from causalverify.models.base import ModelOptions, Provider
from causalverify.models.cache import ResponseCache, cache_key
from causalverify.records import Message, ModelResponse


class CachedProvider:
    """Wraps an API provider: a hit returns the stored answer (``cached=True``, zero cost).

    Concurrent calls with the same key wait for each other, so the model is asked once.
    """

    def __init__(
        self, inner: Provider, cache: ResponseCache, *, kind: str, model: str, base_url: str | None
    ) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.cache = cache
        self._kind = kind
        self._model = model
        self._base_url = base_url

    def key(self, messages: Sequence[Message], options: ModelOptions, sample: int = 0) -> str:
        """The cache key of one call."""
        return cache_key(
            kind=self._kind,
            model=self._model,
            base_url=self._base_url,
            messages=messages,
            options=options.cache_fields(),
            sample=sample,
        )

    def complete(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        sample: int = 0,
    ) -> ModelResponse:
        """Return the cached answer, or ask the wrapped provider and store a non-error answer."""
        key = self.key(messages, options, sample)
        with self.cache.key_lock(key):
            hit = self.cache.get(key)
            if hit is not None:
                return hit
            response = self.inner.complete(messages, options=options, sample=sample)
            self.cache.put(key, provider=self._kind, response=response)
            return response

    def close(self) -> None:
        """Close the wrapped provider if it holds resources (the cache belongs to the caller)."""
        closer = getattr(self.inner, "close", None)
        if callable(closer):
            closer()

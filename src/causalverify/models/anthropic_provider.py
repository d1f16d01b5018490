"""``anthropic/<model>``: the Messages API through the optional ``anthropic`` SDK.

Install with ``pip install 'causalverify[anthropic]'``. The key comes from ``$ANTHROPIC_API_KEY``,
the base URL from the option or ``$ANTHROPIC_BASE_URL``. Retries and error classes are those of
the ``openai`` provider; stop reason ``max_tokens`` marks the answer truncated.
``reasoning_effort`` is sent as ``output_config.effort`` (``low`` ... ``max``); a temperature, when
set, is sent in the request body.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from causalverify.errors import MalformedResponseError, ProviderError, SetupError
from causalverify.models._sdk import SdkProvider
from causalverify.models.base import ModelOptions
from causalverify.models.pricing import PriceTable
from causalverify.models.ratelimit import RateLimiter
from causalverify.models.retry import RetryPolicy
from causalverify.records import Message


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise SetupError(
            "anthropic/<model> needs the anthropic package: pip install 'causalverify[anthropic]'"
        ) from exc
    return anthropic


class AnthropicProvider(SdkProvider):
    """Messages API provider; thread-safe. Parameters as for the ``openai`` provider."""

    kind = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        spec: str,
        base_url: str | None = None,
        api_key: str | None = None,
        prices: PriceTable | None = None,
        rate_limiter: RateLimiter | None = None,
        retry_policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            if self.base_url is None:
                raise ProviderError(f"{spec}: ANTHROPIC_API_KEY is not set; export it")
            key = "not-needed"
        super().__init__(
            model,
            spec=spec,
            sdk=_import_anthropic(),
            prices=prices,
            rate_limiter=rate_limiter,
            retry_policy=retry_policy,
            sleep=sleep,
        )
        self._client = self._sdk.Anthropic(api_key=key, base_url=self.base_url, max_retries=0)

    def _request(self, messages: Sequence[Message], options: ModelOptions) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": options.max_tokens,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
            "timeout": options.timeout_seconds,
        }
        if system:
            body["system"] = system
        if options.reasoning_effort is not None:
            body["output_config"] = {"effort": options.reasoning_effort}
        if options.temperature is not None:
            # current SDKs no longer expose it as an argument; the API still reads it
            body["extra_body"] = {"temperature": options.temperature}
        return body

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        return _parse(self._client.messages.create(**body), self.model)


def _parse(message: Any, default_model: str) -> dict[str, Any]:
    """Turn an SDK ``Message`` into :class:`ModelResponse` fields (text blocks joined)."""
    blocks = getattr(message, "content", None)
    if not isinstance(blocks, list):
        raise MalformedResponseError(f"not a message: {str(message)[:200]!r}")
    text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", None) == "text")
    usage = getattr(message, "usage", None)
    stop = getattr(message, "stop_reason", None)
    return {
        "content": text,
        "stop_reason": stop,
        "truncated": stop == "max_tokens",
        "input_tokens": int(getattr(usage, "input_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "output_tokens", 0) or 0),
        "model": getattr(message, "model", None) or default_model,
    }

"""``openai/<model>``: the official ``openai`` SDK against OpenAI or any compatible server.

The SDK's own retries are switched off (``max_retries=0``); :class:`~causalverify.models.retry.Retrier`
retries 408/409/429/5xx, timeouts, connection errors and malformed bodies, honouring
``Retry-After``. 401/403/404 raise :class:`ProviderError`; other 4xx are a cell error.
"""

from __future__ import annotations

import os
import re
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

BASE_URL_ENV = ("CAUSALVERIFY_OPENAI_BASE_URL", "OPENAI_BASE_URL")
TOKEN_PARAM_ENV = "CAUSALVERIFY_OPENAI_TOKEN_PARAM"
#: Sent as the API key to a local server when none is configured (such servers ignore it).
PLACEHOLDER_KEY = "not-needed"
_NEW_TOKEN_PARAM = re.compile(r"^(o\d|gpt-5)")


def resolve_base_url(base_url: str | None) -> str | None:
    """The explicit base URL, else ``$CAUSALVERIFY_OPENAI_BASE_URL``, else ``$OPENAI_BASE_URL``."""
    if base_url:
        return base_url
    for name in BASE_URL_ENV:
        if os.environ.get(name):
            return os.environ[name]
    return None


def resolve_token_param(model: str, base_url: str | None, explicit: str | None) -> str:
    """Which request field carries ``max_tokens``.

    OpenAI's reasoning models accept only ``max_completion_tokens``; vLLM, Ollama and llama.cpp
    accept ``max_tokens``. Explicit argument, then ``$CAUSALVERIFY_OPENAI_TOKEN_PARAM``, then
    ``max_completion_tokens`` for o-series/gpt-5 on the official endpoint, else ``max_tokens``.
    """
    choice = explicit or os.environ.get(TOKEN_PARAM_ENV)
    if choice is None:
        official = base_url is None or "api.openai.com" in base_url
        use_new = official and bool(_NEW_TOKEN_PARAM.match(model))
        choice = "max_completion_tokens" if use_new else "max_tokens"
    if choice not in ("max_tokens", "max_completion_tokens"):
        raise SetupError(
            f"token parameter must be max_tokens or max_completion_tokens, not {choice!r}"
        )
    return choice


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - openai is a core dependency
        raise SetupError("the openai package is not installed: pip install openai") from exc
    return openai


class OpenAIProvider(SdkProvider):
    """Chat completions through the ``openai`` SDK; thread-safe.

    Parameters
    ----------
    model
        Model name sent to the server.
    spec
        The provider spec this was created from (``openai/<model>``).
    base_url
        Server URL (``http://host:port/v1``); see :func:`resolve_base_url`.
    api_key
        Key; defaults to ``$OPENAI_API_KEY`` (a placeholder when a base URL is set and no key).
    prices, rate_limiter, retry_policy, sleep
        Cost table, optional client-side rate limit, retry policy and injectable sleep.
    token_param
        ``"max_tokens"`` or ``"max_completion_tokens"``; see :func:`resolve_token_param`.
    """

    kind = "openai"

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
        token_param: str | None = None,
    ) -> None:
        self.base_url = resolve_base_url(base_url)
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ProviderError(
                    f"{spec}: OPENAI_API_KEY is not set; export it, or point --base-url "
                    "(or CAUSALVERIFY_OPENAI_BASE_URL) at a local OpenAI-compatible server"
                )
            key = PLACEHOLDER_KEY
        self.token_param = resolve_token_param(model, self.base_url, token_param)
        super().__init__(
            model,
            spec=spec,
            sdk=_import_openai(),
            prices=prices,
            rate_limiter=rate_limiter,
            retry_policy=retry_policy,
            sleep=sleep,
        )
        self._client = self._sdk.OpenAI(api_key=key, base_url=self.base_url, max_retries=0)

    def _request(self, messages: Sequence[Message], options: ModelOptions) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            self.token_param: options.max_tokens,
            "timeout": options.timeout_seconds,
        }
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.reasoning_effort is not None:
            body["reasoning_effort"] = options.reasoning_effort
        if options.seed is not None:
            body["seed"] = options.seed
        return body

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        return _parse(self._client.chat.completions.create(**body), self.model)


def _parse(completion: Any, default_model: str) -> dict[str, Any]:
    """Turn an SDK ``ChatCompletion`` into :class:`ModelResponse` fields."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list):
        raise MalformedResponseError(f"not a chat completion: {str(completion)[:200]!r}")
    if not choices:
        raise MalformedResponseError("chat completion without choices")
    choice = choices[0]
    usage = getattr(completion, "usage", None)
    finish = choice.finish_reason
    return {
        "content": choice.message.content or "",
        "stop_reason": finish,
        "truncated": finish == "length",
        "input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        "model": getattr(completion, "model", None) or default_model,
    }

"""What the ``openai`` and ``anthropic`` providers share: error classification (the two SDKs use
the same exception names) and the retrying, rate-limited, priced :class:`SdkProvider` base."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pydantic

from causalverify.errors import MalformedResponseError
from causalverify.models.base import ModelOptions
from causalverify.models.pricing import PriceTable
from causalverify.models.ratelimit import RateLimiter
from causalverify.models.retry import Failure, Retrier, RetryPolicy, parse_retry_after
from causalverify.records import Message, ModelResponse

_TRANSIENT_STATUS = frozenset({408, 409, 429})
_SETUP_STATUS = {
    401: "the API key was rejected",
    403: "access denied",
    404: "model or URL not found",
}


#: consecutive connection failures, with no answer ever received, after which the server is
#: taken to be unreachable and the run stops (a circuit breaker) instead of failing every cell
UNREACHABLE_AFTER = 3


def classify_status(spec: str, status: int, headers: dict[str, str], exc: Exception) -> Failure:
    """408/409/429/5xx are transient (with ``Retry-After``); 401/403/404 setup; other 4xx cell."""
    if status in _TRANSIENT_STATUS or status >= 500:
        return Failure(
            kind="transient",
            message=f"HTTP {status}: {exc}",
            retry_after=parse_retry_after(headers),
        )
    if status in _SETUP_STATUS:
        return Failure(
            kind="setup", message=f"{spec}: {_SETUP_STATUS[status]} (HTTP {status}): {exc}"
        )
    return Failure(kind="cell", message=f"HTTP {status}: {exc}")


def classify_sdk_error(sdk: Any, spec: str, exc: Exception) -> Failure:
    """Classify an exception raised by an SDK call; unknown exceptions are re-raised."""
    if isinstance(exc, sdk.APITimeoutError):
        return Failure(kind="transient", message="request timed out")
    if isinstance(exc, sdk.APIConnectionError):
        return Failure(kind="transient", message=f"connection error: {exc}")
    if isinstance(exc, sdk.APIStatusError):
        return classify_status(spec, exc.status_code, dict(exc.response.headers), exc)
    malformed = (sdk.APIResponseValidationError, json.JSONDecodeError, pydantic.ValidationError)
    if isinstance(exc, (*malformed, MalformedResponseError)):
        return Failure(kind="transient", message=f"malformed response body: {exc}")
    raise exc


class SdkProvider:
    """Base of the SDK providers: retries, client-side rate limit, latency and cost.

    A subclass builds ``self._client`` after calling ``__init__`` and implements
    :meth:`_request` (the SDK call's keyword arguments) and :meth:`_send` (one call, parsed into
    :class:`ModelResponse` fields; a malformed answer raises :class:`MalformedResponseError`).

    Parameters
    ----------
    model, spec
        Model name sent to the server and the provider spec it came from.
    sdk
        The imported SDK module (its exception classes drive :meth:`classify`).
    prices, rate_limiter, retry_policy, sleep
        Cost table, optional client-side rate limit, retry policy and injectable sleep.
    """

    kind: str
    _client: Any

    def __init__(
        self,
        model: str,
        *,
        spec: str,
        sdk: Any,
        prices: PriceTable | None,
        rate_limiter: RateLimiter | None,
        retry_policy: RetryPolicy | None,
        sleep: Callable[[float], None],
    ) -> None:
        self.spec = spec
        self.model = model
        self.prices = prices or PriceTable()
        self._sdk = sdk
        self._limiter = rate_limiter
        self._retrier = Retrier(retry_policy, sleep=sleep, label=spec)
        self._breaker = threading.Lock()
        self._connection_failures = 0
        self._answered = False

    def _request(self, messages: Sequence[Message], options: ModelOptions) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _attempt(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._limiter is not None:
            self._limiter.acquire()
        answer = self._send(body)
        with self._breaker:
            self._connection_failures, self._answered = 0, True
        return answer

    def classify(self, exc: Exception) -> Failure:
        """Sort one attempt's exception into transient / cell / setup (re-raise unknown ones).

        A server that was never reached after :data:`UNREACHABLE_AFTER` consecutive connection
        failures is a setup failure naming the URL, so a dead or mistyped ``--base-url`` stops
        the run in seconds.
        """
        failure = classify_sdk_error(self._sdk, self.spec, exc)
        if not isinstance(exc, self._sdk.APIConnectionError) or isinstance(
            exc, self._sdk.APITimeoutError
        ):
            return failure
        with self._breaker:
            self._connection_failures += 1
            tripped = not self._answered and self._connection_failures >= UNREACHABLE_AFTER
        if not tripped:
            return failure
        url = getattr(self, "base_url", None) or "the provider's default URL"
        cause = exc.__cause__ or exc
        return Failure(
            kind="setup",
            message=(
                f"{self.spec}: cannot reach {url} ({type(cause).__name__}: {cause}) after "
                f"{self._connection_failures} attempts; check --base-url and that the server runs"
            ),
        )

    def complete(
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        sample: int = 0,
    ) -> ModelResponse:
        """Ask the model once (with retries); see :class:`~causalverify.models.base.Provider`.

        ``sample`` only tells repeated answers apart in a cache; the request does not carry it.
        """
        body = self._request(messages, options)
        start = time.monotonic()
        outcome = self._retrier.run(lambda: self._attempt(body), self.classify)
        latency = time.monotonic() - start
        if outcome.value is None:
            return ModelResponse(
                content=None, error=outcome.error, latency_seconds=latency, model=self.model
            )
        parsed = outcome.value
        cost = self.prices.cost(self.model, parsed["input_tokens"], parsed["output_tokens"])
        return ModelResponse(**parsed, cost_usd=cost, latency_seconds=latency)

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

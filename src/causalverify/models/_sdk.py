"""Error classification shared by the ``openai`` and ``anthropic`` SDKs (same exception names)."""

from __future__ import annotations

import json
from typing import Any

import pydantic

from causalverify.models.retry import Failure, parse_retry_after

_TRANSIENT_STATUS = frozenset({408, 409, 429})
_SETUP_STATUS = {
    401: "the API key was rejected",
    403: "access denied",
    404: "model or URL not found",
}


class MalformedResponse(ValueError):
    """The server answered with a body that is not the expected completion."""


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
    if isinstance(exc, (*malformed, MalformedResponse)):
        return Failure(kind="transient", message=f"malformed response body: {exc}")
    raise exc

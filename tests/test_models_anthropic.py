"""The ``anthropic/<model>`` provider through the real SDK against the loopback fake server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from causalverify.errors import ProviderError
from causalverify.models import ModelOptions, RetryPolicy, get_provider
from causalverify.models.base import Provider
from causalverify.records import Message
from fake_openai import ErrorReply, FakeOpenAIServer, Reply
from models_helpers import SleepRecorder

MESSAGES = [
    Message(role="system", content="You are an econometrician."),
    Message(role="user", content="Estimate the effect."),
]
OPTIONS = ModelOptions(max_tokens=300, timeout_seconds=10.0)

pytest.importorskip("anthropic", reason="the optional anthropic package is not installed")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def make(server: FakeOpenAIServer, sleeps: SleepRecorder, **kwargs: object) -> Provider:
    return get_provider(
        "anthropic/claude-sonnet-4-test",
        base_url=server.anthropic_url,
        sleep=sleeps,
        **kwargs,  # type: ignore[arg-type]
    )


def test_messages_request_and_response(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-test")
    server.push(Reply(content="## 1. Identification", prompt_tokens=1000, completion_tokens=2000))
    provider = make(server, SleepRecorder())
    response = provider.complete(MESSAGES, options=ModelOptions(temperature=0.2, max_tokens=300))
    provider.close()
    assert response.content == "## 1. Identification" and response.error is None
    assert response.stop_reason == "end_turn" and not response.truncated
    # claude-sonnet-4 list price: 3 / 15 USD per million tokens (prefix match)
    assert response.cost_usd == pytest.approx((1000 * 3.0 + 2000 * 15.0) / 1e6)
    (request,) = server.requests
    assert request.path == "/v1/messages"
    # the SDK decides the header (x-api-key or a bearer token); the key must arrive either way
    sent = request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    assert "ak-test" in sent
    assert request.body == {
        "model": "claude-sonnet-4-test",
        "max_tokens": 300,
        "system": "You are an econometrician.",
        "messages": [{"role": "user", "content": "Estimate the effect."}],
        "temperature": 0.2,
    }


def test_max_tokens_stop_reason_is_truncated(server):
    server.push(Reply(content="partial", finish_reason="length"))
    provider = make(server, SleepRecorder())
    response = provider.complete(MESSAGES, options=OPTIONS)
    provider.close()
    assert response.truncated and response.stop_reason == "max_tokens"


def test_overloaded_is_retried_with_retry_after(server):
    sleeps = SleepRecorder()
    server.push(ErrorReply(529, headers={"retry-after": "4"}), Reply(content="ok"))
    provider = make(server, sleeps)
    response = provider.complete(MESSAGES, options=OPTIONS)
    provider.close()
    assert response.content == "ok" and sleeps.calls == [4.0]
    assert server.request_count == 2


def test_exhausted_retries_and_auth_error(server):
    server.push(ErrorReply(500), ErrorReply(500), ErrorReply(401))
    provider = make(server, SleepRecorder(), retry_policy=RetryPolicy(max_attempts=2))
    failed = provider.complete(MESSAGES, options=OPTIONS)
    assert failed.content is None and failed.error is not None and "500" in failed.error
    with pytest.raises(ProviderError, match="HTTP 401"):
        provider.complete(MESSAGES, options=OPTIONS)
    provider.close()
    assert server.request_count == 3


def test_reasoning_effort_is_sent_as_output_effort(server):
    provider = make(server, SleepRecorder())
    provider.complete(MESSAGES, options=ModelOptions(reasoning_effort="high"))
    provider.close()
    body = server.requests[0].body
    assert body is not None
    assert body["output_config"] == {"effort": "high"}
    assert body["max_tokens"] == 8192 and "temperature" not in body


def test_missing_key_without_base_url(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        get_provider("anthropic/claude-sonnet-4")

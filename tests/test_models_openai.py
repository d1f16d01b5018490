"""The ``openai/<model>`` provider through the real SDK against a loopback fake server."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from causalverify.errors import ProviderError
from causalverify.models import (
    ModelOptions,
    PriceTable,
    ResponseCache,
    RetryPolicy,
    get_provider,
)
from causalverify.models.base import Provider
from causalverify.records import Message
from fake_openai import ErrorReply, FakeOpenAIServer, RawReply, Reply
from models_helpers import SleepRecorder

PRICES = {"test-model": {"input": 3.0, "output": 15.0}}
FAST = ModelOptions(timeout_seconds=10.0, max_tokens=256)


def ask(text: str) -> list[Message]:
    return [
        Message(role="system", content="You are terse."),
        Message(role="user", content=text),
    ]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def make(server: FakeOpenAIServer, sleeps: SleepRecorder, **kwargs: object) -> Provider:
    kwargs.setdefault("prices", PRICES)
    return get_provider("openai/test-model", base_url=server.url, sleep=sleeps, **kwargs)  # type: ignore[arg-type]


def close(provider: Provider) -> None:
    provider.close()


def test_success_sends_request_and_accounts_tokens_and_cost(server, sleeps):
    server.push(Reply(content="## 1. Strategy", prompt_tokens=1200, completion_tokens=800))
    provider = make(server, sleeps)
    options = ModelOptions(temperature=0.3, max_tokens=512, reasoning_effort="low")
    response = provider.complete(ask("question"), options=options)
    close(provider)
    assert response.content == "## 1. Strategy"
    assert response.error is None and not response.truncated and not response.cached
    assert (response.input_tokens, response.output_tokens) == (1200, 800)
    assert response.cost_usd == pytest.approx((1200 * 3.0 + 800 * 15.0) / 1e6)
    assert response.stop_reason == "stop" and response.model == "test-model"
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "question"},
        ],
        "max_tokens": 512,
        "temperature": 0.3,
        "reasoning_effort": "low",
    }
    assert sleeps.calls == []


def test_unset_options_are_not_sent(server, sleeps):
    provider = make(server, sleeps)
    provider.complete(ask("q"), options=ModelOptions())
    close(provider)
    body = server.requests[0].body
    assert body is not None
    assert "temperature" not in body and "reasoning_effort" not in body
    assert body["max_tokens"] == 8192


def test_429_honours_retry_after_seconds(server, sleeps):
    server.push(ErrorReply(429, headers={"Retry-After": "7"}), Reply(content="fine"))
    provider = make(server, sleeps)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content == "fine" and response.error is None
    assert server.request_count == 2
    assert sleeps.calls == [7.0]


def test_503_honours_retry_after_http_date(server, sleeps):
    when = time.time() + 30
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(when))
    server.push(ErrorReply(503, headers={"Retry-After": date}), Reply(content="fine"))
    provider = make(server, sleeps)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content == "fine"
    assert len(sleeps.calls) == 1 and 25.0 <= sleeps.calls[0] <= 31.0


def test_real_wait_for_retry_after(server):
    server.push(ErrorReply(429, headers={"Retry-After": "1"}), Reply(content="fine"))
    provider = get_provider("openai/test-model", base_url=server.url)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    first, second = server.requests
    assert response.content == "fine"
    assert second.received_at - first.received_at >= 0.95


def test_500_then_success_uses_jittered_backoff(server, sleeps):
    server.push(ErrorReply(500), ErrorReply(502), Reply(content="fine"))
    policy = RetryPolicy(base_delay=2.0, seed=11)
    provider = make(server, sleeps, retry_policy=policy)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content == "fine"
    assert server.request_count == 3
    first, second = sleeps.calls
    assert 1.0 <= first <= 2.0 and 2.0 <= second <= 4.0


def test_slow_answer_times_out_then_succeeds(server, sleeps):
    server.push(Reply(content="too late", delay=8.0), Reply(content="in time"))
    provider = make(server, sleeps)
    start = time.monotonic()
    response = provider.complete(ask("q"), options=ModelOptions(timeout_seconds=1.5))
    elapsed = time.monotonic() - start
    close(provider)
    assert response.content == "in time"
    assert server.request_count == 2
    assert 1.5 <= elapsed < 7.0
    assert len(sleeps.calls) == 1


@pytest.mark.parametrize(
    "raw",
    [
        RawReply(b'{"id": "chatcmpl-1", "choi'),
        RawReply(b"<html>bad gateway</html>", content_type="text/html"),
        RawReply(b'{"unexpected": true}'),
    ],
    ids=["truncated-json", "html", "wrong-shape"],
)
def test_malformed_body_is_retried(server, sleeps, raw):
    server.push(raw, Reply(content="fine"))
    provider = make(server, sleeps)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content == "fine" and response.error is None
    assert server.request_count == 2


def test_malformed_body_every_time_is_a_cell_error(server, sleeps):
    server.push(*[RawReply(b"{not json") for _ in range(3)])
    provider = make(server, sleeps, retry_policy=RetryPolicy(max_attempts=3))
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content is None
    assert response.error is not None and "malformed" in response.error
    assert server.request_count == 3


def test_length_finish_reason_is_truncated(server, sleeps):
    server.push(Reply(content="```r\nx <- 1", finish_reason="length", completion_tokens=256))
    provider = make(server, sleeps)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.truncated and response.stop_reason == "length"
    assert response.content == "```r\nx <- 1" and response.error is None


def test_exhausted_retries_return_cell_error(server, sleeps):
    server.push(*[ErrorReply(503, message="overloaded") for _ in range(4)])
    provider = make(server, sleeps, retry_policy=RetryPolicy(max_attempts=4))
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content is None
    assert response.error is not None
    assert "gave up after 4 attempts" in response.error and "503" in response.error
    assert server.request_count == 4 and len(sleeps.calls) == 3


def test_default_policy_makes_six_attempts(server, sleeps):
    server.push(*[ErrorReply(500) for _ in range(6)], Reply(content="never asked"))
    provider = make(server, sleeps)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content is None and server.request_count == 6


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_not_found_raise_provider_error(server, sleeps, status):
    server.push(ErrorReply(status, message="nope"))
    provider = make(server, sleeps)
    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        provider.complete(ask("q"), options=FAST)
    close(provider)
    assert server.request_count == 1


def test_400_is_a_cell_error_without_retry(server, sleeps):
    server.push(ErrorReply(400, message="context too long"))
    provider = make(server, sleeps)
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content is None and response.error is not None
    assert "context too long" in response.error
    assert server.request_count == 1 and sleeps.calls == []


def test_connection_refused_is_retried_then_cell_error(sleeps):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = get_provider(
        "openai/test-model",
        base_url=f"http://127.0.0.1:{port}/v1",
        retry_policy=RetryPolicy(max_attempts=2),
        sleep=sleeps,
    )
    response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content is None
    assert response.error is not None and "connection" in response.error.lower()
    assert len(sleeps.calls) == 1


def test_cache_prevents_a_second_call(server, sleeps, tmp_path: Path):
    server.push(Reply(content="paid once", prompt_tokens=100, completion_tokens=50))
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        provider = make(server, sleeps, cache=cache)
        first = provider.complete(ask("q"), options=FAST)
        close(provider)
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        provider = make(server, sleeps, cache=cache)
        second = provider.complete(ask("q"), options=FAST)
        close(provider)
    assert server.request_count == 1
    assert first.content == second.content == "paid once"
    assert not first.cached and second.cached
    assert first.cost_usd == pytest.approx((100 * 3.0 + 50 * 15.0) / 1e6)
    assert second.cost_usd == 0.0
    assert (second.input_tokens, second.output_tokens) == (100, 50)


def test_cache_key_separates_options_samples_and_messages(server, sleeps, tmp_path: Path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        provider = make(server, sleeps, cache=cache)
        for sample in (0, 1, 0):
            provider.complete(ask("q"), options=FAST, sample=sample)
        provider.complete(
            ask("q"), options=ModelOptions(temperature=1.0, timeout_seconds=10.0, max_tokens=256)
        )
        provider.complete(ask("other"), options=FAST)
        # the timeout does not change the answer, so it is not part of the key
        provider.complete(ask("other"), options=ModelOptions(timeout_seconds=9.0, max_tokens=256))
        close(provider)
        assert len(cache) == 4
    assert server.request_count == 4


def test_errors_are_not_cached_but_truncated_answers_are(server, sleeps, tmp_path: Path):
    server.push(ErrorReply(400), Reply(content="cut", finish_reason="length"))
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        provider = make(server, sleeps, cache=cache)
        failed = provider.complete(ask("q"), options=FAST)
        truncated = provider.complete(ask("q"), options=FAST)
        again = provider.complete(ask("q"), options=FAST)
        close(provider)
    assert failed.error is not None and truncated.truncated
    assert again.cached and again.truncated and again.content == "cut"
    assert server.request_count == 2


def test_costs_add_up_over_calls(server, sleeps):
    tokens = [(100, 10), (2000, 700), (5, 3000)]
    server.push(*[Reply(prompt_tokens=i, completion_tokens=o) for i, o in tokens])
    table = PriceTable(PRICES)
    provider = make(server, sleeps, prices=table)
    costs = [provider.complete(ask(str(k)), options=FAST).cost_usd for k in range(3)]
    close(provider)
    expected = sum(i * 3.0 + o * 15.0 for i, o in tokens) / 1e6
    assert sum(costs) == pytest.approx(expected, rel=1e-12)


def test_concurrent_calls_get_their_own_answers(server, sleeps, tmp_path: Path):
    prompts = [f"prompt {k % 12}" for k in range(36)]
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        provider = make(server, sleeps, cache=cache)
        with ThreadPoolExecutor(max_workers=8) as pool:
            responses = list(pool.map(lambda p: provider.complete(ask(p), options=FAST), prompts))
        close(provider)
    assert [r.content for r in responses] == [f"echo: {p}" for p in prompts]
    assert server.request_count == 12
    assert sum(not r.cached for r in responses) == 12


def test_rate_limit_spaces_requests(server):
    provider = get_provider("openai/test-model", base_url=server.url, max_requests_per_minute=600)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(lambda k: provider.complete(ask(str(k)), options=FAST), range(6)))
    elapsed = time.monotonic() - start
    close(provider)
    # 10 requests per second, burst 1: the sixth request may leave 0.5 s after the first
    assert server.request_count == 6
    assert elapsed >= 0.49


def test_base_url_from_environment(server, monkeypatch):
    monkeypatch.setenv("CAUSALVERIFY_OPENAI_BASE_URL", server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CAUSALVERIFY_OPENAI_TOKEN_PARAM", "max_completion_tokens")
    provider = get_provider("openai/test-model")
    response = provider.complete(ask("env"), options=FAST)
    close(provider)
    assert response.content == "echo: env"
    request = server.requests[0]
    assert request.headers.get("authorization") == "Bearer not-needed"
    assert request.body is not None and request.body["max_completion_tokens"] == 256
    assert "max_tokens" not in request.body


def test_api_key_is_sent(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    provider = get_provider("openai/test-model", base_url=server.url)
    provider.complete(ask("k"), options=FAST)
    close(provider)
    assert server.requests[0].headers.get("authorization") == "Bearer sk-test-123"


def test_missing_key_without_base_url_is_a_setup_error(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CAUSALVERIFY_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        get_provider("openai/gpt-4o")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_stops_fast_naming_the_url(sleeps):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    provider = get_provider("openai/test-model", base_url=url, sleep=sleeps)
    with pytest.raises(ProviderError, match=f"cannot reach {url}.*check --base-url"):
        provider.complete(ask("q"), options=FAST)
    close(provider)
    assert len(sleeps.calls) == 2  # three attempts of the default six, then the breaker trips


def test_a_server_that_answered_once_is_not_declared_unreachable(server, sleeps):
    import openai

    server.push(Reply(content="hello", prompt_tokens=1, completion_tokens=1))
    provider = make(server, sleeps)
    assert provider.complete(ask("q"), options=FAST).content == "hello"
    refused = openai.APIConnectionError(message="Connection refused", request=None)  # type: ignore[arg-type]
    failures = [provider.classify(refused) for _ in range(5)]
    close(provider)
    assert {f.kind for f in failures} == {"transient"}  # it went away mid-run: retry, do not stop


def test_retries_are_announced_while_they_happen_and_shown_under_the_bar(server, sleeps):
    import io

    from rich.console import Console, Group

    from causalverify.cli._common import status_progress, watch_retries

    server.push(ErrorReply(429, headers={"Retry-After": "3"}), ErrorReply(503), Reply("fine"))
    provider = make(server, sleeps, retry_policy=RetryPolicy(max_attempts=4, seed=1))
    out = io.StringIO()
    bar = status_progress(Console(file=out, width=200, color_system=None))
    seen: list[str] = []

    def sleep_and_look(seconds: float) -> None:  # what the bar shows during the wait
        seen.append(bar.retries.line())
        sleeps(seconds)

    provider._retrier._sleep = sleep_and_look  # type: ignore[attr-defined]
    with watch_retries() as watch:
        bar.retries = watch
        response = provider.complete(ask("q"), options=FAST)
    close(provider)
    assert response.content == "fine" and watch.count == 2
    assert seen[0] == (
        "1 retry so far; latest: openai/test-model: attempt 1 of 4 failed (HTTP 429: "
        + seen[0].split("(HTTP 429: ", 1)[1]
    )
    assert seen[0].endswith("; retrying in 3.0 s") and "attempt 2 of 4" in seen[1]
    assert seen[1].startswith("2 retries so far") and "HTTP 503" in seen[1]
    bar.console.print(Group(*bar.get_renderables()))
    assert "2 retries so far" in out.getvalue()
    # outside the block nothing listens any more
    provider = make(server, sleeps, retry_policy=RetryPolicy(max_attempts=2))
    server.push(ErrorReply(500), Reply("ok"))
    provider.complete(ask("q"), options=FAST)
    close(provider)
    assert watch.count == 2

"""Unit tests of the provider plumbing: spec parsing, retries, rate limit, prices, cache."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalverify.errors import ProviderError, SetupError
from causalverify.models import (
    KINDS,
    ModelOptions,
    PriceTable,
    RateLimiter,
    ResponseCache,
    RetryPolicy,
    default_cache_path,
    get_provider,
    load_prices,
    parse_spec,
)
from causalverify.models.cache import cache_key
from causalverify.models.retry import Failure, Retrier, parse_retry_after
from causalverify.records import Message, ModelResponse
from models_helpers import SleepRecorder

# -- specs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai/gpt-4o", ("openai", "gpt-4o")),
        ("openai/meta-llama/Llama-3-8B", ("openai", "meta-llama/Llama-3-8B")),
        ("replay/out/dir:gpt-4o", ("replay", "out/dir:gpt-4o")),
        ("reference/textbook", ("reference", "textbook")),
    ],
)
def test_parse_spec(spec, expected):
    assert parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["gpt-4o", "mistral/large", "openai/", "/x", ""])
def test_unknown_spec_lists_kinds(spec):
    with pytest.raises(ProviderError) as info:
        get_provider(spec)
    for kind in KINDS:
        assert kind in str(info.value)


def test_importing_models_does_not_import_sdks():
    code = (
        "import sys, causalverify.models; "
        "print(sorted(k for k in ('openai', 'anthropic') if k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- retries -----------------------------------------------------------------------------------


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "-3"}) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None
    when = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    header = format_datetime(when, usegmt=True)
    now = when.timestamp() - 42.0
    assert parse_retry_after({"Retry-After": header}, now=lambda: now) == pytest.approx(42.0)


def test_backoff_is_seeded_bounded_and_capped():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, seed=3)
    a = [Retrier(policy).backoff(k) for k in range(1, 7)]
    b = [Retrier(policy).backoff(k) for k in range(1, 7)]
    assert a == b
    for k, delay in enumerate(a, start=1):
        cap = min(8.0, 2.0 ** (k - 1))
        assert cap / 2 <= delay <= cap
    other = [Retrier(RetryPolicy(seed=4)).backoff(k) for k in range(1, 7)]
    assert other != a


def test_retry_after_is_capped():
    retrier = Retrier(RetryPolicy(max_retry_after=30.0))
    failure = Failure(kind="transient", message="x", retry_after=3600.0)
    assert retrier.delay_for(failure, 1) == 30.0


def test_retrier_cell_and_setup_failures():
    sleeps = SleepRecorder()
    retrier = Retrier(RetryPolicy(max_attempts=5), sleep=sleeps)
    calls = []

    def fail() -> int:
        calls.append(1)
        raise ValueError("boom")

    outcome = retrier.run(fail, lambda e: Failure(kind="cell", message=str(e)))
    assert outcome.value is None and outcome.error == "boom" and len(calls) == 1
    with pytest.raises(ProviderError, match="bad key"):
        retrier.run(fail, lambda e: Failure(kind="setup", message="bad key"))
    assert sleeps.calls == []


def test_retrier_reraises_unclassified_errors():
    def classify(exc: Exception) -> Failure:
        raise exc

    def fail() -> int:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        Retrier().run(fail, classify)


# -- rate limit --------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def test_rate_limiter_spaces_requests():
    clock = FakeClock()
    limiter = RateLimiter(120, clock=clock, sleep=clock.sleep)  # 2 per second
    waits = [limiter.acquire() for _ in range(5)]
    assert waits[0] == 0.0
    assert waits[1:] == pytest.approx([0.5] * 4)
    assert clock.now == pytest.approx(2.0)


def test_rate_limiter_burst_and_refill():
    clock = FakeClock()
    limiter = RateLimiter(60, burst=3, clock=clock, sleep=clock.sleep)
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire() == pytest.approx(1.0)
    clock.now += 10.0  # quiet spell refills to capacity only
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire() == pytest.approx(1.0)


def test_rate_limiter_threads_reserve_distinct_slots():
    limiter = RateLimiter(60, clock=lambda: 0.0, sleep=lambda s: None)
    with ThreadPoolExecutor(max_workers=8) as pool:
        waits = sorted(pool.map(lambda _: limiter._reserve(), range(20)))
    assert waits == pytest.approx([float(k) for k in range(20)])


def test_rate_limiter_rejects_bad_rates():
    with pytest.raises(ValueError):
        RateLimiter(0)
    with pytest.raises(ValueError):
        RateLimiter(10, burst=0.5)


# -- prices ------------------------------------------------------------------------------------


def test_price_lookup_exact_prefix_and_override():
    table = PriceTable({"gpt-4o": {"input": 1.0, "output": 2.0}, "my-local": (0.0, 0.0)})
    assert table.cost("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert table.cost("gpt-4o-2024-08-06", 1_000_000, 0) == pytest.approx(1.0)
    mini = table.lookup("gpt-4o-mini-2024-07-18")
    assert mini is not None and mini.input == 0.15
    assert table.cost("openai/gpt-4.1-mini", 0, 1_000_000) == pytest.approx(1.60)
    assert table.cost("my-local", 10**6, 10**6) == 0.0
    assert table.unpriced == frozenset()


def test_unknown_model_costs_zero_and_warns_once(caplog):
    table = PriceTable()
    with caplog.at_level(logging.WARNING, logger="causalverify.models.pricing"):
        assert table.cost("mystery-7b", 1000, 1000) == 0.0
        assert table.cost("mystery-7b", 5000, 5000) == 0.0
    assert [r.getMessage() for r in caplog.records].count(
        "no price known for model 'mystery-7b': its cost is counted as 0"
    ) == 1
    assert table.unpriced == frozenset({"mystery-7b"})


def test_load_prices_toml_and_json(tmp_path: Path):
    toml = tmp_path / "prices.toml"
    toml.write_text('[models."local-llama"]\ninput = 0.2\noutput = 0.4\n')
    table = PriceTable(load_prices(toml))
    assert table.cost("local-llama", 10**6, 10**6) == pytest.approx(0.6)
    js = tmp_path / "prices.json"
    js.write_text(json.dumps({"gpt-4o": {"input": 5, "output": 20}}))
    assert PriceTable(load_prices(js)).cost("gpt-4o", 10**6, 0) == pytest.approx(5.0)


def test_load_prices_errors(tmp_path: Path):
    with pytest.raises(SetupError, match="cannot read"):
        load_prices(tmp_path / "absent.toml")
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpt-4o": {"input": 1}}')
    with pytest.raises(SetupError, match="gpt-4o"):
        load_prices(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("[models\n")
    with pytest.raises(SetupError, match="not valid"):
        load_prices(broken)


# -- cache -------------------------------------------------------------------------------------


def key(**overrides: object) -> str:
    args: dict = {
        "kind": "openai",
        "model": "m",
        "base_url": None,
        "messages": [Message(role="user", content="hi")],
        "options": ModelOptions().cache_fields(),
        "sample": 0,
    }
    args.update(overrides)
    return cache_key(**args)


def test_cache_key_is_stable_and_sensitive():
    assert key() == key()
    assert len(key()) == 64
    variants = {
        key(kind="anthropic"),
        key(model="m2"),
        key(base_url="http://127.0.0.1:1/v1"),
        key(messages=[Message(role="user", content="hi!")]),
        key(options=ModelOptions(temperature=0.0).cache_fields()),
        key(sample=1),
    }
    assert key() not in variants and len(variants) == 6


def test_cache_roundtrip_and_error_responses(tmp_path: Path):
    path = tmp_path / "sub" / "r.sqlite"
    good = ModelResponse(content="x", input_tokens=3, output_tokens=4, cost_usd=0.5, model="m")
    with ResponseCache(path) as cache:
        assert cache.get("k") is None
        assert cache.put("k", provider="openai", response=good)
        assert not cache.put(
            "e", provider="openai", response=ModelResponse(content=None, error="503")
        )
        assert len(cache) == 1
    with ResponseCache(path) as cache:
        hit = cache.get("k")
        assert hit is not None
        assert hit.cached and hit.cost_usd == 0.0 and hit.content == "x"
        assert (hit.input_tokens, hit.output_tokens) == (3, 4)
        assert cache.get("e") is None
    import sqlite3

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT cost_usd FROM responses").fetchone()[0] == 0.5


def test_default_cache_path(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("CAUSALVERIFY_CACHE_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "responses.sqlite"
    monkeypatch.delenv("CAUSALVERIFY_CACHE_DIR")
    assert default_cache_path() == Path.home() / ".cache" / "causalverify" / "responses.sqlite"


def test_cache_unwritable_location_is_setup_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SetupError, match="response cache"):
        ResponseCache(blocker / "r.sqlite")


@given(
    rpm=st.floats(min_value=1.0, max_value=6000.0),
    burst=st.integers(min_value=1, max_value=5),
    gaps=st.lists(st.floats(min_value=0.0, max_value=3.0), min_size=1, max_size=40),
)
@settings(max_examples=60, deadline=None)
def test_rate_limiter_never_exceeds_rate_plus_burst(rpm, burst, gaps):
    clock = FakeClock()
    limiter = RateLimiter(rpm, burst=burst, clock=clock, sleep=clock.sleep)
    sent = []
    for gap in gaps:
        clock.now += gap
        limiter.acquire()
        sent.append(clock.now)
    rate = rpm / 60.0
    for i, start in enumerate(sent):
        for j in range(i, len(sent)):
            # requests i..j went out within sent[j] - start seconds
            assert j - i + 1 <= burst + rate * (sent[j] - start) + 1e-6


def test_public_api_matches_all():
    """``__all__`` holds every public name the package defines and every name it re-exports from
    its own modules, and nothing else (never a helper it imports, such as ``time`` or ``Any``)."""
    import ast

    import causalverify.models as models

    tree = ast.parse(Path(models.__file__).read_text())
    defined, reexported = set(), set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(models.__name__):
            reexported |= {alias.asname or alias.name for alias in node.names}
    public = {name for name in defined if not name.startswith("_")}
    exported = set(models.__all__)
    assert len(exported) == len(models.__all__)
    # the package uses none of what it imports: each name is there to be exported
    assert exported == public | reexported, exported ^ (public | reexported)
    namespace: dict = {}
    exec("from causalverify.models import *", namespace)  # every listed name exists
    assert set(namespace) - {"__builtins__"} == exported
    contract = {"ModelOptions", "CellContext", "Provider", "get_provider", "ResponseCache", "ask"}
    assert contract <= exported


def test_token_parameter_choice(monkeypatch):
    from causalverify.models.openai_provider import resolve_token_param

    monkeypatch.delenv("CAUSALVERIFY_OPENAI_TOKEN_PARAM", raising=False)
    assert resolve_token_param("gpt-4o", None, None) == "max_tokens"
    assert resolve_token_param("o3-mini", None, None) == "max_completion_tokens"
    assert (
        resolve_token_param("gpt-5", "https://api.openai.com/v1", None) == "max_completion_tokens"
    )
    assert resolve_token_param("gpt-5", "http://127.0.0.1:8000/v1", None) == "max_tokens"
    assert resolve_token_param("gpt-4o", None, "max_completion_tokens") == "max_completion_tokens"
    monkeypatch.setenv("CAUSALVERIFY_OPENAI_TOKEN_PARAM", "max_completion_tokens")
    assert (
        resolve_token_param("llama3", "http://127.0.0.1:8000/v1", None) == "max_completion_tokens"
    )
    with pytest.raises(SetupError, match="token parameter"):
        resolve_token_param("gpt-4o", None, "tokens")


def test_unseeded_retriers_do_not_retry_in_lockstep():
    """Two processes (or providers) that fail together must not wait the same jittered times."""
    waits = {tuple(Retrier(RetryPolicy()).backoff(k) for k in range(1, 7)) for _ in range(4)}
    assert len(waits) == 4

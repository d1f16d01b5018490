"""Retries with exponential backoff and jitter, honouring ``Retry-After``.

Providers classify each exception of one attempt as a :class:`Failure`: ``transient`` (retry),
``cell`` (give up on this cell, no retry) or ``setup`` (raise :class:`ProviderError`). The
:class:`Retrier` owns the loop, the seeded jitter RNG and the (injectable) sleep, and announces
every retry on the :data:`RETRY_LOGGER` logger.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Generic, Literal, TypeVar

from causalverify.errors import ProviderError

T = TypeVar("T")
#: every retry is announced here at INFO (``extra={"retry": RetryNotice}``), so a command can
#: show retries while they happen; nothing is printed unless a handler is attached
RETRY_LOGGER = "causalverify.models.retry"
_log = logging.getLogger(RETRY_LOGGER)
FailureKind = Literal["transient", "cell", "setup"]


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to retry.

    Parameters
    ----------
    max_attempts
        Total attempts, the first included.
    base_delay
        Backoff before the second attempt; doubles each time.
    max_delay
        Cap of the exponential backoff.
    max_retry_after
        Cap applied to a server's ``Retry-After``.
    seed
        Seed of the jitter RNG, for tests that need reproducible waits. ``None`` (the default)
        draws a fresh seed from the operating system for every :class:`Retrier`, so processes
        and providers that fail together do not retry in lockstep.
    """

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_after: float = 300.0
    seed: int | None = None


@dataclass(frozen=True, kw_only=True)
class Failure:
    """The classification of one failed attempt."""

    kind: FailureKind
    message: str
    retry_after: float | None = None


@dataclass(frozen=True, kw_only=True)
class RetryNotice:
    """One failed attempt that will be retried: who, why, which attempt and the wait before the
    next one."""

    label: str
    message: str
    attempt: int
    max_attempts: int
    wait_seconds: float

    def __str__(self) -> str:
        return (
            f"{self.label}: attempt {self.attempt} of {self.max_attempts} failed "
            f"({self.message[:200]}); retrying in {self.wait_seconds:.1f} s"
        )


@dataclass(frozen=True, kw_only=True)
class Outcome(Generic[T]):
    """The result of :meth:`Retrier.run`: a value, or the error text of the last failure."""

    value: T | None
    error: str | None
    attempts: int


def parse_retry_after(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date).

    Returns ``None`` when no usable header is present; negative waits become 0.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, when.timestamp() - now())
    return max(0.0, value) if math.isfinite(value) else None


class Retrier:
    """Runs an attempt function until it succeeds, fails for good, or attempts run out.

    Thread-safe: the jitter RNG is guarded by a lock, and nothing else is shared.
    """

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        label: str = "request",
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.label = label
        if self.policy.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._sleep = sleep
        seed = self.policy.seed
        self._rng = random.Random(
            seed if seed is not None else random.SystemRandom().getrandbits(64)
        )
        self._lock = threading.Lock()

    def backoff(self, retry: int) -> float:
        """Delay before retry number ``retry`` (1-based): equal-jitter exponential backoff."""
        cap = min(self.policy.max_delay, self.policy.base_delay * 2.0 ** (retry - 1))
        with self._lock:
            u = self._rng.random()
        return cap / 2.0 + u * cap / 2.0

    def delay_for(self, failure: Failure, retry: int) -> float:
        """The wait before the next attempt: the server's ``Retry-After`` if given, else backoff."""
        if failure.retry_after is not None:
            return min(failure.retry_after, self.policy.max_retry_after)
        return self.backoff(retry)

    def run(self, attempt: Callable[[], T], classify: Callable[[Exception], Failure]) -> Outcome[T]:
        """Call ``attempt`` with retries.

        Raises
        ------
        ProviderError
            When an attempt fails with a failure classified ``setup``.
        """
        last = "no attempt made"
        for number in range(1, self.policy.max_attempts + 1):
            try:
                return Outcome(value=attempt(), error=None, attempts=number)
            except Exception as exc:
                failure = classify(exc)
            if failure.kind == "setup":
                raise ProviderError(failure.message)
            last = failure.message
            if failure.kind == "cell":
                return Outcome(value=None, error=last, attempts=number)
            if number < self.policy.max_attempts:
                wait = self.delay_for(failure, number)
                notice = RetryNotice(
                    label=self.label,
                    message=last,
                    attempt=number,
                    max_attempts=self.policy.max_attempts,
                    wait_seconds=wait,
                )
                _log.info("%s", notice, extra={"retry": notice})
                self._sleep(wait)
        return Outcome(
            value=None,
            error=f"gave up after {self.policy.max_attempts} attempts: {last}",
            attempts=self.policy.max_attempts,
        )

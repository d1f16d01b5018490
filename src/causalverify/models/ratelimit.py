"""A thread-safe client-side rate limiter (token bucket, requests per minute)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    """Token bucket: ``requests_per_minute`` on average, at most ``burst`` at once.

    Parameters
    ----------
    requests_per_minute
        Average rate allowed; must be positive.
    burst
        Bucket capacity (requests that may go out back to back after a quiet spell).
    clock, sleep
        Injectable monotonic clock and sleep function (tests use a fake pair).
    """

    def __init__(
        self,
        requests_per_minute: float,
        *,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.rate = requests_per_minute / 60.0
        self.capacity = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(burst)
        self._updated = clock()
        self._lock = threading.Lock()

    def _reserve(self) -> float:
        """Take one token (possibly going negative) and return how long to wait for it."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
            self._updated = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def acquire(self) -> float:
        """Block until a request may go out; return the seconds waited."""
        wait = self._reserve()
        if wait > 0:
            self._sleep(wait)
        return wait

"""Where cell executions run: the ``Executor`` seam and the local pool behind it.

A distributed engine (e.g. Dask) plugs in by implementing the same two methods; the runner only
ever submits a function with its arguments and waits on the returned future.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Executor(Protocol):
    """Runs submitted functions somewhere and hands back futures."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        """Schedule ``fn(*args)`` and return its future."""
        ...

    def shutdown(self, *, wait: bool = True, cancel_futures: bool = False) -> None:
        """Release the workers, optionally dropping work not yet started."""
        ...


class LocalPoolExecutor:
    """A pool of local threads.

    Threads are enough: the heavy work of a cell happens in a sandboxed subprocess, so the GIL is
    not the bottleneck.

    Parameters
    ----------
    workers
        The number of cells executing at the same time (at least 1).
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cv-exec")

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        """Schedule ``fn(*args)`` on the pool."""
        return self._pool.submit(fn, *args)

    def shutdown(self, *, wait: bool = True, cancel_futures: bool = False) -> None:
        """Stop the pool."""
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

"""Scoring one cell under a time and memory bound.

Extraction reads text the model's code printed (up to the sandbox's output cap) and the fit log
it wrote; however it is implemented, a run must not hang on one cell's text. The runner's
:class:`BoundedScorer` therefore scores each cell in a child process (see
:mod:`causalverify.scoring._worker`): the child's address space may grow by at most
``memory_mb``, and when ``seconds`` pass without an answer the child is killed. Either way the
cell is stored with the status ``extraction_limit`` and a ``status_reason`` that names the
bound; a child that fails in any other way gives ``harness_error`` with the exception. The run
goes on with the next cell, and a resume does not ask again (both statuses are final).

Children are kept and reused (one per executor thread at most), so a cell pays for a pickle
round trip, not for a new interpreter; a killed child is replaced on the next cell, and a cell
whose reused child turns out to have ended while it waited is scored by a fresh one. Threads and
Dask workers are not a problem: the bound is a process the harness kills, not a signal. A scorer
that is closed hands its idle children to the process's spares (at most one per CPU for each memory
bound, ended at exit), so the next run or rescoring in the same process (a release's, a test's,
a notebook's) does not start interpreters again; a spare that died meanwhile is dropped, and a
forked copy of the process never touches its parent's spares.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import causalverify
from causalverify.errors import SetupError
from causalverify.records import DEFAULT_TOLERANCE, CellRecord
from causalverify.scoring import SCORING_STAGE, Extractor, Profile, score_unread
from causalverify.scoring._worker import HEADER, READY, frame

#: how long a child may take to start (import the scoring code) before it counts as broken
START_SECONDS: Final = 60.0

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from causalverify.scoring._worker import main; main()"
)


@dataclass(frozen=True, kw_only=True)
class ScoringBudget:
    """The bound on extracting and scoring one cell (one turn of a repair-mode cell)."""

    #: wall-clock seconds from sending the cell to its scored record
    seconds: float = 60.0
    #: megabytes the scoring process may add to its address space
    memory_mb: int = 2048


class _Child:
    """One scoring process and the two pipes to it."""

    def __init__(self, memory_mb: int) -> None:
        to_child, self._send = os.pipe()
        self._recv, from_child = os.pipe()
        try:
            self.process = subprocess.Popen(  # our own interpreter and module
                [
                    sys.executable,
                    "-c",
                    _BOOT,
                    str(Path(causalverify.__file__).resolve().parents[1]),
                    str(to_child),
                    str(from_child),
                    str(memory_mb),
                ],
                pass_fds=(to_child, from_child),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a ^C reaches the run, which then ends its children
            )
        finally:
            os.close(to_child)
            os.close(from_child)
        os.set_blocking(self._send, False)
        ready = self._read(len(READY), time.monotonic() + START_SECONDS)
        if ready != READY:
            self.kill()
            raise SetupError(
                f"the scoring process ({sys.executable}) did not start: it must be able to "
                "import causalverify"
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def score(self, request: tuple[Any, ...], deadline: float) -> tuple[str, Any] | None:
        """Send ``request`` and wait for the answer until ``deadline`` (None: out of time)."""
        try:
            if not self._write(frame(request), deadline):
                return None
        except _Died:
            pass  # the child stopped reading: it may have answered why (out of memory) first
        header = self._read(HEADER.size, deadline)
        if header is None:
            return None
        body = self._read(HEADER.unpack(header)[0], deadline)
        if body is None:
            return None
        answer: tuple[str, Any] = pickle.loads(body)  # our own child's answer
        return answer

    def _write(self, data: bytes, deadline: float) -> bool:
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _, writable, _ = select.select([], [self._send], [], left)
            if writable:
                try:
                    view = view[os.write(self._send, view) :]
                except BlockingIOError:
                    continue
                except BrokenPipeError as exc:
                    raise _Died from exc
        return True

    def _read(self, n: int, deadline: float) -> bytes | None:
        chunks: list[bytes] = []
        while n:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self._recv], [], [], left)
            if not readable:
                continue
            chunk = os.read(self._recv, min(n, 1 << 20))
            if not chunk:
                raise _Died
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def died(self) -> str:
        """How the process ended (it is reaped here)."""
        code = self.process.wait()
        if code < 0:
            return f"the scoring process was killed by signal {signal.Signals(-code).name}"
        return f"the scoring process exited with status {code}"

    def kill(self) -> None:
        """End the process and close the pipes (idempotent)."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait()
        for fd in (self._send, self._recv):
            with contextlib.suppress(OSError):
                os.close(fd)


class _Died(Exception):
    """The child closed its pipe: it exited or was killed."""


class _Spares:
    """Idle children that outlive the scorer that started them, by memory bound."""

    def __init__(self, per_bound: int) -> None:
        self._per_bound = per_bound
        self._lock = threading.Lock()
        self._by_bound: dict[int, list[_Child]] = {}
        self._owner = os.getpid()
        self._closed = False

    def _ours(self) -> bool:
        # a forked copy of the process inherits the list, not the children: they are the parent's
        return os.getpid() == self._owner and not self._closed

    def take(self, memory_mb: int) -> _Child | None:
        """A live spare started with ``memory_mb``, if any."""
        dead: list[_Child] = []
        try:
            with self._lock:
                if not self._ours():
                    return None
                children = self._by_bound.get(memory_mb, [])
                while children:
                    child = children.pop()
                    if child.process.poll() is None:
                        return child
                    dead.append(child)
                return None
        finally:
            for child in dead:
                child.kill()

    def give(self, memory_mb: int, child: _Child) -> None:
        """Keep ``child`` for a later scorer, or end it if enough are kept."""
        with self._lock:
            if self._ours() and child.process.poll() is None:
                children = self._by_bound.setdefault(memory_mb, [])
                if len(children) < self._per_bound:
                    children.append(child)
                    return
        child.kill()

    def close(self) -> None:
        """End every spare (at exit); later ones are ended when given."""
        with self._lock:
            if not self._ours():
                return
            self._closed = True
            children = [c for kept in self._by_bound.values() for c in kept]
            self._by_bound.clear()
        for child in children:
            child.kill()

    def pids(self) -> list[int]:
        """The process ids of the spares (for tests and diagnostics)."""
        with self._lock:
            return [c.pid for kept in self._by_bound.values() for c in kept]


_SPARES: Final = _Spares(per_bound=max(1, os.cpu_count() or 1))
atexit.register(_SPARES.close)


class BoundedScorer:
    """:func:`~causalverify.scoring.rescore` in child processes, under a :class:`ScoringBudget`.

    A drop-in for ``Stages.rescore``: call it with a record and the scoring settings, get the
    scored record, or one with the status ``extraction_limit`` / ``harness_error`` and its
    ``status_reason`` when scoring hit the budget or failed. Safe to call from many threads;
    :meth:`close` ends the children (also done when the scorer is collected or at exit).
    """

    def __init__(self, budget: ScoringBudget | None = None) -> None:
        self.budget = budget or ScoringBudget()
        if self.budget.seconds <= 0:
            raise ValueError(f"the scoring budget must be positive, got {self.budget.seconds} s")
        self._idle: list[_Child] = []
        self._lock = threading.Lock()
        self._closed = False
        self._finalizer = weakref.finalize(
            self, _release, self._idle, self.budget.memory_mb, self._lock
        )

    def __call__(
        self,
        record: CellRecord,
        *,
        profile: Profile = "default",
        tolerance: float = DEFAULT_TOLERANCE,
        extractor: Extractor = "deterministic",
    ) -> CellRecord:
        unread = functools.partial(
            score_unread, record, profile=profile, tolerance=tolerance, extractor=extractor
        )
        request = (record, profile, tolerance, extractor)
        child, idle = self._checkout()
        deadline = time.monotonic() + self.budget.seconds
        try:
            try:
                answer = child.score(request, deadline)
            except _Died:
                if not idle:
                    raise
                # a child that waited idle (here or among the spares) and was ended meanwhile,
                # e.g. killed while its exit was still under way, when it looked alive: not the
                # cell's doing, so the cell goes to a fresh child
                child.kill()
                child = _Child(self.budget.memory_mb)
                answer = child.score(request, deadline)
        except _Died:
            reason = f"{SCORING_STAGE}: {child.died()}"
            child.kill()
            return unread(status="harness_error", reason=reason)
        except BaseException:
            child.kill()
            raise
        if answer is None:
            child.kill()
            reason = (
                f"{SCORING_STAGE}: extraction and scoring took longer than "
                f"{self.budget.seconds:g} s; stopped"
            )
            return unread(status="extraction_limit", reason=reason)
        kind, value = answer
        if kind == "ok":
            self._checkin(child)
            scored: CellRecord = value
            return scored
        child.kill()
        if kind == "memory":
            reason = (
                f"{SCORING_STAGE}: extraction and scoring needed more than "
                f"{self.budget.memory_mb} MB; stopped"
            )
            return unread(status="extraction_limit", reason=reason)
        return unread(status="harness_error", reason=f"{SCORING_STAGE}: {value}")

    def pids(self) -> list[int]:
        """The process ids of the idle children (for tests and diagnostics)."""
        with self._lock:
            return [c.pid for c in self._idle]

    def start(self, n: int = 1) -> None:
        """Start children until ``n`` are idle (otherwise they start on first use)."""
        while len(self.pids()) < n:
            self._checkin(self._new_child()[0])

    def _checkout(self) -> tuple[_Child, bool]:
        """A child for one cell, and whether it had waited idle (else it was just started)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the scorer is closed")
            if self._idle:
                return self._idle.pop(), True
        return self._new_child()

    def _new_child(self) -> tuple[_Child, bool]:
        """A spare of this process with the same memory bound (True: it waited idle), or a new
        child (False)."""
        spare = _SPARES.take(self.budget.memory_mb)
        if spare is not None:
            return spare, True
        return _Child(self.budget.memory_mb), False

    def _checkin(self, child: _Child) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(child)
                return
        _SPARES.give(self.budget.memory_mb, child)

    def close(self) -> None:
        """Hand every idle child to the process's spares (which end it at exit, or at once when
        enough are kept); children in use end when their cell is done."""
        with self._lock:
            self._closed = True
        self._finalizer()

    def __enter__(self) -> BoundedScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _release(children: list[_Child], memory_mb: int, lock: threading.Lock) -> None:
    with lock:
        idle = list(children)
        children.clear()
    for child in idle:
        _SPARES.give(memory_mb, child)


__all__ = ["BoundedScorer", "ScoringBudget"]

"""Supervising a child process: capped pipe reading, a wall-clock deadline, rusage on exit."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

EndReason = Literal["exited", "timeout", "output_limit"]

_CHUNK = 65536
#: how often a process whose pipes are all closed is polled (doubling from the first to the max)
_IDLE_FIRST, _IDLE_MAX = 0.002, 0.1


@dataclass
class _Stream:
    cap: int
    data: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    #: a soft stream keeps draining past its cap (dropping the rest) instead of ending the run
    soft: bool = False

    def feed(self, chunk: bytes) -> bool:
        """Store ``chunk`` up to the cap; return True once a hard stream's cap is exceeded."""
        room = self.cap - len(self.data)
        if len(chunk) > room:
            self.data += chunk[: max(room, 0)]
            self.truncated = True
            return not self.soft
        self.data += chunk
        return False


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What the supervisor observed; the sandbox turns it into an ``ExecResult``."""

    reason: EndReason
    exit_code: int | None
    term_signal: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    #: what arrived on the side channel (the fit log), capped
    side: bytes
    side_truncated: bool
    wall_seconds: float
    cpu_seconds: float
    peak_memory_mb: float | None


def _decode_status(status: int) -> tuple[int | None, int | None]:
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None, None


def _exited(pid: int) -> bool:
    """True when ``pid`` has terminated (without reaping it)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _pump(
    exited: Callable[[], bool],
    streams: dict[int, _Stream],
    deadline: float,
    exit_grace: float,
) -> tuple[EndReason, bool]:
    """Read the pipes until the process has exited and every pipe is closed; return why
    reading stopped and whether the tree must die.

    The deadline holds until the process has exited, whatever it did with its pipes: a script
    that closes them all and keeps running is still killed at the deadline.
    """
    exited_at: float | None = None
    idle = _IDLE_FIRST
    with selectors.DefaultSelector() as sel:
        for fd in streams:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if now >= deadline:
                return "timeout", True
            if not sel.get_map():
                # every pipe is closed: only the process itself is left to wait for
                if exited_at is not None or exited():
                    return "exited", False
                time.sleep(min(idle, deadline - now))
                idle = min(idle * 2, _IDLE_MAX)
                continue
            if exited_at is not None and now - exited_at > exit_grace:
                return "exited", True  # something left behind still holds the pipes
            events = sel.select(timeout=min(0.2, deadline - now))
            if not events and exited_at is None and exited():
                exited_at = time.monotonic()
            for key, _ in events:
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(fd)
                elif streams[fd].feed(chunk):
                    return "output_limit", True


def supervise(
    proc: subprocess.Popen[bytes],
    *,
    started: float,
    wall_seconds: float,
    max_output_bytes: int,
    kill: Callable[[], None],
    exit_grace: float = 0.5,
    side_fd: int | None = None,
    side_cap: int = 0,
) -> Outcome:
    """Read ``proc``'s stdout/stderr until EOF, enforcing the deadline and the output cap.

    ``kill`` must end the whole process tree. When the direct child has exited but something it
    left behind still holds the pipes open, reading stops after ``exit_grace`` seconds and the
    tree is killed. ``side_fd`` (the read end of the fit-log pipe, closed here) is drained too;
    at most ``side_cap`` bytes of it are kept and a flood never ends the run.
    """
    assert proc.stdout is not None and proc.stderr is not None

    def reap(_killed: bool) -> Ending:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return Ending(status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)

    try:
        return supervise_pipes(
            proc.stdout.fileno(),
            proc.stderr.fileno(),
            exited=lambda: _exited(proc.pid),
            reap=reap,
            started=started,
            wall_seconds=wall_seconds,
            max_output_bytes=max_output_bytes,
            kill=kill,
            exit_grace=exit_grace,
            side_fd=side_fd,
            side_cap=side_cap,
        )
    finally:
        proc.stdout.close()
        proc.stderr.close()


@dataclass(frozen=True)
class Ending:
    """How a supervised process ended: its wait status and resource usage."""

    status: int
    cpu_seconds: float
    maxrss_kb: int


def supervise_pipes(
    stdout_fd: int,
    stderr_fd: int,
    *,
    exited: Callable[[], bool],
    reap: Callable[[bool], Ending],
    started: float,
    wall_seconds: float,
    max_output_bytes: int,
    kill: Callable[[], None],
    exit_grace: float = 0.5,
    side_fd: int | None = None,
    side_cap: int = 0,
) -> Outcome:
    """:func:`supervise` for any process: ``exited()`` polls it, ``reap(killed)`` waits for it.

    The caller owns (and closes) the two pipes; ``side_fd`` is closed here.
    """
    out, err = _Stream(max_output_bytes), _Stream(max_output_bytes)
    side = _Stream(side_cap, soft=True)
    streams = {stdout_fd: out, stderr_fd: err}
    if side_fd is not None:
        streams[side_fd] = side
    try:
        reason, must_kill = _pump(exited, streams, started + wall_seconds, exit_grace)
    finally:
        if side_fd is not None:
            os.close(side_fd)
    if must_kill:
        kill()
    ending = reap(must_kill)
    wall = time.monotonic() - started
    exit_code, term_signal = _decode_status(ending.status)
    return Outcome(
        reason=reason,
        exit_code=exit_code,
        term_signal=term_signal,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        side=bytes(side.data),
        side_truncated=side.truncated,
        wall_seconds=wall,
        cpu_seconds=ending.cpu_seconds,
        peak_memory_mb=ending.maxrss_kb / 1024.0 if ending.maxrss_kb else None,
    )


def kill_quietly(pid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to ``pid``, ignoring a process that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)

"""Warm interpreters: Python cells forked from an interpreter that has the heavy packages loaded.

A cold Python cell spends most of its second importing pandas, statsmodels and friends before
the model's first line runs. The warm path starts one interpreter per sandbox, inside its own
bubblewrap sandbox (the same read-only system, no network, cleared environment), that imports
:data:`PRELOAD` once and then forks a fresh process for every cell (see
:mod:`causalverify.sandbox._warm_py`, which runs inside). Each cell still gets its own mount,
PID, network, IPC and UTS namespaces, a fresh scratch, ``/tmp`` and ``/code``, its own uid (a
slot uid when the harness is root, a user namespace otherwise), no capabilities,
``no_new_privs``, the system-call filter and the resource limits; it runs as PID 1 of its
namespace, so killing it kills everything it started. All of it is the sandbox's
:class:`~causalverify.sandbox.spec.CellSpec`, the one a cold cell is built from, rendered to the
interpreter's bubblewrap arguments (:func:`~causalverify.sandbox.spec.bwrap_keeper`) and to
the keeper's configuration (:func:`~causalverify.sandbox.spec.warm_config`). A cell's output is
what a cold run prints; only its time and memory figures differ (the preloaded modules are
already resident).
Its streams have a cold start's encodings and error handlers, ``sys.orig_argv`` a cold start's
arguments, and its address-space limit is raised by what the preloaded packages mapped, less
what the packages its script imports (read from its import statements, with the packages they
use) map in a cold run too, so that it can allocate what a cold cell can.

What is not equalised: the preloaded modules are in ``sys.modules`` from the start, with the
warning filters and import finders their imports added (and a warning an import shows, such as
joblib's about a read-only ``/dev/shm``, was shown while preloading, not in the cell); every cell
of one interpreter has the same ``hash()`` seed (``PYTHONHASHSEED`` is fixed when an interpreter
starts; no cell can compare with another); the fit log's descriptor is always 100 (cold: the
harness's number); matplotlib's and fontconfig's caches are not written to ``/scratch``; and
imports the static reading cannot see (``importlib.import_module``) are not charged.

If the interpreter cannot be started, or anything about a cell's hand-over fails before the
cell starts (or its keeper, which the cell cannot reach, fails to report how it ended), that
cell runs cold: the warm path only ever saves time. Nothing a cell does decides how long the
harness waits for it: the deadline holds until the cell has exited (see
:mod:`causalverify.sandbox._process`), whatever it did with its descriptors.
"""

from __future__ import annotations

import array
import ast
import contextlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
import weakref
from contextlib import ExitStack
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

from causalverify.sandbox import fitlog
from causalverify.sandbox._classify import RunFacts, to_result, unavailable
from causalverify.sandbox._process import Ending, supervise_pipes
from causalverify.sandbox._toolchain import Toolchain
from causalverify.sandbox._uidslot import UidSlot
from causalverify.sandbox.base import ExecResult, Files, Limits
from causalverify.sandbox.spec import CellSpec, bwrap_keeper, check_relative, warm_config


class Host(Protocol):
    """What the warm interpreter needs of its sandbox: the cells' world, stated once, and the
    interpreters."""

    spec: CellSpec
    toolchain: Toolchain

    def rlimits(self, limits: Limits) -> dict[str, int]: ...


__all__ = ["PRELOAD", "WARM_ENV", "Host", "WarmInterpreter", "WarmStatus", "warm_default"]

log = logging.getLogger(__name__)

#: what the warm interpreter imports before it forks cells (missing packages are skipped)
PRELOAD: tuple[str, ...] = (
    "numpy",
    "pandas",
    "scipy",
    "scipy.stats",
    "scipy.optimize",
    "scipy.linalg",
    "statsmodels.api",
    "statsmodels.formula.api",
    "linearmodels",
    "linearmodels.iv",
    "linearmodels.panel",
    "pyfixest",
    "rdrobust",
    "matplotlib",
    "matplotlib.pyplot",
)

#: the setting that turns warm interpreters off (``0``) for every command
WARM_ENV = "CAUSALVERIFY_WARM"

_SCRIPT = "warm.py"
_CONFIG = "warm.json"
#: the fit log's descriptor number inside cells (the hook reads it once, in the interpreter)
_FITLOG_FD = 100
_START_SECONDS = 180.0
_HANDOVER_SECONDS = 60.0
_REPORT_SECONDS = 60.0
_MAX_FILES = 200


def warm_default() -> bool:
    """Whether warm interpreters are on unless a command says otherwise (``CAUSALVERIFY_WARM``)."""
    return os.environ.get(WARM_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass(frozen=True, kw_only=True)
class WarmStatus:
    """The warm interpreter's state, for ``doctor`` and a run's metadata."""

    running: bool
    preloaded: tuple[str, ...] = ()
    start_seconds: float | None = None
    detail: str = ""


class _Live:
    """The running interpreter's process and socket (no reference back to its owner)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None

    def stop(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
            self.proc = None


class _Handover(Exception):
    """The cell could not be handed to the warm interpreter (it never started), or the keeper
    that runs it failed; either way the cell runs cold instead."""


def _memfd(content: bytes) -> int:
    fd = os.memfd_create("causalverify-warm")
    view = memoryview(content)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _top_imports(code: str) -> list[str] | None:
    """The top-level packages ``code`` imports (absolute imports anywhere in it); None when it
    cannot be read, and the cell is then charged for every preloaded package."""
    try:
        tree = ast.parse(code)
    except Exception:  # a syntax error, a nesting too deep: the script fails its own way
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(names)


def _recv(sock: socket.socket, timeout: float) -> tuple[dict[str, object] | None, list[int]]:
    """One message and the descriptors it carries; (None, []) on EOF or timeout."""
    ready, _, _ = select.select([sock], [], [], timeout)
    if not ready:
        return None, []
    fds = array.array("i")
    data, ancdata, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(4 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    try:
        message = json.loads(data)
    except ValueError:
        message = None
    return (message if isinstance(message, dict) else None), list(fds)


class WarmInterpreter:
    """One warm interpreter serving the Python cells of one bubblewrap sandbox (its host)."""

    def __init__(self, sandbox: Host, preload: tuple[str, ...] = PRELOAD) -> None:
        self._box = sandbox
        self._preload = preload
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._live = _Live()
        # a sandbox that is dropped without close() still stops its interpreter
        self._finalizer = weakref.finalize(self, self._live.stop)
        self._status = WarmStatus(running=False, detail="not started")
        self._failed = False

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def preload(self) -> tuple[str, ...]:
        """What the interpreter imports before forking cells."""
        return self._preload

    def status(self) -> WarmStatus:
        return self._status

    def start(self) -> WarmStatus:
        """Start the interpreter if it is not running; never raises."""
        with self._lock:
            if self._alive():
                return self._status
            if self._failed:
                return self._status
            began = time.monotonic()
            # an interpreter that died leaves its socket and process behind: release them first
            self._stop_locked()
            try:
                preloaded = self._spawn()
            except (OSError, _Handover) as exc:
                self._failed = True
                self._stop_locked()
                self._status = WarmStatus(running=False, detail=f"cannot start: {exc}")
                log.warning("warm interpreter unavailable (%s); Python cells run cold", exc)
                return self._status
            self._status = WarmStatus(
                running=True,
                preloaded=tuple(preloaded),
                start_seconds=round(time.monotonic() - began, 3),
            )
            return self._status

    def close(self) -> None:
        with self._lock:
            self._stop_locked()
            self._status = WarmStatus(running=False, detail="closed")

    def _alive(self) -> bool:
        live = self._live
        return live.proc is not None and live.proc.poll() is None and live.sock is not None

    def _stop_locked(self) -> None:
        self._live.stop()

    def _spawn(self) -> list[str]:
        spec = self._box.spec
        tc = self._box.toolchain
        assert tc.bwrap is not None
        config = warm_config(spec, fitlog_fd=_FITLOG_FD, preload=self._preload)
        files = {
            _SCRIPT: resources.files("causalverify.sandbox").joinpath("_warm_py.py").read_bytes(),
            _CONFIG: json.dumps(config, sort_keys=True).encode(),
        }
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._live.sock = ours  # closed by stop() whatever happens next
        with ExitStack() as stack:
            stack.callback(theirs.close)
            fds: list[int] = []

            def descriptor(content: bytes | Path) -> int:
                number = _memfd(content if isinstance(content, bytes) else content.read_bytes())
                stack.callback(os.close, number)
                fds.append(number)
                return number

            argv = [tc.bwrap, *bwrap_keeper(spec, files, log_fd=_FITLOG_FD, fd=descriptor)]
            script, config_path = (f"{spec.code_dir}/{name}" for name in (_SCRIPT, _CONFIG))
            argv += [tc.python, "-B", script, str(theirs.fileno()), config_path]
            self._live.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(*fds, theirs.fileno()),
                env={},
            )
        hello, extra = _recv(ours, _START_SECONDS)
        for fd in extra:
            os.close(fd)
        if hello is None or not hello.get("ready"):
            detail = "" if hello is None else str(hello.get("error", hello))
            raise _Handover(f"the interpreter did not start {detail}".strip())
        if hello.get("threads") != 1:
            raise _Handover(f"preloading left {hello.get('threads')} threads; forking is unsafe")
        preloaded = hello.get("preloaded")
        return [str(p) for p in preloaded] if isinstance(preloaded, list) else []

    # -- cells --------------------------------------------------------------------------------

    def run(self, code: str, files: Files, limits: Limits) -> ExecResult | None:
        """Run a Python cell warm; None when it could not be handed over (run it cold)."""
        if len(files) > _MAX_FILES or not self.start().running:
            return None
        try:
            return self._run(code, files, limits)
        except _Handover as exc:
            log.warning("warm hand-over failed (%s); the cell runs cold", exc)
            with self._lock:
                if not self._alive():
                    self._stop_locked()
            return None

    def _run(self, code: str, files: Files, limits: Limits) -> ExecResult:
        box = self._box
        with ExitStack() as stack:
            uid = -1
            if box.spec.uid_policy == "slot":
                try:
                    uid = stack.enter_context(UidSlot()).uid
                except OSError as exc:
                    return unavailable(f"sandbox setup failed: {exc}")
            out_r, out_w = os.pipe2(os.O_CLOEXEC)
            err_r, err_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(os.close, out_r)
            stack.callback(os.close, err_r)
            log_r = log_w = None
            if box.spec.fit_log:
                log_r, log_w = os.pipe2(os.O_CLOEXEC)
            here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            stack.callback(here.close)
            names = sorted(files)
            # the order the cell expects: stdout, stderr, control, code, [fit log], files...
            order = [out_w, err_w, there.detach()]
            try:
                order.append(_memfd(code.encode("utf-8")))
                if log_w is not None:
                    order.append(log_w)
                for rel in names:
                    check_relative(rel)
                    content = files[rel]
                    order.append(
                        _memfd(content)
                        if isinstance(content, bytes)
                        else os.open(content, os.O_RDONLY | os.O_CLOEXEC)
                    )
            except BaseException:
                for fd in order:
                    os.close(fd)
                if log_r is not None:
                    os.close(log_r)
                raise
            request = {
                "files": names,
                "log": log_w is not None,
                "uid": uid,
                "rlimits": box.rlimits(limits),
                # what the cell imports decides which preloaded packages it is charged for
                "imports": _top_imports(code),
            }
            started = time.monotonic()
            try:
                self._submit(request, order)
            finally:
                for fd in order:
                    os.close(fd)
            handed, pidfds = _recv(here, _HANDOVER_SECONDS)
            if handed is None or not handed.get("started") or len(pidfds) != 1:
                for fd in pidfds:
                    os.close(fd)
                if log_r is not None:
                    os.close(log_r)
                detail = "" if handed is None else str(handed.get("error", ""))
                raise _Handover(f"the cell did not start {detail}".strip())
            pidfd = pidfds[0]
            stack.callback(os.close, pidfd)
            return self._supervise(here, pidfd, out_r, err_r, log_r, started, limits)

    def _submit(self, request: dict[str, object], fds: list[int]) -> None:
        data = json.dumps(request).encode()
        with self._send_lock:
            sock = self._live.sock
            if sock is None:
                raise _Handover("the interpreter is not running")
            try:
                sock.sendmsg(
                    [data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
                )
            except OSError as exc:
                raise _Handover(f"the interpreter is gone ({exc})") from exc

    def _supervise(
        self,
        here: socket.socket,
        pidfd: int,
        out_r: int,
        err_r: int,
        log_r: int | None,
        started: float,
        limits: Limits,
    ) -> ExecResult:
        report: dict[str, object] = {}

        def exited() -> bool:
            return bool(select.select([pidfd], [], [], 0)[0])

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)

        def reap(killed: bool) -> Ending:
            message, extra = _recv(here, _REPORT_SECONDS)
            for fd in extra:
                os.close(fd)
            if message is None:
                kill()
                message = {"error": "the cell's keeper did not report"}
            report.update(message)
            raw = message.get("status")
            status = int(raw) if isinstance(raw, int) else signal.SIGKILL
            if killed:
                # what a cold run reports: the harness killed bwrap itself
                status = signal.SIGKILL
            elif os.WIFSIGNALED(status):
                # bwrap, the cold parent, turns a signalled child into exit status 128 + signal
                status = (128 + os.WTERMSIG(status)) << 8
            cpu = message.get("cpu")
            rss = message.get("maxrss_kb")
            return Ending(
                status,
                float(cpu) if isinstance(cpu, int | float) else 0.0,
                int(rss) if isinstance(rss, int) else 0,
            )

        outcome = supervise_pipes(
            out_r,
            err_r,
            exited=exited,
            reap=reap,
            started=started,
            wall_seconds=limits.wall_seconds,
            max_output_bytes=limits.max_output_bytes,
            kill=kill,
            side_fd=log_r,
            side_cap=fitlog.MAX_BYTES,
        )
        if "error" in report:
            # the cell's world could not be built, or its keeper did not say how it ended:
            # neither is the script's doing, so the cell runs again, cold
            raise _Handover(f"the cell's keeper failed: {report['error']}")
        return to_result(outcome, RunFacts(limits=limits, sandboxed=True, signal_in_exit_code=True))

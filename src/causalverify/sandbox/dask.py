"""Executing cells on Dask workers: ``causalverify run --executor dask [--scheduler ADDRESS]``.

:class:`DaskSandbox` is a :class:`~causalverify.sandbox.base.Sandbox` whose ``run`` sends the
script, its files (as bytes: a remote worker cannot read the client's disk) and the limits to a
worker, which runs it in its own bubblewrap sandbox (:func:`run_on_worker`, the worker's
self-tested :func:`~causalverify.sandbox.get_sandbox`). Everything else of a cell (answers,
parsing, extraction, scoring, the run store with its single writer) stays on the client, so a
Dask run stores exactly the cells a local run stores.

Every worker must pass the sandbox self-test before the run starts, and a worker whose sandbox
stops working refuses each script with :class:`SandboxUnavailableError` rather than running it
unprotected. A worker lost mid-run loses no cell: the scheduler gives its scripts to another
worker (a script is deterministic and has no effect outside its sandbox, so running it again is
safe). Without an address a ``LocalCluster`` of ``workers`` processes on 127.0.0.1 is started
and stopped with the sandbox.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from causalverify.errors import SandboxUnavailableError, SetupError
from causalverify.families import Language
from causalverify.sandbox._factory import get_sandbox
from causalverify.sandbox.base import ExecResult, Files, Limits

__all__ = ["DaskSandbox", "run_on_worker", "worker_check"]


def run_on_worker(
    code: str,
    language: Language,
    files: dict[str, bytes],
    limits: Limits | None,
    bare: bool = False,
) -> ExecResult:
    """Run one script in this worker's own sandbox (raises when it has none)."""
    return get_sandbox().run(code, language, files, limits, bare=bare)


def worker_check() -> dict[str, Any]:
    """This worker's sandbox: self-tested, or the reason it cannot run scripts."""
    try:
        box = get_sandbox()
    except SandboxUnavailableError as exc:
        return {"ok": False, "pid": os.getpid(), "detail": str(exc)}
    return {"ok": True, "pid": os.getpid(), "detail": type(box).__name__}


#: seconds to wait for a scheduler's port to accept a connection, then for the Dask handshake
CONNECT_SECONDS = 5.0
HANDSHAKE_SECONDS = 15.0


def _connect(client_class: Any, scheduler: str) -> Any:
    """A client of the scheduler at ``scheduler``; an address that does not answer is a
    :class:`SetupError` naming it within seconds (Dask alone retries in silence)."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    def unreachable(why: object) -> SetupError:
        return SetupError(
            f"cannot reach the Dask scheduler at {scheduler} ({why}); check --scheduler and "
            "that the scheduler is running (`dask scheduler` prints its address)"
        )

    try:
        protocol, location = parse_address(scheduler)
        host, port = parse_host_port(location, default_port=8786)
    except (ValueError, TypeError) as exc:
        raise SetupError(f"--scheduler {scheduler!r} is not a Dask address: {exc}") from exc
    if protocol in ("tcp", "tls"):
        try:
            socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
        except OSError as exc:
            raise unreachable(exc.strerror or type(exc).__name__) from exc
    try:
        return client_class(scheduler, timeout=HANDSHAKE_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise unreachable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc


#: where a local cluster's scheduler serves HTTP: loopback only, a port the system picks
LOOPBACK_ANY_PORT = "127.0.0.1:0"


class DaskSandbox:
    """Runs scripts on Dask workers (see the module docstring).

    Parameters
    ----------
    scheduler : str, optional
        The scheduler's address (``tcp://host:8786``); None starts a local cluster.
    workers : int
        Worker processes of the local cluster (one script at a time each).
    limits : Limits, optional
        Default limits when ``run`` gets none.
    """

    sandboxed = True

    def __init__(
        self, *, scheduler: str | None = None, workers: int = 2, limits: Limits | None = None
    ) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - the extra is installed with the project
            raise SetupError(
                "--executor dask needs the dask extra: pip install 'causalverify[dask]'"
            ) from exc
        self.limits = limits or Limits()
        self.scheduler = scheduler
        self._cluster = None
        if scheduler is None:
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                # the scheduler serves HTTP even without a dashboard, by default on every
                # interface at port 8787: keep it on loopback, at a free port, so two local runs
                # do not compete for one port
                dashboard_address=LOOPBACK_ANY_PORT,
            )
            self.client = Client(self._cluster)
        else:
            self.client = _connect(Client, scheduler)
        try:
            self._check_workers()
        except BaseException:
            self.close()
            raise

    def _check_workers(self) -> None:
        reports = self.client.run(worker_check)
        if not reports:
            raise SandboxUnavailableError("the Dask cluster has no workers")
        bad = {w: r["detail"] for w, r in reports.items() if not r["ok"]}
        if bad:
            lines = "; ".join(f"{w}: {d}" for w, d in sorted(bad.items()))
            raise SandboxUnavailableError(
                f"Dask workers without a working sandbox refuse to execute: {lines}"
            )
        self.n_workers = len(reports)

    def worker_pids(self) -> dict[str, int]:
        """Each worker's process id, by address."""
        return {w: int(pid) for w, pid in self.client.run(os.getpid).items()}

    def policy(self) -> dict[str, object]:
        """A JSON-able description, for a run's metadata."""
        return {
            "kind": "dask",
            "scheduler": self.scheduler or "local cluster on 127.0.0.1",
            "workers": self.n_workers,
            "worker_sandbox": "bubblewrap, self-tested on every worker",
        }

    def run(
        self,
        code: str,
        language: Language,
        files: Files,
        limits: Limits | None = None,
        *,
        bare: bool = False,
    ) -> ExecResult:
        """Run ``code`` on a worker; see :class:`causalverify.sandbox.base.Sandbox`."""
        payload = {
            rel: content if isinstance(content, bytes) else Path(content).read_bytes()
            for rel, content in files.items()
        }
        future = self.client.submit(
            run_on_worker, code, language, payload, limits or self.limits, bare, pure=False
        )
        result: ExecResult = future.result()
        return result

    def close(self) -> None:
        """Disconnect, and stop the local cluster if this sandbox started one."""
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

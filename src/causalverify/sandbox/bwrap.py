"""The bubblewrap sandbox.

Every run gets fresh mount, PID, network, IPC, UTS and cgroup namespaces. The new root holds only
read-only binds of ``/usr`` (and the merged-/usr links), an allow-list of ``/etc``, the project's
Python environment and R; a private ``/proc``, ``/dev`` and ``/tmp``; a fresh tmpfs scratch folder
at ``/scratch`` (the working directory and ``HOME``) holding exactly the files given; and the
script itself, read-only, in ``/code``. The environment is cleared. All of it is the sandbox's
:class:`~causalverify.sandbox.spec.CellSpec`, rendered here to bwrap's arguments
(:func:`~causalverify.sandbox.spec.bwrap_cell`) and, for warm Python cells, to the warm keeper's
configuration.

The script never runs as root on the host. When the harness is root, bwrap runs privileged (it
drops all capabilities but the two ``setpriv`` needs) and ``setpriv`` switches the script to a
uid reserved for this run alone (:mod:`._uidslot`), with no capabilities and ``no_new_privs``.
Otherwise bwrap creates a user namespace as usual. Either way ``RLIMIT_NPROC`` holds and counts
only this run's processes.

bwrap is paused (``--block-fd``) after creating the namespaces and before starting the script,
while the harness applies the resource limits to it with ``prlimit``; the script inherits them.
The script runs as the PID namespace's init (``--as-pid-1``): when it exits or is killed, the
kernel kills every other process of the run, daemons included, and its CPU time and peak memory
reach the harness through ``wait4``.

Known limit: cells running at the same time see the same read-only system files, and a lock one
takes on such a file (``flock``, ``fcntl``) is visible to the other. Two cooperating cells can
signal each other that way (a covert channel); neither can read the other's files, output or
memory through it, and no cell can reach the harness's.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path, PurePosixPath

from causalverify.errors import SandboxUnavailableError
from causalverify.families import Language
from causalverify.sandbox import fitlog
from causalverify.sandbox._classify import RunFacts, to_result, unavailable
from causalverify.sandbox._process import kill_quietly, supervise
from causalverify.sandbox._seccomp import filter_program
from causalverify.sandbox._toolchain import Toolchain, discover
from causalverify.sandbox._uidslot import BASE_UID, MAX_SLOTS, UidSlot
from causalverify.sandbox.base import ExecResult, Files, Limits
from causalverify.sandbox.packages import with_runtime_install
from causalverify.sandbox.spec import (
    CODE_DIR,
    MB,
    SANDBOX_UID,
    SCRATCH,
    SEAL,
    CellSpec,
    Descriptor,
    build_spec,
    bwrap_cell,
    bwrap_filter,
    bwrap_world,
    check_relative,
    sandbox_env,
    script_user,
)
from causalverify.sandbox.warm import WarmInterpreter, warm_default

__all__ = [
    "CODE_DIR",
    "SANDBOX_UID",
    "SCRATCH",
    "SEAL",
    "BwrapSandbox",
    "check_relative",
    "sandbox_env",
    "script_command",
]


def script_command(
    toolchain: Toolchain,
    language: Language,
    script: str,
    *,
    fit_log: bool = False,
    bare: bool = False,
) -> list[str]:
    """How a script is started: ``Rscript --vanilla`` or the project's own Python interpreter.

    With ``fit_log`` R is started with ``--vanilla``'s flags except ``--no-site-file``, so that
    ``R_PROFILE`` loads the fit-log hook (and nothing else: the system site file is replaced).
    ``bare`` R (the harness's own programs) is ``--vanilla`` with the base package only: no
    hook, and none of the default packages, whose loading is most of R's start-up.
    """
    if language == "r":
        if toolchain.rscript is None:
            raise SandboxUnavailableError(
                "Rscript not found: install R (make setup, or apt-get install r-base-core)"
            )
        if bare:
            return [toolchain.rscript, *fitlog.R_FLAGS_NO_HOOK, "--default-packages=base", script]
        flags = fitlog.R_FLAGS if fit_log else fitlog.R_FLAGS_NO_HOOK
        return [toolchain.rscript, *flags, script]
    return [toolchain.python, "-B", script]


def content_fd(content: bytes | Path, stack: ExitStack) -> int:
    """A descriptor holding ``content`` (a memfd, or a host file opened read-only), closed
    with ``stack``."""
    if isinstance(content, Path):
        fd = os.open(content, os.O_RDONLY | os.O_CLOEXEC)
    else:
        fd = os.memfd_create("causalverify-file")
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    stack.callback(os.close, fd)
    return fd


def descriptors(fds: list[int], stack: ExitStack) -> Descriptor:
    """A :data:`~causalverify.sandbox.spec.Descriptor` whose descriptors join ``fds`` (to be
    passed to bwrap) and close with ``stack``."""

    def fd(content: bytes | Path) -> int:
        number = content_fd(content, stack)
        fds.append(number)
        return number

    return fd


class BwrapSandbox:
    """Runs scripts under bubblewrap with resource limits (see the module docstring).

    Every cell's world is :attr:`spec` (:class:`~causalverify.sandbox.spec.CellSpec`), rendered
    to bubblewrap's arguments for cold cells and to the warm interpreter's configuration.

    Parameters
    ----------
    limits : Limits, optional
        Default limits when :meth:`run` gets none.
    scratch_mb : int
        Size of the scratch and ``/tmp`` tmpfs each, and the largest file a script may write.
    fit_log : bool
        Record the models the script fits (:mod:`causalverify.sandbox.fitlog`).
    warm : bool, optional
        Fork Python cells from a warm interpreter (:mod:`causalverify.sandbox.warm`); the
        default is on unless ``CAUSALVERIFY_WARM=0``.
    """

    sandboxed = True

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        scratch_mb: int = 256,
        fit_log: bool = True,
        warm: bool | None = None,
    ) -> None:
        self.toolchain = discover()
        if self.toolchain.bwrap is None:
            raise SandboxUnavailableError(
                "bubblewrap (bwrap) not found: install it with `make setup` or "
                "`apt-get install bubblewrap`"
            )
        self.limits = limits or Limits()
        as_root = os.geteuid() == 0
        self._setpriv = shutil.which("setpriv") if as_root else None
        if as_root and self._setpriv is None:
            raise SandboxUnavailableError(
                "running as root needs setpriv (util-linux) to drop the script to an "
                "unprivileged uid: apt-get install util-linux"
            )
        #: the world of every cell; a filter of None (an architecture without one) makes the
        #: self-test refuse the sandbox
        self.spec: CellSpec = build_spec(
            self.toolchain,
            as_root=as_root,
            scratch_mb=scratch_mb,
            fit_log=fit_log,
            seccomp=filter_program(),
        )
        self.warm = WarmInterpreter(self) if (warm_default() if warm is None else warm) else None
        #: asked before a Python cell goes warm, and false when the warm path must not be used
        #: (``get_sandbox`` sets it to the warm path's own self-test, run before its first cell;
        #: the interpreter starts only when a Python cell needs it)
        self.warm_gate: Callable[[], bool] | None = None

    @property
    def fit_log(self) -> bool:
        return self.spec.fit_log

    @property
    def scratch_mb(self) -> int:
        return self.spec.tmpfs_bytes // MB

    @property
    def seccomp_program(self) -> bytes | None:
        return self.spec.seccomp

    def close(self) -> None:
        """Stop the warm interpreter, if one is running."""
        if self.warm is not None:
            self.warm.close()

    def policy(self) -> dict[str, object]:
        """A JSON-able description of the isolation, for a run's metadata."""
        spec = self.spec
        as_root = spec.uid_policy == "slot"
        return {
            "kind": "bubblewrap",
            "namespaces": ["mount"]
            + [ns for ns in ("pid", "net", "ipc", "uts", "cgroup") if ns in spec.namespaces]
            + ([] if as_root else ["user"]),
            "identity": "per-run host uid via setpriv" if as_root else "user namespace",
            "read_only": list(spec.ro_binds),
            "scratch": spec.workdir,
            "scratch_mb": self.scratch_mb,
            "environment": spec.env(),
            "default_limits": asdict(self.limits),
            "r_command": "Rscript " + " ".join(fitlog.R_FLAGS if self.fit_log else ("--vanilla",)),
            "python": self.toolchain.python,
            "warm_python": (
                {"preload": list(self.warm.preload)} if self.warm is not None else "off"
            ),
            "fit_log": (
                f"hooks read-only in {spec.hook_dir}; JSON lines on an inherited pipe"
                if self.fit_log
                else "off"
            ),
        }

    def rlimits(self, limits: Limits) -> dict[str, int]:
        """The resource limits of one run, cold or warm (:meth:`CellSpec.rlimits`)."""
        return self.spec.rlimits(limits)

    def run(
        self,
        code: str,
        language: Language,
        files: Files,
        limits: Limits | None = None,
        *,
        bare: bool = False,
    ) -> ExecResult:
        """Run ``code`` in a fresh sandbox; see :class:`causalverify.sandbox.base.Sandbox`."""
        limits = limits or self.limits
        warm = language == "python" and self.warm is not None
        if warm and (self.warm_gate is None or self.warm_gate()):
            assert self.warm is not None
            result = self.warm.run(code, files, limits)
            if result is not None:
                return with_runtime_install(result, code, language)
        return self.run_cold(code, language, files, limits, bare=bare)

    def run_cold(
        self,
        code: str,
        language: Language,
        files: Files,
        limits: Limits | None = None,
        *,
        bare: bool = False,
    ) -> ExecResult:
        """Run ``code`` in a fresh sandbox of its own, never on the warm path."""
        limits = limits or self.limits
        spec = self.spec
        hooked = spec.fit_log and not (bare and language == "r")
        command = script_command(
            self.toolchain, language, spec.script_path(language), fit_log=hooked, bare=bare
        )
        with ExitStack() as stack:
            fds: list[int] = []
            log = os.pipe2(os.O_CLOEXEC) if hooked else None
            try:
                if log is not None:
                    # the script's uid (a slot uid when we are root) must be able to reopen the
                    # pipe through /proc/self/fd, as R does; nobody but the holders of a
                    # descriptor can
                    os.fchmod(log[1], 0o622)
                    fds.append(log[1])
                args = bwrap_cell(
                    spec,
                    language,
                    files=files,
                    code=code.encode("utf-8"),
                    fd=descriptors(fds, stack),
                    log_fd=None if log is None else log[1],
                )
            except BaseException:
                for end in log or ():
                    os.close(end)
                raise
            result = self._spawn(spec, args, command, fds, stack, limits=limits, log=log)
        return with_runtime_install(result, code, language)

    def run_command(
        self,
        argv: list[str],
        *,
        workspace: Path,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        limits: Limits | None = None,
        owner: int | None = None,
    ) -> ExecResult:
        """Run ``argv`` (e.g. ``["bash", "-c", "..."]``) in a fresh sandbox whose ``/scratch`` is
        the host folder ``workspace`` (kept between calls; the only writable place besides a
        private ``/tmp``). Every other protection is that of :meth:`run`: namespaces, uid, no
        capabilities, the system-call filter, the limits; the whole process tree dies at the
        wall-clock limit. ``cwd`` is relative to ``/scratch``.

        ``owner`` is the workspace's uid from :meth:`workspace_owner`: every command on a kept
        workspace must run as the same user, or a file one command made (mode 0644, say) is
        not writable by the next. Without it (or without the slot policy) the command takes a
        free uid of its own, as a cell does."""
        if owner is not None and not BASE_UID <= owner < BASE_UID + MAX_SLOTS:
            raise ValueError(f"owner {owner} is not a sandbox uid from workspace_owner()")
        limits = limits or self.limits
        spec = self.spec
        workspace.chmod(0o777)  # the script's uid is not the harness's
        with ExitStack() as stack:
            fds: list[int] = []
            fd = descriptors(fds, stack)
            args = [*bwrap_world(spec, workspace=workspace), *bwrap_filter(spec, fd)]
            for key, value in sorted((env or {}).items()):
                args += ["--setenv", key, value]
            if cwd:
                args += ["--chdir", str(PurePosixPath(spec.workdir) / check_relative(cwd))]
            stdin_fd = content_fd(stdin or b"", stack)
            return self._spawn(
                spec,
                [*args, *SEAL],
                list(argv),
                fds,
                stack,
                limits=limits,
                stdin=stdin_fd,
                owner=owner,
            )

    def workspace_owner(self) -> contextlib.AbstractContextManager[int | None]:
        """The uid every :meth:`run_command` on one kept workspace runs as, held for the
        ``with`` block: a slot uid of its own (no other run takes it meanwhile) with the slot
        policy, None otherwise (a user namespace maps the script to the harness's user, which
        owns the workspace anyway)."""
        if self.spec.uid_policy != "slot":
            return contextlib.nullcontext(None)
        return _held_uid()

    def _spawn(
        self,
        spec: CellSpec,
        args: list[str],
        command: list[str],
        fds: list[int],
        stack: ExitStack,
        *,
        limits: Limits,
        stdin: int | None = None,
        log: tuple[int, int] | None = None,
        owner: int | None = None,
    ) -> ExecResult:
        """Start bwrap with ``args`` (passing ``fds``) on ``command`` run as the script's uid,
        apply the limits while it waits, release and supervise it. ``log`` is the fit log's
        pipe, owned from here on: its write end is closed once bwrap holds it, its read end
        when the run ends.

        Setup failures (no slot uid, bwrap not starting, a limit not applied) end here, in one
        place: what was started is killed, the log's ends are closed, and the result is
        ``sandbox_unavailable``."""
        assert self.toolchain.bwrap is not None
        log_r, log_w = (None, None) if log is None else log
        proc: subprocess.Popen[bytes] | None = None
        child: int | None = None
        try:
            slot = None
            if spec.uid_policy == "slot":
                slot = owner if owner is not None else stack.enter_context(UidSlot()).uid
            command = [*script_user(spec, self._setpriv, slot), *command]
            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(os.close, info_r)
            block_r, block_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(os.close, block_w)
            waits = ["--info-fd", str(info_w), "--block-fd", str(block_r)]
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    [self.toolchain.bwrap, *args, *waits, *command],
                    stdin=subprocess.DEVNULL if stdin is None else stdin,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(*fds, info_w, block_r),
                    env={},
                )
            finally:
                os.close(info_w)
                os.close(block_r)
                if log_w is not None:  # the script's alone: EOF once it is gone
                    os.close(log_w)
                    log_w = None
            child = _read_child_pid(info_r)
            if child is None:
                raise OSError("bwrap did not start")
            # a pidfd cannot hit a recycled pid when the tree is killed later
            pidfd = os.pidfd_open(child)
            stack.callback(os.close, pidfd)
            for name, value in self.rlimits(limits).items():
                resource.prlimit(child, getattr(resource, name), (value, value))
            os.write(block_w, b"1")
        except BaseException as exc:
            message = str(exc)
            if child:
                kill_quietly(child)
            if proc is not None:
                kill_quietly(proc.pid)
                _, err = proc.communicate()
                message = err.decode("utf-8", "replace").strip() or message
            for end in (log_r, log_w):
                if end is not None:
                    os.close(end)
            if not isinstance(exc, OSError):
                raise
            return unavailable(f"sandbox setup failed: {message}")

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            kill_quietly(proc.pid)  # our own unreaped child: its pid cannot be recycled

        outcome = supervise(
            proc,
            started=started,
            wall_seconds=limits.wall_seconds,
            max_output_bytes=limits.max_output_bytes,
            kill=kill,
            side_fd=log_r,
            side_cap=fitlog.MAX_BYTES,
        )
        return to_result(outcome, RunFacts(limits=limits, sandboxed=True, signal_in_exit_code=True))


@contextlib.contextmanager
def _held_uid() -> Iterator[int | None]:
    with UidSlot() as slot:
        yield slot.uid


def _read_child_pid(fd: int) -> int | None:
    """Read bwrap's ``--info-fd`` JSON (written once the namespaces exist)."""
    buf = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        buf += chunk
        try:
            info = json.loads(buf)
        except ValueError:
            continue
        pid = info.get("child-pid")
        return int(pid) if pid else None

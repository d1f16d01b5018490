"""The bubblewrap sandbox.

Every run gets fresh mount, PID, network, IPC, UTS and cgroup namespaces. The new root holds only
read-only binds of ``/usr`` (and the merged-/usr links), an allow-list of ``/etc``, the project's
Python environment and R; a private ``/proc``, ``/dev`` and ``/tmp``; a fresh tmpfs scratch folder
at ``/scratch`` (the working directory and ``HOME``) holding exactly the files given; and the
script itself, read-only, in ``/code``. The environment is cleared.

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
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path, PurePosixPath

from causalverify.errors import SandboxUnavailableError
from causalverify.families import Language
from causalverify.sandbox import fitlog
from causalverify.sandbox._classify import RunFacts, to_result, unavailable
from causalverify.sandbox._process import kill_quietly, supervise
from causalverify.sandbox._seccomp import filter_program
from causalverify.sandbox._toolchain import SANDBOX_R_LIBRARY, Toolchain, discover
from causalverify.sandbox._uidslot import UidSlot
from causalverify.sandbox.base import ExecResult, Files, Limits
from causalverify.sandbox.packages import with_runtime_install
from causalverify.sandbox.warm import WarmInterpreter, warm_default

SCRATCH = "/scratch"
CODE_DIR = "/code"
SANDBOX_UID = 1000
_MB = 1024 * 1024
#: the last mount operations of every sandbox: the skeleton bwrap built (the root folder with
#: the mount points, and /dev) becomes read-only. Without them a script running in a user
#: namespace owns that skeleton and could write anywhere in it; as root it is owned by root.
SEAL: tuple[str, ...] = ("--remount-ro", "/dev", "--remount-ro", "/")


def sandbox_env(toolchain: Toolchain) -> dict[str, str]:
    """The complete environment of a sandboxed script (nothing is inherited)."""
    extra = {"R_LIBS": SANDBOX_R_LIBRARY} if toolchain.r_library else {}
    return {
        **extra,
        "PATH": toolchain.path_env,
        "HOME": SCRATCH,
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TMPDIR": "/tmp",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # thread pools that would otherwise size themselves to the host's cores
        "NUMBA_NUM_THREADS": "1",
        "POLARS_MAX_THREADS": "1",
        "RAYON_NUM_THREADS": "1",
        "R_DATATABLE_NUM_THREADS": "1",
        # Arrow's bundled jemalloc reserves about 1 GB of address space on first use (pandas
        # reading a CSV is enough), which the address-space limit would count as the script's
        "ARROW_DEFAULT_MEMORY_POOL": "system",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def script_command(
    toolchain: Toolchain, language: Language, script: str, *, fit_log: bool = False
) -> list[str]:
    """How a script is started: ``Rscript --vanilla`` or the project's own Python interpreter.

    With ``fit_log`` R is started with ``--vanilla``'s flags except ``--no-site-file``, so that
    ``R_PROFILE`` loads the fit-log hook (and nothing else: the system site file is replaced).
    """
    if language == "r":
        if toolchain.rscript is None:
            raise SandboxUnavailableError(
                "Rscript not found: install R (make setup, or apt-get install r-base-core)"
            )
        flags = fitlog.R_FLAGS if fit_log else fitlog.R_FLAGS_NO_HOOK
        return [toolchain.rscript, *flags, script]
    return [toolchain.python, "-B", script]


def check_relative(rel: str) -> PurePosixPath:
    """Validate a scratch-relative path (no absolute paths, no ``..``)."""
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or rel != str(p):
        raise ValueError(f"scratch paths must be plain relative paths, got {rel!r}")
    return p


def _content_fd(content: bytes | Path, stack: ExitStack) -> int:
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


class BwrapSandbox:
    """Runs scripts under bubblewrap with resource limits (see the module docstring).

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
    seal = SEAL

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        scratch_mb: int = 256,
        fit_log: bool = True,
        warm: bool | None = None,
    ) -> None:
        self.fit_log = fit_log
        self.toolchain = discover()
        if self.toolchain.bwrap is None:
            raise SandboxUnavailableError(
                "bubblewrap (bwrap) not found: install it with `make setup` or "
                "`apt-get install bubblewrap`"
            )
        self.limits = limits or Limits()
        self.scratch_mb = scratch_mb
        self._as_root = os.geteuid() == 0
        self._setpriv = shutil.which("setpriv") if self._as_root else None
        if self._as_root and self._setpriv is None:
            raise SandboxUnavailableError(
                "running as root needs setpriv (util-linux) to drop the script to an "
                "unprivileged uid: apt-get install util-linux"
            )
        self._prefix = self._static_args(self._identity_args())
        # None on an architecture without a filter: the self-test then refuses the sandbox
        self._seccomp = filter_program()
        self.warm = WarmInterpreter(self) if (warm_default() if warm is None else warm) else None
        #: asked before a Python cell goes warm, and false when the warm path must not be used
        #: (``get_sandbox`` sets it to the warm path's own self-test, run before its first cell;
        #: the interpreter starts only when a Python cell needs it)
        self.warm_gate: Callable[[], bool] | None = None

    # what the warm interpreter needs to build a cell exactly as a cold run is built

    @property
    def as_root(self) -> bool:
        return self._as_root

    @property
    def sandbox_uid(self) -> int:
        return SANDBOX_UID

    @property
    def seccomp_program(self) -> bytes | None:
        return self._seccomp

    def cell_env(self) -> dict[str, str]:
        """The environment a cold script sees (``--chdir`` makes bwrap set ``PWD``)."""
        return {**sandbox_env(self.toolchain), "PWD": SCRATCH}

    @staticmethod
    def script_path(language: Language) -> str:
        return f"{CODE_DIR}/main.{'R' if language == 'r' else 'py'}"

    @staticmethod
    def check_path(rel: str) -> PurePosixPath:
        return check_relative(rel)

    def warm_prefix(self) -> list[str]:
        """bwrap's arguments for the warm interpreter: a cell's world, with the capabilities
        it needs to make each cell's namespaces (which no cell keeps)."""
        if self._as_root:
            caps = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_NET_ADMIN")
            identity = [arg for cap in caps for arg in ("--cap-add", cap)]
        else:
            identity = ["--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL"]
        return self._static_args(identity)

    def close(self) -> None:
        """Stop the warm interpreter, if one is running."""
        if self.warm is not None:
            self.warm.close()

    def policy(self) -> dict[str, object]:
        """A JSON-able description of the isolation, for a run's metadata."""
        return {
            "kind": "bubblewrap",
            "namespaces": ["mount", "pid", "net", "ipc", "uts", "cgroup"]
            + ([] if self._as_root else ["user"]),
            "identity": "per-run host uid via setpriv" if self._as_root else "user namespace",
            "read_only": list(self.toolchain.ro_binds),
            "scratch": SCRATCH,
            "scratch_mb": self.scratch_mb,
            "environment": sandbox_env(self.toolchain),
            "default_limits": asdict(self.limits),
            "r_command": "Rscript " + " ".join(fitlog.R_FLAGS if self.fit_log else ("--vanilla",)),
            "python": self.toolchain.python,
            "warm_python": (
                {"preload": list(self.warm.preload)} if self.warm is not None else "off"
            ),
            "fit_log": (
                f"hooks read-only in {fitlog.HOOK_DIR}; JSON lines on an inherited pipe"
                if self.fit_log
                else "off"
            ),
        }

    def _identity_args(self) -> list[str]:
        if self._as_root:
            # privileged bwrap; setpriv then drops the script to a slot uid (see _uidslot)
            return ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        # a user namespace; RLIMIT_NPROC is then counted per namespace
        uid = str(SANDBOX_UID)
        return ["--unshare-user", "--uid", uid, "--gid", uid, "--disable-userns"]

    def _static_args(self, identity: list[str], workspace: Path | None = None) -> list[str]:
        tc = self.toolchain
        assert tc.bwrap is not None
        args = [tc.bwrap, *identity]
        args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-cgroup"]
        args += ["--unshare-uts", "--hostname", "sandbox", "--die-with-parent", "--new-session"]
        # the script is the namespace's PID 1: its rusage reaches us, and its exit kills the rest
        args += ["--as-pid-1"]
        # the private /tmp comes first: an environment installed under the host's /tmp (a CI
        # checkout, say) is then bound on top of it instead of being hidden by it
        size = str(self.scratch_mb * _MB)
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        # bwrap would create missing parents with mode 0700: unusable by the script's uid
        library = [SANDBOX_R_LIBRARY] if tc.r_library else []
        for parent in _ancestors([*tc.ro_binds, *library, CODE_DIR + "/x"]):
            if parent not in ("/tmp", "/proc", "/dev"):
                args += ["--perms", "0755", "--dir", parent]
        for path in tc.ro_binds:
            args += ["--ro-bind", path, path]
        if tc.r_library:  # at a fixed path: no host path (a home folder) in a script's output
            args += ["--ro-bind", tc.r_library, SANDBOX_R_LIBRARY]
        for target, link in tc.symlinks:
            args += ["--symlink", target, link]
        if workspace is None:
            args += ["--perms", "0777", "--size", size, "--tmpfs", SCRATCH]
        else:  # a host folder that outlives the run (run_command), and nothing else writable
            args += ["--bind", str(workspace), SCRATCH]
        args += ["--chdir", SCRATCH, "--clearenv"]
        for key, value in sandbox_env(tc).items():
            args += ["--setenv", key, value]
        return args

    def _file_args(self, files: Files, stack: ExitStack) -> tuple[list[str], list[int]]:
        args: list[str] = []
        fds: list[int] = []
        made: set[str] = set()
        for rel in sorted(files):
            path = check_relative(rel)
            for parent in reversed(path.parents[:-1]):
                if str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0777", "--dir", f"{SCRATCH}/{parent}"]
            fd = _content_fd(files[rel], stack)
            fds.append(fd)
            args += ["--perms", "0644", "--file", str(fd), f"{SCRATCH}/{path}"]
        return args, fds

    def run(
        self, code: str, language: Language, files: Files, limits: Limits | None = None
    ) -> ExecResult:
        """Run ``code`` in a fresh sandbox; see :class:`causalverify.sandbox.base.Sandbox`."""
        limits = limits or self.limits
        warm = language == "python" and self.warm is not None
        if warm and (self.warm_gate is None or self.warm_gate()):
            assert self.warm is not None
            result = self.warm.run(code, files, limits)
            if result is not None:
                return with_runtime_install(result, code, language)
        return self.run_cold(code, language, files, limits)

    def run_cold(
        self, code: str, language: Language, files: Files, limits: Limits | None = None
    ) -> ExecResult:
        """Run ``code`` in a fresh sandbox of its own, never on the warm path."""
        limits = limits or self.limits
        script = self.script_path(language)
        command = script_command(self.toolchain, language, script, fit_log=self.fit_log)
        with ExitStack() as stack:
            try:
                command = self._as_script_user(command, stack)
            except OSError as exc:
                return unavailable(f"sandbox setup failed: {exc}")
            file_args, fds = self._file_args(files, stack)
            code_fd = _content_fd(code.encode("utf-8"), stack)
            file_args += self._filter_args(fds, stack)
            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            block_r, block_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(os.close, info_r)
            stack.callback(os.close, block_w)
            argv = [
                *self._prefix,
                *file_args,
                "--perms",
                "0444",
                "--ro-bind-data",
                str(code_fd),
                script,
            ]
            log_r = log_w = None
            if self.fit_log:
                log_r, log_w = os.pipe2(os.O_CLOEXEC)
                # the script's uid (a slot uid when we are root) must be able to reopen the pipe
                # through /proc/self/fd, as R does; nobody but the holders of a descriptor can
                os.fchmod(log_w, 0o622)
                argv += self.hook_args(language, log_w, fds, stack)
            argv += [*SEAL, "--info-fd", str(info_w), "--block-fd", str(block_r), *command]
            started = time.monotonic()
            log_fds = () if log_w is None else (log_w,)
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(*fds, code_fd, info_w, block_r, *log_fds),
                    env={},
                )
            except BaseException:
                if log_r is not None:
                    os.close(log_r)
                raise
            finally:
                os.close(info_w)
                os.close(block_r)
                if log_w is not None:
                    os.close(log_w)
            result = self._after_spawn(proc, started, limits, info_r, block_w, stack, log_r)
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
    ) -> ExecResult:
        """Run ``argv`` (e.g. ``["bash", "-c", "..."]``) in a fresh sandbox whose ``/scratch`` is
        the host folder ``workspace`` (kept between calls; the only writable place besides a
        private ``/tmp``). Every other protection is that of :meth:`run`: namespaces, uid, no
        capabilities, the system-call filter, the limits; the whole process tree dies at the
        wall-clock limit. ``cwd`` is relative to ``/scratch``."""
        limits = limits or self.limits
        workspace.chmod(0o777)  # the script's uid is not the harness's
        command = list(argv)
        with ExitStack() as stack:
            try:
                command = self._as_script_user(command, stack)
            except OSError as exc:
                return unavailable(f"sandbox setup failed: {exc}")
            fds: list[int] = []
            extra = self._filter_args(fds, stack)
            for key, value in sorted((env or {}).items()):
                extra += ["--setenv", key, value]
            if cwd:
                extra += ["--chdir", str(PurePosixPath(SCRATCH) / check_relative(cwd))]
            stdin_fd = _content_fd(stdin or b"", stack)
            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            block_r, block_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(os.close, info_r)
            stack.callback(os.close, block_w)
            argv_full = [
                *self._static_args(self._identity_args(), workspace=workspace),
                *extra,
                *SEAL,
                "--info-fd",
                str(info_w),
                "--block-fd",
                str(block_r),
                *command,
            ]
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    argv_full,
                    stdin=stdin_fd,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(*fds, info_w, block_r),
                    env={},
                )
            finally:
                os.close(info_w)
                os.close(block_r)
            return self._after_spawn(proc, started, limits, info_r, block_w, stack)

    def _as_script_user(self, command: list[str], stack: ExitStack) -> list[str]:
        """``command`` run as this run's own uid (as root: a slot uid held until ``stack``
        closes, switched to by setpriv with no capabilities and ``no_new_privs``)."""
        if self._setpriv is None:
            return command
        uid = str(stack.enter_context(UidSlot()).uid)
        drop = ["--reuid", uid, "--regid", uid, "--clear-groups", "--no-new-privs"]
        return [self._setpriv, *drop, "--", *command]

    def _filter_args(self, fds: list[int], stack: ExitStack) -> list[str]:
        """bwrap's arguments that install the system-call filter (its descriptor joins ``fds``)."""
        if self._seccomp is None:
            return []
        seccomp_fd = _content_fd(self._seccomp, stack)
        fds.append(seccomp_fd)
        return ["--seccomp", str(seccomp_fd)]

    def hook_args(
        self, language: Language, log_w: int, fds: list[int], stack: ExitStack
    ) -> list[str]:
        """Place the fit-log hooks read-only in /code/hooks and point the interpreter at them."""
        args = ["--perms", "0755", "--dir", fitlog.HOOK_DIR]
        for name, content in sorted(fitlog.hook_files().items()):
            fd = _content_fd(content, stack)
            fds.append(fd)
            args += ["--perms", "0444", "--ro-bind-data", str(fd), f"{fitlog.HOOK_DIR}/{name}"]
        for key, value in fitlog.hook_env(language, log_w).items():
            args += ["--setenv", key, value]
        return args

    def _after_spawn(
        self,
        proc: subprocess.Popen[bytes],
        started: float,
        limits: Limits,
        info_r: int,
        block_w: int,
        stack: ExitStack,
        log_r: int | None = None,
    ) -> ExecResult:
        child = _read_child_pid(info_r)
        pidfd = -1
        try:
            if child is None:
                raise OSError("bwrap did not start")
            # a pidfd cannot hit a recycled pid when the tree is killed later
            pidfd = os.pidfd_open(child)
            stack.callback(os.close, pidfd)
            self._apply_rlimits(child, limits)
            os.write(block_w, b"1")
        except OSError as exc:
            if child:
                kill_quietly(child)
            kill_quietly(proc.pid)
            _, err = proc.communicate()
            if log_r is not None:
                os.close(log_r)
            message = err.decode("utf-8", "replace").strip() or str(exc)
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
        facts = RunFacts(
            limits=limits,
            sandboxed=True,
            signal_in_exit_code=True,
        )
        return to_result(outcome, facts)

    def rlimits(self, limits: Limits) -> dict[str, int]:
        """The resource limits of one run, by ``resource`` constant name (soft = hard)."""
        # PID 1 ignores SIGXCPU, so the hard CPU limit (SIGKILL) is the one that acts. The
        # process count holds because the script's uid is not root on the host, and counts only
        # this run: as root the uid is this run's own slot uid; otherwise the count is per user
        # namespace
        return {
            "RLIMIT_CPU": max(1, int(limits.cpu_seconds + 0.999)),
            "RLIMIT_AS": limits.memory_mb * _MB,
            "RLIMIT_FSIZE": self.scratch_mb * _MB,
            "RLIMIT_CORE": 0,
            "RLIMIT_NPROC": limits.max_processes,
        }

    def _apply_rlimits(self, pid: int, limits: Limits) -> None:
        for name, value in self.rlimits(limits).items():
            resource.prlimit(pid, getattr(resource, name), (value, value))


def _ancestors(paths: list[str]) -> list[str]:
    """Parent folders (outermost first) of ``paths`` that are not themselves inside a path."""
    found: set[str] = set()
    for path in paths:
        for parent in PurePosixPath(path).parents:
            if str(parent) != "/" and not any(
                str(parent) == p or str(parent).startswith(p.rstrip("/") + "/") for p in paths
            ):
                found.add(str(parent))
    return sorted(found, key=lambda p: (p.count("/"), p))


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

"""The bubblewrap sandbox.

Every run gets fresh user, mount, PID, network, IPC and UTS namespaces. The new root holds only
read-only binds of ``/usr`` (and the merged-/usr links), an allow-list of ``/etc``, the project's
Python environment and R; a private ``/proc``, ``/dev`` and ``/tmp``; a fresh tmpfs scratch folder
at ``/scratch`` (the working directory and ``HOME``) holding exactly the files given; and the
script itself, read-only, in ``/code``. The environment is cleared. bwrap is paused (``--block-fd``)
after creating the namespaces and before starting the script, while the harness applies resource
limits to it (``prlimit``) and, as root, moves it into a ``pids`` cgroup; the script inherits both.
The script runs as the PID namespace's init (``--as-pid-1``): when it exits or is killed, the
kernel kills every other process of the run, daemons included.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path, PurePosixPath

from causalverify.errors import SandboxUnavailableError
from causalverify.families import Language
from causalverify.sandbox._cgroup import PidsCgroup, pids_base
from causalverify.sandbox._classify import RunFacts, to_result, unavailable
from causalverify.sandbox._process import kill_quietly, supervise
from causalverify.sandbox._toolchain import Toolchain, discover
from causalverify.sandbox.base import ExecResult, Files, Limits

SCRATCH = "/scratch"
CODE_DIR = "/code"
SANDBOX_UID = 1000
_MB = 1024 * 1024


def sandbox_env(toolchain: Toolchain) -> dict[str, str]:
    """The complete environment of a sandboxed script (nothing is inherited)."""
    return {
        "PATH": toolchain.path_env,
        "HOME": SCRATCH,
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "TMPDIR": "/tmp",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def script_command(toolchain: Toolchain, language: Language, script: str) -> list[str]:
    """How a script is started: ``Rscript --vanilla`` or the project's own Python interpreter."""
    if language == "r":
        if toolchain.rscript is None:
            raise SandboxUnavailableError(
                "Rscript not found: install R (make setup, or apt-get install r-base-core)"
            )
        return [toolchain.rscript, "--vanilla", script]
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
    """

    sandboxed = True

    def __init__(self, *, limits: Limits | None = None, scratch_mb: int = 256) -> None:
        self.toolchain = discover()
        if self.toolchain.bwrap is None:
            raise SandboxUnavailableError(
                "bubblewrap (bwrap) not found: install it with `make setup` or "
                "`apt-get install bubblewrap`"
            )
        self.limits = limits or Limits()
        self.scratch_mb = scratch_mb
        self._as_root = os.geteuid() == 0
        self._cgroup_base = pids_base() if self._as_root else None
        if self._as_root and self._cgroup_base is None:
            raise SandboxUnavailableError(
                "running as root but no writable pids cgroup was found, so a process-count limit "
                "cannot be enforced (RLIMIT_NPROC does not apply to root). Run as a non-root "
                "user, or mount/delegate the cgroup pids controller (/sys/fs/cgroup)."
            )
        self._prefix = self._static_args()

    def _static_args(self) -> list[str]:
        tc = self.toolchain
        assert tc.bwrap is not None
        args = [tc.bwrap, "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        args += ["--disable-userns", "--unshare-net", "--unshare-pid", "--unshare-ipc"]
        args += ["--unshare-uts", "--hostname", "sandbox", "--die-with-parent", "--new-session"]
        # the script is the namespace's PID 1: its rusage reaches us, and its exit kills the rest
        args += ["--as-pid-1"]
        for path in tc.ro_binds:
            args += ["--ro-bind", path, path]
        for target, link in tc.symlinks:
            args += ["--symlink", target, link]
        args += ["--proc", "/proc", "--dev", "/dev"]
        size = str(self.scratch_mb * _MB)
        args += ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", SCRATCH]
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
                    args += ["--dir", f"{SCRATCH}/{parent}"]
            fd = _content_fd(files[rel], stack)
            fds.append(fd)
            args += ["--perms", "0644", "--file", str(fd), f"{SCRATCH}/{path}"]
        return args, fds

    def run(
        self, code: str, language: Language, files: Files, limits: Limits | None = None
    ) -> ExecResult:
        """Run ``code`` in a fresh sandbox; see :class:`causalverify.sandbox.base.Sandbox`."""
        limits = limits or self.limits
        script = f"{CODE_DIR}/main.{'R' if language == 'r' else 'py'}"
        command = script_command(self.toolchain, language, script)
        with ExitStack() as stack:
            file_args, fds = self._file_args(files, stack)
            code_fd = _content_fd(code.encode("utf-8"), stack)
            info_r, info_w = os.pipe2(os.O_CLOEXEC)
            block_r, block_w = os.pipe2(os.O_CLOEXEC)
            stack.callback(os.close, info_r)
            stack.callback(os.close, block_w)
            argv = [*self._prefix, *file_args, "--ro-bind-data", str(code_fd), script]
            argv += ["--info-fd", str(info_w), "--block-fd", str(block_r), *command]
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(*fds, code_fd, info_w, block_r),
                    env={},
                )
            finally:
                os.close(info_w)
                os.close(block_r)
            return self._after_spawn(proc, started, limits, info_r, block_w, stack)

    def _after_spawn(
        self,
        proc: subprocess.Popen[bytes],
        started: float,
        limits: Limits,
        info_r: int,
        block_w: int,
        stack: ExitStack,
    ) -> ExecResult:
        child = _read_child_pid(info_r)
        cgroup: PidsCgroup | None = None
        try:
            if child is None:
                raise OSError("bwrap did not start")
            if self._cgroup_base is not None:
                cgroup = PidsCgroup(self._cgroup_base, limits.max_processes + 1)
                stack.callback(cgroup.close)
                cgroup.add(child)
            self._apply_rlimits(child, limits)
            os.write(block_w, b"1")
        except OSError as exc:
            kill_quietly(child) if child else None
            kill_quietly(proc.pid)
            _, err = proc.communicate()
            message = err.decode("utf-8", "replace").strip() or str(exc)
            return unavailable(f"sandbox setup failed: {message}")

        def kill() -> None:
            kill_quietly(child)
            kill_quietly(proc.pid)

        outcome = supervise(
            proc,
            started=started,
            wall_seconds=limits.wall_seconds,
            max_output_bytes=limits.max_output_bytes,
            kill=kill,
        )
        facts = RunFacts(
            limits=limits,
            sandboxed=True,
            process_limit_hit=cgroup.limit_hit() if cgroup else None,
            signal_in_exit_code=True,
        )
        return to_result(outcome, facts)

    def _apply_rlimits(self, pid: int, limits: Limits) -> None:
        cpu = max(1, int(limits.cpu_seconds + 0.999))
        memory = limits.memory_mb * _MB
        fsize = self.scratch_mb * _MB
        # PID 1 ignores SIGXCPU, so the hard limit (SIGKILL) is the one that acts
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu))
        resource.prlimit(pid, resource.RLIMIT_AS, (memory, memory))
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))
        if not self._as_root:
            # counted per user namespace, so it does not include the user's other processes
            n = limits.max_processes + 1
            resource.prlimit(pid, resource.RLIMIT_NPROC, (n, n))


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

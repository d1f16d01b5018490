"""``sandbox="causalverify"`` for any Inspect task: bubblewrap, as CausalVerify runs model code.

Each sample gets a private host folder, bound at ``/scratch`` (the working directory) in a fresh
bubblewrap sandbox for every command: no network, a read-only system, a private ``/tmp``, the
sample's own uid without capabilities (held from the sample's start to its cleanup, so that a
command can change what the ones before it wrote, and no other sample or cell has that uid
meanwhile), the system-call filter, CPU, memory, process and output limits, and a timeout that
kills the whole process tree (the command is PID 1 of its namespace). Files are read and written
by commands inside the sandbox too, so a symbolic link a command leaves in the folder can never
make the harness touch a file of the host. The folder is deleted at cleanup.

``read_file`` and ``write_file`` touch regular files only, within a short time limit
(:data:`FILE_SECONDS`): a FIFO, socket or device a command left behind (or a symbolic link in
its place) is refused at once with a clear error instead of blocking the sample; the bytes read
are exactly those of the file (see :mod:`causalverify.inspect_eval._filetool`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import shutil
import tempfile
import weakref
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from typing import Any

from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentLimits,
    sandboxenv,
)

from causalverify.errors import SandboxUnavailableError
from causalverify.inspect_eval._filetool import REFUSALS
from causalverify.sandbox import Limits, get_sandbox
from causalverify.sandbox.bwrap import SCRATCH, BwrapSandbox

#: limits of one command unless the call gives a timeout
DEFAULT_LIMITS = Limits(wall_seconds=600.0, cpu_seconds=600.0)
#: the time limit of reading or writing one file (100 MiB, Inspect's read limit, takes seconds)
FILE_SECONDS = 30.0
_FILE_TOOL = (Path(__file__).parent / "_filetool.py").read_text(encoding="utf-8")
_ERRORS: dict[str, type[OSError]] = {
    "FileNotFoundError": FileNotFoundError,
    "PermissionError": PermissionError,
    "IsADirectoryError": IsADirectoryError,
}


def _bwrap() -> BwrapSandbox:
    box = get_sandbox()
    if not isinstance(box, BwrapSandbox):  # pragma: no cover - get_sandbox() is bubblewrap
        raise SandboxUnavailableError("the causalverify sandbox needs bubblewrap")
    return box


def _inside(path: str) -> str:
    """A path inside the sandbox: relative paths are under /scratch; nothing may leave it."""
    p = PurePosixPath(path)
    full = p if p.is_absolute() else PurePosixPath(SCRATCH) / p
    if ".." in full.parts:
        raise ValueError(f"path {path!r} leaves the sandbox's folder")
    return str(full)


@sandboxenv(name="causalverify")
class CausalVerifySandbox(SandboxEnvironment):
    """One sample's sandbox (see the module docstring)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        # every command and file operation on the folder runs as one user, held until close()
        self._owner = ExitStack()
        self._uid = self._owner.enter_context(_bwrap().workspace_owner())
        self._release = weakref.finalize(self, self._owner.close)

    def close(self) -> None:
        """Give back the folder's uid (the folder itself is the caller's to delete)."""
        self._release()

    @classmethod
    async def task_init(cls, task_name: str, config: Any) -> None:
        await asyncio.to_thread(_bwrap)  # the self-test: refuse to start without protection

    @classmethod
    async def sample_init(
        cls, task_name: str, config: Any, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        workspace = Path(tempfile.mkdtemp(prefix="causalverify-inspect-"))
        return {"default": cls(workspace)}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: Any,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for env in environments.values():
            if isinstance(env, CausalVerifySandbox):
                shutil.rmtree(env.workspace, ignore_errors=True)
                env.close()

    @classmethod
    async def task_cleanup(cls, task_name: str, config: Any, cleanup: bool) -> None:
        return None

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        limits = DEFAULT_LIMITS
        if timeout is not None:
            limits = Limits(
                wall_seconds=float(timeout),
                cpu_seconds=float(timeout),
                memory_mb=limits.memory_mb,
                max_processes=limits.max_processes,
                max_output_bytes=limits.max_output_bytes,
            )
        data = input.encode("utf-8") if isinstance(input, str) else input
        result = await asyncio.to_thread(
            _bwrap().run_command,
            list(cmd),
            workspace=self.workspace,
            stdin=data,
            env=env,
            cwd=cwd,
            limits=limits,
            owner=self._uid,
        )
        if result.status == "sandbox_unavailable":
            raise SandboxUnavailableError(result.detail)
        if result.status == "timeout":
            raise TimeoutError(f"command timed out after {limits.wall_seconds:g} s")
        code = result.exit_code if result.exit_code is not None else 1
        return ExecResult(
            success=code == 0, returncode=code, stdout=result.stdout, stderr=result.stderr
        )

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Replace the regular file ``file`` (creating its folders) by ``contents``.

        Raises PermissionError (also for a FIFO, socket, device or symbolic link in its place),
        IsADirectoryError or TimeoutError (after :data:`FILE_SECONDS`).
        """
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        await self._file_tool(file, ["write", _inside(file)], stdin=data, output=0)

    async def read_file(self, file: str, text: bool = True) -> str | bytes:  # type: ignore[override]
        """The bytes of the regular file ``file`` (text: decoded as UTF-8, newlines kept).

        Raises FileNotFoundError, PermissionError (also for a FIFO, socket, device or symbolic
        link), IsADirectoryError, OutputLimitExceededError (over Inspect's read limit) or
        TimeoutError (after :data:`FILE_SECONDS`).
        """
        limit = int(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE)
        encoded = await self._file_tool(
            file, ["read", _inside(file), str(limit)], output=4 * (limit // 3 + 1)
        )
        try:
            data = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise OSError(f"cannot read {file}: the reader's output was garbled") from exc
        return data.decode("utf-8") if text else data

    async def _file_tool(
        self, file: str, args: list[str], *, stdin: bytes | None = None, output: int
    ) -> str:
        """Run :mod:`causalverify.inspect_eval._filetool` in the sandbox; its stdout."""
        box = _bwrap()
        limits = Limits(
            wall_seconds=FILE_SECONDS,
            cpu_seconds=FILE_SECONDS,
            memory_mb=DEFAULT_LIMITS.memory_mb,
            max_processes=DEFAULT_LIMITS.max_processes,
            max_output_bytes=output + 4096,
        )
        argv = [box.toolchain.python, "-I", "-B", "-c", _FILE_TOOL, *args]
        result = await asyncio.to_thread(
            box.run_command,
            argv,
            workspace=self.workspace,
            stdin=stdin,
            limits=limits,
            owner=self._uid,
        )
        if result.status == "sandbox_unavailable":
            raise SandboxUnavailableError(result.detail)
        if result.status == "timeout":
            raise TimeoutError(f"{args[0]} of {file} took over {FILE_SECONDS:g} s")
        refusal = result.stderr.strip() if result.exit_code == 3 else ""
        if refusal == "large":
            raise OutputLimitExceededError(
                limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, truncated_output=None
            )
        if refusal in REFUSALS:
            kind, why = REFUSALS[refusal]
            raise _ERRORS[kind](f"cannot {args[0]} {file}: {why}")
        if result.exit_code != 0 or result.stdout_truncated:
            detail = result.stderr.strip()[-500:] or result.detail or result.status
            raise OSError(f"cannot {args[0]} {file}: {detail}")
        return result.stdout

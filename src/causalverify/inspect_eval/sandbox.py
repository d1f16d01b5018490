"""``sandbox="causalverify"`` for any Inspect task: bubblewrap, as CausalVerify runs model code.

Each sample gets a private host folder, bound at ``/scratch`` (the working directory) in a fresh
bubblewrap sandbox for every command: no network, a read-only system, a private ``/tmp``, its own
uid without capabilities, the system-call filter, CPU, memory, process and output limits, and a
timeout that kills the whole process tree (the command is PID 1 of its namespace). Files are
read and written by commands inside the sandbox too, so a symbolic link a command leaves in the
folder can never make the harness touch a file of the host. The folder is deleted at cleanup.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from inspect_ai.util import ExecResult, SandboxEnvironment, sandboxenv

from causalverify.errors import SandboxUnavailableError
from causalverify.sandbox import Limits, get_sandbox
from causalverify.sandbox.bwrap import SCRATCH, BwrapSandbox

#: limits of one command unless the call gives a timeout
DEFAULT_LIMITS = Limits(wall_seconds=600.0, cpu_seconds=600.0)


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
        target = _inside(file)
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        script = 'mkdir -p "$(dirname "$1")" && cat > "$1"'
        result = await self.exec(["sh", "-c", script, "sh", target], input=data)
        if not result.success:
            raise PermissionError(f"cannot write {file}: {result.stderr.strip()}")

    async def read_file(self, file: str, text: bool = True) -> str | bytes:  # type: ignore[override]
        target = _inside(file)
        result = await self.exec(["cat", target])
        if not result.success:
            raise FileNotFoundError(f"cannot read {file}: {result.stderr.strip()}")
        return result.stdout if text else result.stdout.encode("utf-8")

"""Running without isolation, for machines where bubblewrap cannot work.

Only resource limits (rlimits) and a private temporary working folder apply: the script can read
the user's files, use the network and see a cleared but otherwise ordinary system. Every result
says ``sandboxed=False``. :func:`causalverify.sandbox.get_sandbox` hands this out only when asked
twice (``unsafe=True`` and ``CAUSALVERIFY_ALLOW_UNSAFE=1``).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from causalverify.families import Language
from causalverify.sandbox import fitlog
from causalverify.sandbox._classify import RunFacts, to_result
from causalverify.sandbox._process import supervise
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.base import ExecResult, Files, Limits
from causalverify.sandbox.bwrap import check_relative, sandbox_env, script_command
from causalverify.sandbox.packages import with_runtime_install

_MB = 1024 * 1024


class UnsafeSandbox:
    """Plain subprocess in a temporary folder with rlimits; NOT a security boundary."""

    sandboxed = False

    def __init__(self, *, limits: Limits | None = None, fit_log: bool = True) -> None:
        self.toolchain = discover()
        self.limits = limits or Limits()
        self.fit_log = fit_log

    def policy(self) -> dict[str, object]:
        """A JSON-able description (no isolation), for a run's metadata."""
        return {
            "kind": "unsafe-subprocess",
            "namespaces": [],
            "environment": sandbox_env(self.toolchain),
            "default_limits": asdict(self.limits),
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
        """Run ``code`` with its files in a fresh temporary folder (no isolation)."""
        limits = limits or self.limits
        root = Path(tempfile.mkdtemp(prefix="causalverify-unsafe-"))
        hooks = Path(tempfile.mkdtemp(prefix="causalverify-hooks-"))
        try:
            for rel, content in files.items():
                target = root / check_relative(rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, Path):
                    shutil.copyfile(content, target)
                else:
                    target.write_bytes(content)
            script = root / f".main.{'R' if language == 'r' else 'py'}"
            script.write_text(code, encoding="utf-8")
            env = {**sandbox_env(self.toolchain), "HOME": str(root), "TMPDIR": str(root)}
            hooked = self.fit_log and not (bare and language == "r")
            argv = script_command(self.toolchain, language, str(script), fit_log=hooked, bare=bare)
            if not hooked:
                return with_runtime_install(
                    self._spawn(argv, root, env, limits, None), code, language
                )
            for name, content in fitlog.hook_files().items():
                (hooks / name).write_bytes(content)
            log_r, log_w = os.pipe2(os.O_CLOEXEC)
            env.update(fitlog.hook_env(language, log_w, str(hooks)))
            result = self._spawn(argv, root, env, limits, (log_r, log_w))
            return with_runtime_install(result, code, language)
        finally:
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(hooks, ignore_errors=True)

    def _spawn(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        limits: Limits,
        log: tuple[int, int] | None,
    ) -> ExecResult:
        cpu = max(1, int(limits.cpu_seconds + 0.999))
        memory = limits.memory_mb * _MB

        def preexec() -> None:  # runs in the child between fork and exec
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=preexec,
                pass_fds=() if log is None else (log[1],),
            )
        except BaseException:
            if log is not None:
                os.close(log[0])
            raise
        finally:
            if log is not None:
                os.close(log[1])

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

        outcome = supervise(
            proc,
            started=started,
            wall_seconds=limits.wall_seconds,
            max_output_bytes=limits.max_output_bytes,
            kill=kill,
            side_fd=None if log is None else log[0],
            side_cap=fitlog.MAX_BYTES,
        )
        return to_result(outcome, RunFacts(limits=limits, sandboxed=False))

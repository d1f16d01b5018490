"""The sandbox interface: run untrusted code, always get a result back.

A failing user program (syntax error, crash, timeout, memory blow-up) is an :class:`ExecResult`
with a status, never an exception. Only setup problems raise
(:class:`~causalverify.errors.SandboxUnavailableError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from causalverify.families import Language
from causalverify.records.execution import ExecResult, ExecStatus, FitEntry, FitTerm, Limits

__all__ = ["ExecResult", "ExecStatus", "Files", "FitEntry", "FitTerm", "Limits", "Sandbox"]

#: files placed in the scratch folder: relative path -> content (bytes) or a host file to copy
Files = Mapping[str, bytes | Path]


class Sandbox(Protocol):
    """Runs a script with its files in a private scratch folder under resource limits."""

    def run(
        self,
        code: str,
        language: Language,
        files: Files,
        limits: Limits | None = None,
        *,
        bare: bool = False,
    ) -> ExecResult:
        """Run ``code`` with ``files`` in its scratch folder under ``limits``.

        ``bare`` is for the harness's own fixed R programs (the parse check): R starts with
        the base package only and without the fit log, which saves most of R's start-up. It
        changes nothing for Python.
        """
        ...

"""Sandboxed execution of model-written R and Python (see docs/SANDBOX.md).

Public API: :func:`get_sandbox`, :func:`extract_code`, :func:`check_parses`,
:func:`environment_manifest`, :func:`line_origins` (which code printed each stdout line), and
the records :class:`Limits`, :class:`ExecResult`, :class:`CodeBlock`, :class:`ParseCheck`.
"""

from __future__ import annotations

from causalverify.records import Manifest
from causalverify.sandbox._factory import get_sandbox
from causalverify.sandbox.base import ExecResult, ExecStatus, Files, Limits, Sandbox
from causalverify.sandbox.codeblocks import CodeBlock, ParseCheck, check_parses, extract_code
from causalverify.sandbox.manifest import environment_manifest
from causalverify.sandbox.outputs import line_origins

__all__ = [
    "CodeBlock",
    "ExecResult",
    "ExecStatus",
    "Files",
    "Limits",
    "Manifest",
    "ParseCheck",
    "Sandbox",
    "check_parses",
    "environment_manifest",
    "extract_code",
    "get_sandbox",
    "line_origins",
]

"""What Inspect loads through the ``inspect_ai`` entry point: the task and the sandbox."""

from __future__ import annotations

from causalverify.inspect_eval.sandbox import CausalVerifySandbox
from causalverify.inspect_eval.task import causalverify_task

__all__ = ["CausalVerifySandbox", "causalverify_task"]

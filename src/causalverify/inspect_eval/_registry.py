"""What Inspect loads through the ``inspect_ai`` entry point: the task, the sandbox and the
offline reference agents (``--model causalverify/<agent>``)."""

from __future__ import annotations

from causalverify.inspect_eval.reference_model import ReferenceModelAPI
from causalverify.inspect_eval.sandbox import CausalVerifySandbox
from causalverify.inspect_eval.task import causalverify_task

__all__ = ["CausalVerifySandbox", "ReferenceModelAPI", "causalverify_task"]

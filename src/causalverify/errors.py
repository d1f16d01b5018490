"""The one exception hierarchy of CausalVerify.

::

    CausalVerifyError            base of every error this package raises on purpose
    ├── SetupError               something the user must install or configure; message says how
    │   └── SandboxUnavailableError  the sandbox cannot be set up or a protection does not hold
    ├── SuiteError               a suite or scenario file is missing, malformed or fails its checks
    ├── StoreError               the run store is unreadable or belongs to another run
    └── ProviderError            a model provider failed for good (after retries)

Per-cell failures of model-written code (no code, parse error, crash, timeout, no estimate) are
never exceptions: they are statuses stored with the cell.
"""

from __future__ import annotations


class CausalVerifyError(Exception):
    """Base class of every error raised on purpose by CausalVerify."""


class SetupError(CausalVerifyError):
    """A missing or misconfigured dependency; the message says how to fix it."""


class SandboxUnavailableError(SetupError):
    """The sandbox cannot run, or its self-test found a protection that does not hold."""


class SuiteError(CausalVerifyError):
    """A suite or scenario is missing, malformed, or violates a suite check."""


class StoreError(CausalVerifyError):
    """The run store cannot be read or written as asked."""


class ProviderError(CausalVerifyError):
    """A model provider failed permanently (after retries)."""

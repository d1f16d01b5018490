"""The one exception hierarchy of CausalVerify.

::

    CausalVerifyError            base of every error this package raises on purpose
    ├── SetupError               something the user must install or configure; message says how
    │   └── SandboxUnavailableError  the sandbox cannot be set up or a protection does not hold
    ├── SuiteError               a suite or scenario file is missing, malformed or fails its checks
    ├── StoreError               the run store is unreadable or belongs to another run
    ├── ProviderError            a model provider failed for good (after retries)
    ├── MalformedResponseError   a model server's answer is not a completion (retried as transient)
    ├── RepositoryUnreachableError  no CRAN-style repository answers at the given address
    ├── InstallError             R could not install a package
    ├── CellsFormatError         a per-cell table lacks columns or holds unreadable values
    ├── SuiteMismatchError       two runs cannot be paired: they ran different suites
    ├── CompareError             a run and the published table cannot be compared as asked
    └── DevSetError              the development set or its work folder cannot be used as asked

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


class MalformedResponseError(CausalVerifyError):
    """A model server answered with a body that is not the expected completion.

    Raised inside a provider's request and classified there as a transient failure (retried);
    it never reaches the caller as such.
    """


class RepositoryUnreachableError(CausalVerifyError):
    """No CRAN-style repository answered at the given address."""


class InstallError(CausalVerifyError):
    """R could not install a package."""


class CellsFormatError(CausalVerifyError):
    """A per-cell table lacks required columns or holds values that cannot be read."""


class SuiteMismatchError(CausalVerifyError):
    """Two runs cannot be paired: they were run on different suites."""


class CompareError(CausalVerifyError):
    """The run and the published table cannot be compared as asked."""


class DevSetError(CausalVerifyError):
    """The development set or its work folder cannot be used as asked."""

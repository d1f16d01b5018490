"""Choosing the sandbox: bubblewrap after a passing self-test, or (twice opted-in) none."""

from __future__ import annotations

import os
import threading

from causalverify.errors import SandboxUnavailableError
from causalverify.sandbox.base import Sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.selftest import WARM_CHECK, run_selftest
from causalverify.sandbox.unsafe import UnsafeSandbox
from causalverify.sandbox.warm import warm_default

UNSAFE_ENV = "CAUSALVERIFY_ALLOW_UNSAFE"

_lock = threading.Lock()
_verified: dict[bool, Sandbox] = {}


def _verified_bwrap(warm: bool) -> Sandbox:
    with _lock:
        if warm not in _verified:
            sandbox = BwrapSandbox(warm=warm)
            checks = run_selftest(sandbox)
            # without a warm interpreter Python cells run cold, whose protections were checked
            failed = [c for c in checks if not c.ok and c.name != WARM_CHECK]
            if failed:
                lines = "; ".join(f"{c.name}: {c.detail}" for c in failed)
                raise SandboxUnavailableError(
                    f"sandbox self-test failed ({lines}). Run `causalverify doctor` for details; "
                    "install bubblewrap and allow user namespaces "
                    "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces>0)."
                )
            _verified[warm] = sandbox
        return _verified[warm]


def get_sandbox(*, unsafe: bool = False, warm: bool | None = None) -> Sandbox:
    """The sandbox that executes model-written code.

    Parameters
    ----------
    unsafe : bool
        Run without isolation (rlimits in a temporary folder only). Honoured only when the
        environment variable ``CAUSALVERIFY_ALLOW_UNSAFE=1`` is also set; results then carry
        ``sandboxed=False``.
    warm : bool, optional
        Fork Python cells from a warm interpreter (:mod:`causalverify.sandbox.warm`). The
        default is on unless the environment variable ``CAUSALVERIFY_WARM=0`` is set.

    Returns
    -------
    Sandbox
        A bubblewrap sandbox whose protections passed a self-test (run once per process and
        setting; with ``warm`` the Python probes run on the warm path).

    Raises
    ------
    SandboxUnavailableError
        bubblewrap is missing or a protection does not hold (fail closed), or ``unsafe`` was
        requested without the environment variable.
    """
    if unsafe:
        if os.environ.get(UNSAFE_ENV) != "1":
            raise SandboxUnavailableError(
                f"running model-written code without a sandbox needs both --unsafe-no-sandbox and "
                f"the environment variable {UNSAFE_ENV}=1"
            )

        return UnsafeSandbox()
    return _verified_bwrap(warm_default() if warm is None else warm)

"""Choosing the sandbox: bubblewrap after a passing self-test, or (twice opted-in) none."""

from __future__ import annotations

import logging
import os
import threading

from causalverify.errors import SandboxUnavailableError
from causalverify.sandbox._selftest_cache import cached_selftest
from causalverify.sandbox.base import Sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.selftest import run_cold_selftest, run_warm_selftest
from causalverify.sandbox.unsafe import UnsafeSandbox
from causalverify.sandbox.warm import warm_default

UNSAFE_ENV = "CAUSALVERIFY_ALLOW_UNSAFE"

_lock = threading.Lock()
_verified: dict[bool, Sandbox] = {}
log = logging.getLogger(__name__)


def _verified_bwrap(warm: bool) -> Sandbox:
    with _lock:
        if warm not in _verified:
            sandbox = BwrapSandbox(warm=warm)
            # the cold path (R, and Python without the warm interpreter) is checked now; the
            # warm one only when a Python cell first needs it
            checks = cached_selftest(sandbox, "cold", run_cold_selftest)
            failed = [c for c in checks if not c.ok]
            if failed:
                lines = "; ".join(f"{c.name}: {c.detail}" for c in failed)
                raise SandboxUnavailableError(
                    f"sandbox self-test failed ({lines}). Run `causalverify doctor` for details; "
                    "install bubblewrap and allow user namespaces "
                    "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces>0)."
                )
            if sandbox.warm is not None:
                sandbox.warm_gate = _WarmGate(sandbox)
            _verified[warm] = sandbox
        return _verified[warm]


class _WarmGate:
    """The warm path's self-test, run once before its first Python cell (the interpreter
    starts then). When it fails the interpreter is stopped and Python cells run cold, on the
    path checked when the sandbox was handed out."""

    def __init__(self, sandbox: BwrapSandbox) -> None:
        self._box = sandbox
        self._lock = threading.Lock()
        self._ok: bool | None = None

    def __call__(self) -> bool:
        with self._lock:
            if self._ok is None:
                checks = cached_selftest(self._box, "warm", run_warm_selftest)
                failed = [c for c in checks if not c.ok]
                self._ok = not failed
                if failed:
                    lines = "; ".join(f"{c.name}: {c.detail}" for c in failed)
                    log.warning("warm Python path unavailable (%s); Python cells run cold", lines)
                    if self._box.warm is not None:
                        self._box.warm.close()
            return self._ok


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
        A bubblewrap sandbox whose protections passed a self-test on its cold path (once per
        process and setting, or kept from a recent passing one: see
        :mod:`~causalverify.sandbox._selftest_cache`). With ``warm`` the interpreter starts,
        and its path is self-tested, only when a Python cell first needs it.

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

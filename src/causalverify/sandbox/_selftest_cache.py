"""Self-test results kept between processes, so that ``exec``, a resumed run or a Dask worker
does not repeat a passing self-test it has just seen pass.

A result is kept only when every check passed, for :data:`TTL_SECONDS`, under a key made of
everything a protection rests on: the sandbox's path (cold or warm), its policy and system call
filter, the user it runs as, bubblewrap, ``setpriv`` and the interpreters (path, size, mtime),
the kernel (release, build, boot id) and the namespace settings of ``/proc/sys``, and the source
of the sandbox package itself. A change to any of them, a reboot, or an expired entry runs the
self-test again; a failure is never kept, so a repaired machine is checked at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from causalverify.sandbox.selftest import Check

#: how long a passing self-test is trusted
TTL_SECONDS = 6 * 3600
#: ``CAUSALVERIFY_SELFTEST=always`` runs the self-test in every process (nothing is kept)
SELFTEST_ENV = "CAUSALVERIFY_SELFTEST"

_SYSCTLS = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/kernel/random/boot_id",
)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "causalverify"


def _stat(path: str | None) -> str:
    if not path:
        return "none"
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:absent"
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return "absent"


def _source_digest() -> str:
    digest = hashlib.sha256()
    package = resources.files("causalverify.sandbox")
    for entry in sorted(package.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".py", ".R")):
            digest.update(entry.name.encode())
            digest.update(entry.read_bytes())
    return digest.hexdigest()


def cache_key(sandbox: Any, path: str) -> str:
    """The key of ``sandbox``'s ``path`` (``"cold"`` or ``"warm"``) on this machine, now."""
    tc = sandbox.toolchain
    policy = sandbox.policy()
    seccomp = sandbox.seccomp_program
    uname = os.uname()
    parts = [
        path,
        json.dumps(policy, sort_keys=True, default=repr),
        seccomp.hex() if seccomp else "no filter",
        f"euid {os.geteuid()}",
        *(_stat(p) for p in (tc.bwrap, tc.python, tc.rscript, shutil.which("setpriv"))),
        uname.release,
        uname.version,
        *(f"{p}={_read(p)}" for p in _SYSCTLS),
        _source_digest(),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def cached_selftest(sandbox: Any, path: str, run: Callable[[Any], list[Check]]) -> list[Check]:
    """``run(sandbox)``, or the checks of a passing run kept under the same key.

    Returns
    -------
    list of Check
        The checks; a kept result's details end with "(kept from a self-test N min ago)".
    """
    if os.environ.get(SELFTEST_ENV, "").strip().lower() == "always":
        return run(sandbox)
    key = cache_key(sandbox, path)
    file = _cache_dir() / f"selftest-{key}.json"
    try:
        kept = json.loads(file.read_text())
        age = time.time() - float(kept["checked_at"])
        if 0 <= age < TTL_SECONDS:
            note = f" (kept from a self-test {age / 60:.0f} min ago)"
            return [
                Check(name=c["name"], ok=True, detail=c["detail"] + note) for c in kept["checks"]
            ]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    checks = run(sandbox)
    if checks and all(c.ok for c in checks):
        record = {
            "checked_at": time.time(),
            "checks": [{"name": c.name, "detail": c.detail} for c in checks],
        }
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
            tmp.replace(file)
        except OSError:
            pass  # an unwritable cache only costs time
    return checks

"""Discovering (once) what must be visible inside the sandbox: interpreters and system paths."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from causalverify.sandbox import rlibrary

#: the parts of /etc that R and Python need; nothing else of /etc is visible (no shadow, no keys)
ETC_ALLOWLIST: tuple[str, ...] = (
    "/etc/R",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/fonts",
    "/etc/papersize",
    "/etc/mime.types",
)

#: where the managed R library appears inside the sandbox
SANDBOX_R_LIBRARY: str = "/opt/causalverify/r-library"

_TOP_LEVEL = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


@dataclass(frozen=True, kw_only=True)
class Toolchain:
    """Interpreters and the read-only view of the host given to every run."""

    bwrap: str | None
    python: str
    rscript: str | None
    r_home: str | None
    #: the R library CausalVerify manages (:mod:`.rlibrary`), when it exists: bound read-only at
    #: :data:`SANDBOX_R_LIBRARY`, so that no host path (a user's home) shows in a script's output
    r_library: str | None
    #: host paths bound read-only at the same place
    ro_binds: tuple[str, ...]
    #: (target, link) pairs recreated inside (merged-/usr systems)
    symlinks: tuple[tuple[str, str], ...]
    path_env: str


def _r_home(rscript: str | None) -> str | None:
    if rscript is None:
        return None
    env = os.environ.get("R_HOME")
    if env and Path(env).is_dir():
        return env
    r_bin = Path(rscript).with_name("R")
    try:
        out = subprocess.run(
            [str(r_bin) if r_bin.exists() else "R", "RHOME"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "/usr/lib/R" if Path("/usr/lib/R").is_dir() else None
    return out or None


def _managed_library(rscript: str | None) -> str | None:
    """The managed R library of this R, if it has been created."""
    if rscript is None:
        return None
    try:
        path = rlibrary.managed_library_path(rlibrary.r_version(rscript))
    except Exception:  # an R that cannot say its version has no managed library
        return None
    return str(path.resolve()) if path.is_dir() else None


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _python_roots() -> list[str]:
    exe_prefix = str(Path(os.path.realpath(sys.executable)).parent.parent)
    return [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, exe_prefix]


@functools.cache
def discover() -> Toolchain:
    """Find bwrap, the project's Python, Rscript and R_HOME; computed once per process."""
    rscript = shutil.which("Rscript")
    r_home = _r_home(rscript)
    binds: list[str] = ["/usr"]
    links: list[tuple[str, str]] = []
    for top in _TOP_LEVEL:
        if os.path.islink(top):
            links.append((os.readlink(top), top))
        elif os.path.isdir(top):
            binds.append(top)
    extra = [p for p in ETC_ALLOWLIST if os.path.exists(p)]
    candidates = [*_python_roots()]
    if r_home:
        candidates += [r_home, os.path.realpath(r_home)]
    candidates += ["/usr/local/lib/R", "/usr/share/R"]
    # the managed R library is bound at a fixed path of its own (SANDBOX_R_LIBRARY), not here
    r_library = _managed_library(rscript)
    for cand in candidates:
        real = os.path.realpath(cand)
        for p in (cand, real):
            if os.path.isdir(p) and not _under(p, binds):
                binds.append(p)
    venv_bin = str(Path(sys.executable).parent)
    return Toolchain(
        bwrap=shutil.which("bwrap"),
        python=sys.executable,
        rscript=rscript,
        r_home=r_home,
        r_library=r_library,
        ro_binds=tuple(binds + extra),
        symlinks=tuple(links),
        path_env=f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
    )

"""The environment manifest: R and Python versions and the analysis packages they can load.

Gathered once (one ``Rscript`` call, one Python call), then cached in-process and on disk under
the user cache folder, keyed by the interpreters' paths and modification times, so that a new
R package or a changed virtual environment refreshes it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from causalverify.records import Manifest
from causalverify.sandbox._toolchain import discover

__all__ = ["PYTHON_PACKAGES", "environment_manifest"]

#: Python analysis packages listed (when importable) in the manifest
PYTHON_PACKAGES: tuple[str, ...] = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "linearmodels",
    "pyfixest",
    "rdrobust",
    "matplotlib",
    "seaborn",
    "sklearn",
    "patsy",
    "formulaic",
    "differences",
    "csdid",
    "pysyncon",
    "rdd",
    "econml",
    "dowhy",
)

_R_LIST = (
    'ip <- installed.packages(fields = character(0))[, c("Package", "Version"), drop = FALSE];'
    "ip <- ip[!duplicated(ip[, 1]), , drop = FALSE];"
    'cat(R.version$major, ".", R.version$minor, "\\n", sep = "");'
    'cat(paste(ip[, 1], ip[, 2], sep = "\\t"), sep = "\\n")'
)

_PY_LIST = """
import importlib.metadata as md, importlib.util as u, json, platform, sys
names = sys.argv[1:]
dist_of = {"sklearn": "scikit-learn"}
found = {}
for n in names:
    if u.find_spec(n) is None:
        continue
    try:
        found[n] = md.version(dist_of.get(n, n))
    except md.PackageNotFoundError:
        found[n] = "unknown"
print(json.dumps({"python_version": platform.python_version(), "packages": found}))
"""


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "causalverify"


def _cache_key() -> str:
    tc = discover()
    parts: list[str] = [sys.version, tc.python, *PYTHON_PACKAGES]
    watched = [tc.python, os.path.realpath(tc.python), sys.prefix]
    watched += [str(p) for p in Path(sys.prefix).glob("lib/python*/site-packages")]
    if tc.rscript and tc.r_home:
        watched += [tc.rscript, tc.r_home, f"{tc.r_home}/library", f"{tc.r_home}/site-library"]
        watched += ["/usr/lib/R/site-library", "/usr/local/lib/R/site-library"]
    if tc.r_library:
        parts.append(tc.r_library)
        watched.append(tc.r_library)
    for path in watched:
        try:
            parts.append(f"{path}:{os.stat(path).st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:absent")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _r_part() -> tuple[str | None, dict[str, str]]:
    rscript = discover().rscript
    if rscript is None:
        return None, {}
    env = {k: v for k, v in os.environ.items() if k not in ("R_LIBS", "R_LIBS_USER")}
    library = discover().r_library
    if library:  # what the sandbox sees: the system library and the managed one
        env["R_LIBS"] = library
    out = subprocess.run(
        [rscript, "--vanilla", "-e", _R_LIST],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    ).stdout.splitlines()
    packages = dict(line.split("\t", 1) for line in out[1:] if "\t" in line)
    return out[0].strip(), dict(sorted(packages.items()))


def _python_part() -> tuple[str, dict[str, str]]:
    out = subprocess.run(
        [discover().python, "-I", "-c", _PY_LIST, *PYTHON_PACKAGES],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    data = json.loads(out)
    return str(data["python_version"]), dict(sorted(data["packages"].items()))


def _gather() -> Manifest:
    r_version, r_packages = _r_part()
    py_version, py_packages = _python_part()
    return Manifest(
        r_version=r_version,
        r_packages=r_packages,
        python_version=py_version,
        python_packages=py_packages,
    )


@functools.cache
def _memo(key: str) -> Manifest:
    path = _cache_dir() / f"manifest-{key}.json"
    try:
        return Manifest.model_validate_json(path.read_text())
    except (OSError, ValueError):
        pass
    manifest = _gather()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(manifest.model_dump(), indent=2, sort_keys=True) + "\n")
        tmp.replace(path)
    except OSError:
        pass  # an unwritable cache only costs time
    return manifest


def environment_manifest(*, refresh: bool = False) -> Manifest:
    """R and Python versions and installed analysis packages of the execution environment.

    Parameters
    ----------
    refresh : bool
        Ignore both caches and gather again.

    Returns
    -------
    Manifest
        ``r_version`` is ``None`` when R is not installed.
    """
    key = _cache_key()
    if refresh:
        _memo.cache_clear()
        (_cache_dir() / f"manifest-{key}.json").unlink(missing_ok=True)
    return _memo(key)

"""The R library CausalVerify manages: CRAN packages Debian does not ship (fixest, rdrobust, ...).

One library per R version under the user data folder
(``$XDG_DATA_HOME/causalverify/r-library/<major.minor>``, or ``CAUSALVERIFY_R_LIBRARY``), never the
system library. The sandbox binds it read-only and puts it on ``R_LIBS``; the environment
manifest, ``doctor`` and the prompt list what it holds. :func:`install_packages` installs from a
CRAN-style repository (``--repos``, else ``CAUSALVERIFY_CRAN_REPOS``, else the CRAN cloud mirror)
and first checks, with a short connect timeout, that the repository answers, so an unreachable
mirror costs seconds and one clear line. Where each package came from is kept in
``SOURCES.json`` in the library.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from causalverify.errors import CausalVerifyError

LIBRARY_ENV: Final = "CAUSALVERIFY_R_LIBRARY"
REPOS_ENV: Final = "CAUSALVERIFY_CRAN_REPOS"
DEFAULT_REPOS: Final = "https://cloud.r-project.org"
#: what ``make setup`` tries to install (the packages real model code loads that Debian lacks)
RECOMMENDED: Final[tuple[str, ...]] = (
    "fixest",
    "rdrobust",
    "ivreg",
    "did",
    "rddensity",
    "modelsummary",
)
SOURCES_FILE: Final = "SOURCES.json"


class RepositoryUnreachableError(CausalVerifyError):
    """No CRAN-style repository answered at the given address."""


class InstallError(CausalVerifyError):
    """R could not install a package."""


@functools.cache
def r_version(rscript: str) -> str:
    """``major.minor`` of the R that ``rscript`` runs (one library per R version).

    Read from ``Rscript --version``, which does not start R.
    """
    done = subprocess.run(
        [rscript, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    m = re.search(r"version (\d+)\.(\d+)", done.stdout + done.stderr)
    if m is None:
        raise CausalVerifyError(f"could not read the R version from `{rscript} --version`")
    return f"{m.group(1)}.{m.group(2)}"


def managed_library_path(version: str) -> Path:
    """The managed library of R ``version`` (it may not exist yet)."""
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "causalverify" / "r-library" / version


def default_repos() -> str:
    """``CAUSALVERIFY_CRAN_REPOS`` or the CRAN cloud mirror."""
    return os.environ.get(REPOS_ENV) or DEFAULT_REPOS


def check_repository(repos: str, *, timeout: float = 5.0) -> None:
    """Raise :class:`RepositoryUnreachableError` unless ``repos`` serves a package index."""
    index = repos.rstrip("/") + "/src/contrib/PACKAGES"
    if repos.startswith("file://"):
        if not Path(index[len("file://") :]).is_file():
            raise RepositoryUnreachableError(f"no CRAN-style repository at {repos} (no {index})")
        return
    try:
        with urllib.request.urlopen(index, timeout=timeout) as response:
            response.read(1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RepositoryUnreachableError(
            f"no CRAN mirror answered at {repos} ({reason}); R packages from Debian only "
            f"(set --repos or {REPOS_ENV} to a reachable mirror)"
        ) from None


@dataclass(frozen=True)
class InstalledPackage:
    """A package of the managed library."""

    name: str
    version: str
    repository: str


def list_packages(library: Path) -> list[InstalledPackage]:
    """The packages installed in ``library``, with the repository each came from."""
    sources = _sources(library)
    out: list[InstalledPackage] = []
    if not library.is_dir():
        return out
    for desc in sorted(library.glob("*/DESCRIPTION")):
        fields = _description(desc)
        name = fields.get("Package", desc.parent.name)
        version = fields.get("Version", "?")
        repo = sources.get(name) or fields.get("Repository", "?")
        out.append(InstalledPackage(name, version, repo))
    return out


def _description(path: Path) -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return fields
    for line in text.splitlines():
        if ":" in line and not line.startswith((" ", "\t")):
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    return fields


def _sources(library: Path) -> dict[str, str]:
    try:
        data = json.loads((library / SOURCES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


_INSTALL_R: Final = """
args <- commandArgs(trailingOnly = TRUE)
lib <- args[1]; repos <- args[2]; pkgs <- args[-(1:2)]
options(timeout = 300, warn = 1)
before <- rownames(installed.packages(lib.loc = lib))
install.packages(pkgs, lib = lib, repos = repos, dependencies = c("Depends", "Imports", "LinkingTo"),
                 quiet = TRUE)
after <- rownames(installed.packages(lib.loc = lib))
all_libs <- c(lib, .libPaths())
missing <- pkgs[!vapply(pkgs, function(p) nzchar(system.file(package = p, lib.loc = all_libs)), TRUE)]
cat("NEW", setdiff(after, before), "\\n")
if (length(missing)) { cat("MISSING", missing, "\\n"); quit(status = 3) }
"""


def install_packages(
    names: list[str], *, rscript: str, library: Path, repos: str, timeout: float = 5.0
) -> list[str]:
    """Install ``names`` (and their dependencies) from ``repos`` into ``library``.

    Returns
    -------
    list of str
        The packages newly installed (dependencies included).

    Raises
    ------
    RepositoryUnreachableError
        The repository did not answer within ``timeout`` seconds.
    InstallError
        R failed to install one of ``names``.
    """
    check_repository(repos, timeout=timeout)
    library.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("R_LIBS", "R_LIBS_USER")}
    env["R_LIBS"] = str(library)
    done = subprocess.run(
        [rscript, "--vanilla", "-e", _INSTALL_R, str(library), repos, *names],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    new: list[str] = []
    for line in done.stdout.splitlines():
        if line.startswith("NEW"):
            new = line.split()[1:]
    if new:
        sources = _sources(library)
        sources.update({name: repos for name in new})
        tmp = library / f".{SOURCES_FILE}.tmp"
        tmp.write_text(json.dumps(sources, indent=2, sort_keys=True) + "\n")
        tmp.replace(library / SOURCES_FILE)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise InstallError(f"R could not install {', '.join(names)} from {repos}:\n{tail}")
    return new

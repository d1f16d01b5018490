"""The R library CausalVerify manages: CRAN packages Debian does not ship (fixest, rdrobust, ...).

One library per R version under the user data folder
(``$XDG_DATA_HOME/causalverify/r-library/<major.minor>``, or ``CAUSALVERIFY_R_LIBRARY``), never the
system library. The sandbox binds it read-only and puts it on ``R_LIBS``; the environment
manifest, ``doctor`` and the prompt list what it holds. :func:`install_packages` installs from a
CRAN-style repository (``--repos``, else ``CAUSALVERIFY_CRAN_REPOS``, else the CRAN cloud mirror)
and first checks, with a short connect timeout, that the repository answers, so an unreachable
mirror costs seconds and one clear line. A package may be pinned (``rdrobust==3.0.0``): the
version is taken from the repository's index when it is the current one, else from the CRAN
archive layout (``src/contrib/Archive/<pkg>/<pkg>_<version>.tar.gz``). Where each package came
from, and the version pinned, is kept in ``SOURCES.json`` in the library.
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
from causalverify.errors import InstallError as InstallError
from causalverify.errors import RepositoryUnreachableError as RepositoryUnreachableError

LIBRARY_ENV: Final = "CAUSALVERIFY_R_LIBRARY"
REPOS_ENV: Final = "CAUSALVERIFY_CRAN_REPOS"
DEFAULT_REPOS: Final = "https://cloud.r-project.org"
#: what ``make setup`` tries to install: the CRAN packages that real answers load and Debian
#: lacks (every one the development set's R answers load, and those the other published
#: scenarios' answers load; ``pacman`` is a loader whose ``p_load`` installs only what is missing)
RECOMMENDED: Final[tuple[str, ...]] = (
    "fixest",
    "rdrobust",
    "ivreg",
    "rddensity",
    "stargazer",
    "rdd",
    "modelsummary",
    "lfe",
    "did",
    "quantmod",
    "PerformanceAnalytics",
    "pacman",
)
#: the published environment's versions, where known: the published answers' rdrobust outputs
#: match 3.0.0 exactly (4.0.0 chooses other bandwidths)
PAPER_VERSIONS: Final[dict[str, str]] = {"rdrobust": "3.0.0"}
#: the recommended set with the published versions pinned
PAPER: Final[tuple[str, ...]] = tuple(
    f"{n}=={PAPER_VERSIONS[n]}" if n in PAPER_VERSIONS else n for n in RECOMMENDED
)
SETS: Final[dict[str, tuple[str, ...]]] = {"recommended": RECOMMENDED, "paper": PAPER}
_SPEC: Final = re.compile(r"([A-Za-z][A-Za-z0-9.]*)(?:==([0-9][0-9.\-]*))?")
SOURCES_FILE: Final = "SOURCES.json"


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


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"rdrobust==3.0.0"`` -> ``("rdrobust", "3.0.0")``; ``"fixest"`` -> ``("fixest", None)``."""
    m = _SPEC.fullmatch(spec.strip())
    if m is None:
        raise InstallError(f"not a package name or name==version: {spec!r}")
    return m.group(1), m.group(2)


@dataclass(frozen=True)
class InstalledPackage:
    """A package of the managed library (``pinned``: the version asked for, when one was)."""

    name: str
    version: str
    repository: str
    pinned: str | None = None


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
        source = sources.get(name, {})
        repo = source.get("repository") or fields.get("Repository", "?")
        out.append(InstalledPackage(name, version, repo, source.get("pinned")))
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


def _sources(library: Path) -> dict[str, dict[str, str]]:
    """``SOURCES.json``: per package its repository and the version pinned (older libraries
    stored the repository alone)."""
    try:
        data = json.loads((library / SOURCES_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, dict[str, str]] = {}
    for name, value in data.items():
        if isinstance(value, str):
            out[str(name)] = {"repository": value}
        elif isinstance(value, dict):
            out[str(name)] = {str(k): str(v) for k, v in value.items() if v is not None}
    return out


_INSTALL_R: Final = """
args <- commandArgs(trailingOnly = TRUE)
lib <- args[1]; repos <- sub("/+$", "", args[2]); specs <- args[-(1:2)]
options(timeout = 300, warn = 1)
deps_kinds <- c("Depends", "Imports", "LinkingTo")
versions <- function() {
  ip <- installed.packages(lib.loc = lib)
  stats::setNames(ip[, "Version"], rownames(ip))
}
before <- versions()
name <- sub("==.*$", "", specs)
want <- ifelse(grepl("==", specs, fixed = TRUE), sub("^.*==", "", specs), NA_character_)
avail <- available.packages(repos = repos, type = "source")
current <- avail[match(name, rownames(avail)), "Version"]
from_index <- is.na(want) | (!is.na(current) & current == want)
if (any(from_index)) {
  install.packages(name[from_index], lib = lib, repos = repos, dependencies = deps_kinds,
                   quiet = TRUE)
}
for (i in which(!from_index)) {  # an older version: the CRAN archive layout
  have <- rownames(installed.packages(lib.loc = c(lib, .libPaths())))
  deps <- unlist(tools::package_dependencies(name[i], db = avail, which = deps_kinds))
  deps <- setdiff(deps, c(have, "R", rownames(installed.packages(priority = "base"))))
  if (length(deps)) install.packages(deps, lib = lib, repos = repos, dependencies = deps_kinds,
                                     quiet = TRUE)
  url <- sprintf("%s/src/contrib/Archive/%s/%s_%s.tar.gz", repos, name[i], name[i], want[i])
  dest <- file.path(tempdir(), basename(url))
  got <- tryCatch(download.file(url, dest, quiet = TRUE, mode = "wb") == 0L,
                  error = function(e) FALSE, warning = function(w) FALSE)
  if (got) install.packages(dest, lib = lib, repos = NULL, type = "source", quiet = TRUE)
  else cat("NOARCHIVE", url, "\\n")
}
after <- versions()
new <- names(after)[is.na(before[names(after)]) | before[names(after)] != after]
cat("NEW", new, "\\n")
in_lib <- after[name]
other <- vapply(name, function(p) nzchar(system.file(package = p, lib.loc = .libPaths())), TRUE)
missing <- specs[ifelse(is.na(want), is.na(in_lib) & !other, is.na(in_lib) | in_lib != want)]
if (length(missing)) { cat("MISSING", missing, "\\n"); quit(status = 3) }
"""


def install_packages(
    names: list[str], *, rscript: str, library: Path, repos: str, timeout: float = 5.0
) -> list[str]:
    """Install ``names`` (``pkg`` or ``pkg==version``, with their dependencies) from ``repos``
    into ``library``.

    Returns
    -------
    list of str
        The packages newly installed or changed (dependencies included).

    Raises
    ------
    RepositoryUnreachableError
        The repository did not answer within ``timeout`` seconds.
    InstallError
        R failed to install one of ``names`` (or the version pinned).
    """
    pins = dict(parse_spec(n) for n in names)
    check_repository(repos, timeout=timeout)
    library.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("R_LIBS", "R_LIBS_USER")}
    env["R_LIBS"] = str(library)
    specs = [f"{n}=={v}" if v else n for n, v in pins.items()]
    done = subprocess.run(
        [rscript, "--vanilla", "-e", _INSTALL_R, str(library), repos, *specs],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    new: list[str] = []
    for line in done.stdout.splitlines():
        if line.startswith("NEW"):
            new = line.split()[1:]
    if new or any(pins.values()):
        sources = _sources(library)
        installed = {p.name: p.version for p in list_packages(library)}
        for name in new:
            sources[name] = {"repository": repos}
        for name, version in pins.items():
            if name in installed:
                entry = sources.setdefault(name, {"repository": repos})
                if version and installed[name] == version:
                    entry["pinned"] = version
                elif not version:
                    entry.pop("pinned", None)
        tmp = library / f".{SOURCES_FILE}.tmp"
        tmp.write_text(json.dumps(sources, indent=2, sort_keys=True) + "\n")
        tmp.replace(library / SOURCES_FILE)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise InstallError(f"R could not install {', '.join(specs)} from {repos}:\n{tail}")
    return new

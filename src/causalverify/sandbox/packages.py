"""Which add-on packages a script asks for, and which it tries to install while it runs.

The scan reads the code, never runs it. It reports only names the code really asks for: a
package named in a call (``library(fixest)``, ``require("AER")``, ``requireNamespace``,
``pkg::fun``, ``pacman::p_load(a, b)``, Python ``import`` / ``from`` /
``importlib.import_module("x")``), or a character vector of names that the code passes to
``library``/``require`` through ``lapply``/``sapply``/``for`` (``library(p, character.only =
TRUE)`` names the vector's elements, not a package ``p``).

Run-time installs (``install.packages``, ``pak::pkg_install``, ``remotes::install_*``,
``devtools::install_*``, ``BiocManager::install``, ``pacman::p_load``, and ``pip install``
through ``subprocess`` or ``os.system``) cannot work in the sandbox, which has no network: when a
script that attempts one fails, :func:`runtime_install_missing` names the package it lacked.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Collection
from typing import Final

from causalverify.families import Language
from causalverify.sandbox.base import ExecResult
from causalverify.sandbox.manifest import environment_manifest

#: R packages that ship with R itself
R_BASE: Final[frozenset[str]] = frozenset(
    {
        "base", "compiler", "datasets", "graphics", "grDevices", "grid", "methods",
        "parallel", "splines", "stats", "stats4", "tcltk", "tools", "utils",
    }
)  # fmt: skip
_NAME: Final = r"[A-Za-z][A-Za-z0-9.]*"
#: an R variable (package names have no underscore; variables may: ``req_pkgs``)
_VAR: Final = r"[A-Za-z.][A-Za-z0-9._]*"
_R_CALL: Final = re.compile(
    rf"\b(?P<fn>library|require|requireNamespace|loadNamespace)\s*\(\s*(?:package\s*=\s*)?"
    rf"(?P<quote>[\"']?)(?P<name>{_NAME})(?P=quote)(?P<rest>[^()]*(?:\([^()]*\)[^()]*)*)\)"
)
_R_NAMESPACE: Final = re.compile(rf"\b({_NAME}):::?[A-Za-z._]")
_R_PACMAN: Final = re.compile(r"\bp_load\s*\(([^)]*)\)")
_R_VECTOR: Final = re.compile(rf"(?<![\w.])({_VAR})\s*(?:<-|=)\s*c\s*\(([^()]*)\)")
#: vectors derived from another: ``inst <- need[...]``, ``setdiff(required, installed)``,
#: ``unique(pkgs)``, ``Filter(function(p) ..., pkgs)``
_R_DERIVED: Final = re.compile(
    rf"(?<![\w.])(?P<lhs>{_VAR})\s*(?:<-|=)\s*(?:"
    rf"(?P<sub>{_VAR})\s*\[|"
    rf"(?:base::)?(?:setdiff|unique|intersect|sort|as\.character)\s*\(\s*(?P<fun>{_VAR})\s*[,)]|"
    rf"Filter\s*\((?P<body>[^\n]*?),\s*(?P<filt>{_VAR})\s*\)\s*$)",
    re.MULTILINE,
)
_STRING: Final = re.compile(r"[\"']([A-Za-z][A-Za-z0-9._]*)[\"']")
#: ``lapply(pkgs, library, ...)``, ``sapply(c("a", "b"), require, ...)``, ``for (p in pkgs)``
_R_APPLY: Final = re.compile(
    rf"\b(?:lapply|sapply|vapply|Map|purrr::walk|walk|for\s*\(\s*{_VAR}\s+in)\s*\(?\s*"
    rf"(?:c\s*\((?P<inline>[^()]*)\)|(?P<var>{_VAR}))"
)
_R_INSTALL: Final = re.compile(
    r"\b(?:(?:utils::)?install\.packages|(?:pak::)?pkg_install|pak::pak|"
    r"(?:remotes|devtools)::install_(?:github|cran|gitlab|bitbucket|version|url)|"
    r"install_github|install_cran|BiocManager::install|(?:pacman::)?p_load)\s*\(([^)]*)\)"
)
_PY_IMPORT: Final = re.compile(
    r"^\s*(?:from\s+([A-Za-z_][A-Za-z0-9_]*)[\w.]*\s+import\b|import\s+([^#\n]+))", re.MULTILINE
)
_PY_DYNAMIC: Final = re.compile(
    r"\b(?:importlib\.import_module|__import__)\s*\(\s*[\"']([A-Za-z_][A-Za-z0-9_]*)"
)
_PY_PIP: Final = re.compile(r"\bpip3?\b[\"'\s,]+install\b(?P<args>[^)\n]*)")
#: pip options followed by a value (the value is not a package)
_PIP_VALUE_OPTIONS: Final = frozenset(
    {
        "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
        "-f", "--find-links", "--retries", "--timeout", "-t", "--target", "--prefix", "--root",
        "--proxy", "--cache-dir", "-e", "--editable", "--platform", "--python-version",
        "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--log",
    }
)  # fmt: skip
#: pip distribution names whose import name differs
DIST_TO_IMPORT: Final[dict[str, str]] = {
    "scikit-learn": "sklearn",
    "scikit_learn": "sklearn",
    "beautifulsoup4": "bs4",
    "pyyaml": "yaml",
    "opencv-python": "cv2",
    "pillow": "PIL",
}


def _strip_r_comments(code: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in code.splitlines())


def _r_vectors(text: str) -> dict[str, list[str]]:
    """Character vectors assigned to a name (``pkgs <- c("fixest", "AER")``), and vectors
    derived from one (``inst <- pkgs[!...]``, ``setdiff(pkgs, installed)``): the names they
    can hold."""
    out: dict[str, list[str]] = {}
    for m in _R_VECTOR.finditer(text):
        names = _STRING.findall(m.group(2))
        if names:
            out[m.group(1)] = names
    for _ in range(4):  # chains: a <- c(...); b <- a[...]; d <- setdiff(b, ...)
        changed = False
        for m in _R_DERIVED.finditer(text):
            source = m.group("sub") or m.group("fun") or m.group("filt")
            lhs = m.group("lhs")
            if source in out and lhs != source and out.get(lhs) != out[source]:
                out[lhs] = list(dict.fromkeys([*out.get(lhs, []), *out[source]]))
                changed = True
        if not changed:
            break
    return out


_R_SOURCE_OF: Final = re.compile(
    rf"^\s*(?:(?P<var>{_VAR})\s*(?:\[|$)|"
    rf"(?:base::)?(?:setdiff|unique|intersect|sort)\s*\(\s*(?P<fun>{_VAR})\s*(?:[,)]|$))"
)


def _resolve(expr: str, vectors: dict[str, list[str]], loops: dict[str, list[str]]) -> list[str]:
    """The package names an argument can hold: a vector or loop variable, possibly subset
    (``need[!have]``) or passed through ``setdiff``/``unique``."""
    m = _R_SOURCE_OF.match(expr)
    if m is None:
        return []
    name = m.group("var") or m.group("fun")
    return vectors.get(name) or loops.get(name) or []


def _r_applied(text: str, vectors: dict[str, list[str]]) -> list[tuple[int, str]]:
    """Names in vectors passed to library/require through an apply or a for loop."""
    found: list[tuple[int, str]] = []
    for m in _R_APPLY.finditer(text):
        tail = text[m.end() : m.end() + 200]
        if not re.search(r"\b(?:library|require|requireNamespace|p_load)\b", tail):
            continue
        if m.group("inline") is not None:
            found += [(m.start(), p) for p in _STRING.findall(m.group("inline"))]
        elif m.group("var") in vectors:
            found += [(m.start(), p) for p in vectors[m.group("var")]]
    return found


def r_packages(code: str) -> list[str]:
    """R packages a script loads (in order of appearance), then those it calls as ``pkg::``."""
    text = _strip_r_comments(code)
    vectors = _r_vectors(text)
    loops = _loop_variables(text, vectors)
    found: list[tuple[int, str]] = []
    for m in _R_CALL.finditer(text):
        # requireNamespace / loadNamespace always take a string: unquoted, it is a variable
        by_variable = not m.group("quote") and (
            m.group("fn") in ("requireNamespace", "loadNamespace")
            or re.search(r"character\.only\s*=\s*(TRUE|T)\b", m.group("rest"))
        )
        if by_variable:
            name = m.group("name")
            found += [(m.start(), p) for p in vectors.get(name) or loops.get(name) or []]
        else:
            found.append((m.start(), m.group("name")))
    for m in _R_PACMAN.finditer(text):
        for part in m.group(1).split(","):
            part = part.strip()
            if part.startswith(("char", "install", "update", "character")):
                found += [(m.start(), p) for p in _STRING.findall(part)]
            elif re.fullmatch(rf"[\"']?{_NAME}[\"']?", part):
                found.append((m.start(), part.strip("\"'")))
    found += _r_applied(text, vectors)
    found.sort(key=lambda item: item[0])
    # loaded packages in order of appearance, then those only called as pkg::fun
    names = [p for _, p in found] + [m.group(1) for m in _R_NAMESPACE.finditer(text)]
    return list(dict.fromkeys(p for p in names if p))


_R_LOOP: Final = re.compile(
    rf"\bfor\s*\(\s*(?P<var>{_VAR})\s+in\s+(?:c\s*\((?P<inline>[^()]*)\)|(?P<vec>{_VAR}))"
)
_R_FUNCTION_OVER: Final = re.compile(
    rf"\b(?:lapply|sapply|vapply|Map|walk)\s*\(\s*(?:c\s*\((?P<inline>[^()]*)\)|(?P<vec>{_VAR}))"
    rf"\s*,\s*function\s*\(\s*(?P<var>{_VAR})"
)


def _loop_variables(text: str, vectors: dict[str, list[str]]) -> dict[str, list[str]]:
    """Variables that run over package names: ``for (p in pkgs)``, ``lapply(pkgs, function(p)``."""
    out: dict[str, list[str]] = {}
    for pattern in (_R_LOOP, _R_FUNCTION_OVER):
        for m in pattern.finditer(text):
            names = (
                _STRING.findall(m.group("inline"))
                if m.group("inline") is not None
                else vectors.get(m.group("vec"), [])
            )
            if names:
                out.setdefault(m.group("var"), []).extend(names)
    return out


def r_runtime_installs(code: str) -> list[str]:
    """R packages the script tries to install while it runs, in order.

    A variable argument (``install.packages(p)``) is resolved through the vector or loop it
    comes from; one that cannot be resolved is left out rather than reported as a package.
    """
    text = _strip_r_comments(code)
    vectors = _r_vectors(text)
    loops = _loop_variables(text, vectors)
    found: list[str] = []
    for m in _R_INSTALL.finditer(text):
        args = m.group(1)
        names = _STRING.findall(args)
        if not names:
            first = args.split(",")[0].strip()
            names = _resolve(first, vectors, loops)
            if not names and m.group(0).lstrip().startswith(("p_load", "pacman::p_load")):
                names = [p.strip() for p in args.split(",") if re.fullmatch(_NAME, p.strip())]
        # remotes::install_github("user/pkg"): the package is the repository's name
        found += [n.rsplit("/", 1)[-1] for n in names if n not in ("TRUE", "FALSE")]
    for m in re.finditer(r"\binstall_github\s*\(\s*[\"'][\w.-]+/([\w.]+)", text):
        found.append(m.group(1))
    return list(dict.fromkeys(found))


def python_packages(code: str) -> list[str]:
    """Top-level modules a Python script imports, in order, once each (relative imports skipped)."""
    found: list[tuple[int, str]] = []
    for m in _PY_IMPORT.finditer(code):
        if m.group(1):
            found.append((m.start(), m.group(1)))
            continue
        for part in (m.group(2) or "").split(","):
            name = part.strip().split(" ")[0].split(".")[0]
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                found.append((m.start(), name))
    found += [(m.start(), m.group(1)) for m in _PY_DYNAMIC.finditer(code)]
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(name for _, name in found))


def python_runtime_installs(code: str) -> list[str]:
    """Import names of the distributions a Python script pip-installs while it runs."""
    found: list[str] = []
    for m in _PY_PIP.finditer(code):
        skip_next = False
        for token in re.split(r"[\s,\"'()\]]+", m.group("args")):
            if skip_next or not token:
                skip_next = False
                continue
            if token.startswith("-"):
                skip_next = token in _PIP_VALUE_OPTIONS
                continue
            if not token[0].isalpha():
                continue
            dist = re.split(r"[=<>!~\[;]", token, maxsplit=1)[0]
            if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", dist):
                found.append(DIST_TO_IMPORT.get(dist.lower(), dist.replace("-", "_")))
    return list(dict.fromkeys(found))


def runtime_installs(code: str, language: Language) -> list[str]:
    """Packages ``code`` tries to install while it runs."""
    return r_runtime_installs(code) if language == "r" else python_runtime_installs(code)


def runtime_install_missing(
    code: str, language: Language, installed: Collection[str]
) -> str | None:
    """The first package a failed script tried to install at run time that is not installed."""
    for name in runtime_installs(code, language):
        if name not in installed and name not in R_BASE and name not in sys.stdlib_module_names:
            return name
    return None


def missing_packages(code: str | None, language: Language, installed: Collection[str]) -> list[str]:
    """The packages ``code`` uses (or installs at run time) that are not installed.

    Parameters
    ----------
    code
        The script (``None``: nothing is used).
    language
        ``"r"`` or ``"python"``.
    installed
        Add-on packages of the execution environment (R package names or Python import names),
        e.g. from :func:`causalverify.sandbox.environment_manifest`.

    Returns
    -------
    list of str
        Missing packages in order of first use; empty when the script uses installed ones only.
    """
    if not code:
        return []
    if language == "r":
        used = [*r_packages(code), *r_runtime_installs(code)]
        return list(dict.fromkeys(p for p in used if p not in installed and p not in R_BASE))
    stdlib = sys.stdlib_module_names
    used = [*python_packages(code), *python_runtime_installs(code)]
    return list(dict.fromkeys(p for p in used if p not in installed and p not in stdlib))


def _installed(name: str, language: Language) -> bool:
    if language == "python":
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    return name in environment_manifest().r_packages or name in R_BASE


def with_runtime_install(result: ExecResult, code: str, language: Language) -> ExecResult:
    """Name the package a failed script tried to install at run time (the sandbox has no
    network, so such an install cannot work): the result becomes a missing package."""
    if result.status != "error" or result.missing_package is not None:
        return result
    for name in runtime_installs(code, language):
        if name in R_BASE or name in sys.stdlib_module_names or _installed(name, language):
            continue
        detail = (
            f"package not installed: {name} (the script tried to install it while running; "
            "the sandbox has no network)"
        )
        if not result.sandboxed:
            detail = f"UNSAFE: executed without a sandbox. {detail}"
        return result.model_copy(update={"missing_package": name, "detail": detail})
    return result

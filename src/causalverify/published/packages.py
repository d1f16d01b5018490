"""Which add-on packages a script uses, and which of them the execution environment lacks."""

from __future__ import annotations

import re
import sys
from collections.abc import Collection
from typing import Final

from causalverify.families import Language

#: R packages that ship with R itself
R_BASE: Final[frozenset[str]] = frozenset(
    {
        "base", "compiler", "datasets", "graphics", "grDevices", "grid", "methods",
        "parallel", "splines", "stats", "stats4", "tcltk", "tools", "utils",
    }
)  # fmt: skip
_R_CALL: Final[re.Pattern[str]] = re.compile(
    r"\b(?:library|require|requireNamespace|loadNamespace)\s*\(\s*"
    r"(?:package\s*=\s*)?[\"']?([A-Za-z][A-Za-z0-9.]*)[\"']?"
)
_R_NAMESPACE: Final[re.Pattern[str]] = re.compile(r"\b([A-Za-z][A-Za-z0-9.]*):::?[A-Za-z._]")
_R_PACMAN: Final[re.Pattern[str]] = re.compile(r"\bp_load\s*\(([^)]*)\)")
_PY_IMPORT: Final[re.Pattern[str]] = re.compile(
    r"^\s*(?:from\s+([A-Za-z_][A-Za-z0-9_]*)[\w.]*\s+import\b|import\s+([^#\n]+))", re.MULTILINE
)


def _strip_r_comments(code: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in code.splitlines())


def r_packages(code: str) -> list[str]:
    """R packages a script loads (in order), then those it calls as ``pkg::``; each once."""
    text = _strip_r_comments(code)
    found = [m.group(1) for m in _R_CALL.finditer(text)]
    found += [m.group(1) for m in _R_NAMESPACE.finditer(text)]
    for m in _R_PACMAN.finditer(text):
        found += [p.strip(" \"'") for p in m.group(1).split(",") if "=" not in p]
    return list(dict.fromkeys(p for p in found if p))


def python_packages(code: str) -> list[str]:
    """Top-level modules a Python script imports, in order, once each (relative imports skipped)."""
    found: list[str] = []
    for m in _PY_IMPORT.finditer(code):
        if m.group(1):
            found.append(m.group(1))
            continue
        for part in (m.group(2) or "").split(","):
            name = part.strip().split(" ")[0].split(".")[0]
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                found.append(name)
    return list(dict.fromkeys(found))


def missing_packages(code: str | None, language: Language, installed: Collection[str]) -> list[str]:
    """The packages ``code`` uses that are neither installed nor part of the language.

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
        return [p for p in r_packages(code) if p not in installed and p not in R_BASE]
    stdlib = sys.stdlib_module_names
    return [p for p in python_packages(code) if p not in installed and p not in stdlib]

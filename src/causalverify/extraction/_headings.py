"""Section headings and captions: the text that says what a printed number is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from causalverify.extraction._terms import SECONDARY

_DECORATED: Final = re.compile(r"^\s*[=#\-*~]{2,}|[=#\-*~]{3,}\s*$")
_CAPS_HEADING: Final = re.compile(r"^\s*[A-Z][A-Z0-9 ,:()/&-]{4,}\s*$")
_COLON_HEADING: Final = re.compile(r"^\s*[^:]{3,60}:\s*$")
_DECIMAL: Final = re.compile(r"\d\.\d")


def is_heading(raw: str) -> bool:
    """A section heading: a decorated line (``=== Robustness (h = 0.15) ===``, ``## IV``, a rule
    of dashes), an upper-case title, or a short line ending in a colon (``2SLS (preferred):``).

    A heading may hold a number or two (a bandwidth, a model number), but not a result: a
    decorated line with more than two decimals and a colon line with any are not headings.
    """
    decimals = len(_DECIMAL.findall(raw))
    if _DECORATED.search(raw):
        return decimals <= 2
    if _CAPS_HEADING.match(raw):
        return decimals == 0
    return (
        bool(_COLON_HEADING.match(raw))
        and decimals == 0
        and re.search(r"[A-Za-z]", raw) is not None
    )


def headings(stdout: str) -> list[str]:
    """For each line, the closest heading printed before it (lower-cased)."""
    current = ""
    out: list[str] = []
    for raw in stdout.splitlines():
        out.append(current)
        if is_heading(raw):
            current = raw.lower()
    return out


def caption(lines: Sequence[str]) -> str:
    """The descriptive text among ``lines`` (lower-cased): headings and lines without a decimal
    number. A result line printed before a table (``Naive OLS estimate: 1.70``) says what *that*
    number is, not what the table is, and is left out."""
    kept = [x for x in lines if is_heading(x) or not _DECIMAL.search(x)]
    return "\n".join(kept).lower()


_LABEL_VALUE: Final = re.compile(r"[:=]\s*[-+]?\d+%?\s*$")
_JSONISH: Final = re.compile(r"[\"'][:=]|[:=]\s*[\"'{\[]|[{}\[\]],?$|^[\"'{\[\]}]")


def _caption(text: str) -> bool:
    """A short line of words that says what follows: no decimal number, not ``label: 60``,
    not a table header (names spaced out) nor a fragment of JSON."""
    return (
        3 <= len(text) <= 100
        and _DECIMAL.search(text) is None
        and "  " not in text
        and _LABEL_VALUE.search(text) is None
        and _JSONISH.search(text) is None
        and re.search(r"[A-Za-z]{3}", text) is not None
    )


def sections(stdout: str) -> list[str]:
    """For each line, the closest heading or caption printed before it (lower-cased).

    Wider than :func:`headings`: any short line of words (``Placebo test``, ``Robustness (window
    0 to +2) | Window [0,2]``) also starts a section, since it says what follows.
    """
    lines = stdout.splitlines()
    kinds: list[str] = []  # per line: "major", "minor" or ""
    major_seen = False
    for raw in lines:
        if _MAJOR_RULE.match(raw):
            kinds.append("")  # a rule of ``===`` frames a heading; it is not one
        elif is_heading(raw) or _caption(raw.strip()):
            major = bool(_MAJOR.search(raw)) or not major_seen
            major_seen = major_seen or major
            kinds.append("major" if major else "minor")
        else:
            kinds.append("")
    # a major section whose minor sections include a robustness or placebo one is a container
    # of variants: its unmarked minor sections do not inherit what the major heading says
    mixed: set[int] = set()
    owner = -1
    for i, kind in enumerate(kinds):
        if kind == "major":
            owner = i
        elif kind == "minor" and owner >= 0 and SECONDARY.search(lines[i].lower()):
            mixed.add(owner)
    current = ""
    owner = -1
    out: list[str] = []
    for i, raw in enumerate(lines):
        out.append(current)
        if kinds[i] == "major":
            owner, current = i, raw.lower()
        elif kinds[i] == "minor":
            inherit = owner >= 0 and owner not in mixed
            current = f"{lines[owner].lower()} | {raw.lower()}" if inherit else raw.lower()
    return out


#: a major heading: ``===``, ``##``, or upper case (a minor one is ``---`` or plain words)
_MAJOR: Final = re.compile(r"={2,}|^\s*#{1,3}\s|^\s*[A-Z][A-Z0-9 ,:()/&\[\]+-]{6,}\s*$")
_MAJOR_RULE: Final = re.compile(r"^\s*[=#*~_-]{3,}\s*$")

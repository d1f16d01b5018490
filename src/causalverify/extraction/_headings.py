"""Section headings and captions: the text that says what a printed number is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

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


def sections(stdout: str) -> list[str]:
    """For each line, the closest heading or caption printed before it (lower-cased).

    Wider than :func:`headings`: any short line with words and no digit (``Placebo test``,
    ``Now the robustness checks``) also starts a section, since it says what follows.
    """
    current = ""
    out: list[str] = []
    for raw in stdout.splitlines():
        out.append(current)
        text = raw.strip()
        if is_heading(raw) or (
            3 <= len(text) <= 80
            and not any(ch.isdigit() for ch in text)
            and "  " not in text
            and not re.search(r"[\"'][:=]|[:=]\s*[\"'{\[]|[{}\[\]]$|^[\"'{\[]", text)
            and re.search(r"[A-Za-z]{3}", text) is not None
        ):
            current = raw.lower()
    return out

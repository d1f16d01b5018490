"""Marks a script puts on a line or a record to say which result is its main one.

- a line's **tail** after its last number (``0.2565  0.0324  352   <- preferred``,
  ``Effect: 0.41 (main specification)``, ``... (robustness)``);
- a **footnote** that defines a symbol (``* preferred specification``), and the rows that carry it;
- a **record** of a JSON or YAML-like print whose keys say so (``"preferred": true``,
  ``main: yes``) for the numbers inside it.

Every scan is a single pass over the lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from causalverify.extraction._printed import MAX_LINE, clean_line
from causalverify.extraction._terms import MAIN_CONTEXT, SECONDARY

#: a naive or comparison result (see ``_evidence``)
_NAIVE: Final = re.compile(r"naive|pooled|simple|biased|uncorrected|comparison")

_NUMBERS: Final = re.compile(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?%?")
_FOOTNOTE: Final = re.compile(r"^\s*(\*{1,3}|†|‡|§|#|\+)\s*[:=]?\s*([A-Za-z][^\n]{0,80})$")
_TRUE: Final = re.compile(
    r"[\"']?\b(preferred|main|primary|headline|is_main|is_preferred|selected|chosen)[\"']?"
    r"\s*[:=]\s*[\"']?(true|yes|1)\b",
    re.IGNORECASE,
)
_FALSE: Final = re.compile(
    r"[\"']?\b(preferred|main|primary|headline|is_main|is_preferred|selected|chosen)[\"']?"
    r"\s*[:=]\s*[\"']?(false|no|0)\b",
    re.IGNORECASE,
)
#: the longest record (lines) whose keys are read for the numbers inside it
_MAX_RECORD: Final = 40


@dataclass(frozen=True)
class LineMarks:
    """Per stdout line (0-based index): what its tail, a footnote symbol or its record say."""

    main: tuple[str, ...]  # "" or the reason the line is marked main
    secondary: tuple[str, ...]  # "" or the reason the line is marked secondary
    not_main: tuple[str, ...]  # "" or the reason the line is marked as not the main one


def _tail(text: str) -> str:
    last = None
    for last in _NUMBERS.finditer(text):  # noqa: B007 - the last match is wanted
        pass
    return text[last.end() :].lower() if last else ""


def _footnote_symbols(lines: list[str]) -> dict[str, str]:
    symbols: dict[str, str] = {}
    for raw in lines:
        m = _FOOTNOTE.match(raw)
        if m and MAIN_CONTEXT.search(m.group(2).lower()) and not any(c.isdigit() for c in raw[:3]):
            symbols[m.group(1)] = m.group(0).strip()[:60]
    return symbols


def _records(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first, last line index, key) of each ``{ ... }`` block spanning lines, innermost first;
    the key is what the block's first line prints before its brace (``"twfe": {``)."""
    out: list[tuple[int, int, str]] = []
    stack: list[tuple[int, str]] = []
    for i, raw in enumerate(lines):
        for j, ch in enumerate(raw):
            if ch == "{":
                key = raw[:j].split(",")[-1].strip().strip("\"':= ").lower()
                stack.append((i, key))
            elif ch == "}" and stack:
                start, key = stack.pop()
                if i - start <= _MAX_RECORD:
                    out.append((start, i, key))
    return out


_POINTER: Final = re.compile(
    r"[\"']?\b(preferred|main|primary|headline)[\w ]*[\"']?\s*[:=]\s*[\"']([A-Za-z_][\w .-]*)[\"']",
    re.IGNORECASE,
)


def line_marks(stdout: str) -> LineMarks:
    """The main and secondary marks of every stdout line."""
    lines = [raw[:MAX_LINE] for raw in stdout.splitlines()]
    main = [""] * len(lines)
    secondary = [""] * len(lines)
    not_main = [""] * len(lines)
    symbols = _footnote_symbols(lines)
    for i, raw in enumerate(lines):
        tail = _tail(clean_line(raw))
        if tail.strip(" *|"):
            if SECONDARY.search(tail):
                secondary[i] = f"the line ends {tail.strip()[:40]!r}"
            elif MAIN_CONTEXT.search(tail):
                main[i] = f"the line ends {tail.strip()[:40]!r}"
        cells = raw.split()
        for symbol, note in symbols.items():
            if symbol in cells and not _FOOTNOTE.match(raw) and not main[i]:
                main[i] = f"carries {symbol!r}, defined by the footnote {note!r}"
    records = _records(lines)
    pointers = {m.group(2).lower() for raw in lines for m in _POINTER.finditer(raw)}
    for first, last, key in records:
        if key and key in pointers:
            for j in range(first, last + 1):
                main[j] = main[j] or f"in the record {key!r}, which the output names as preferred"
        elif key and (
            SECONDARY.search(key.replace("_", " ")) or _NAIVE.search(key.replace("_", " "))
        ):
            for j in range(first, last + 1):
                secondary[j] = secondary[j] or f"in the record {key!r}"
    for first, last, _key in records:
        block = "\n".join(lines[first : last + 1])
        if first == last:
            continue
        if _TRUE.search(block):
            mark = f"in a record marked {_TRUE.search(block).group(0)!r}"  # type: ignore[union-attr]
            for j in range(first, last + 1):
                main[j] = main[j] or mark
        elif _FALSE.search(block):
            mark = f"in a record marked {_FALSE.search(block).group(0)!r}"  # type: ignore[union-attr]
            for j in range(first, last + 1):
                not_main[j] = not_main[j] or mark
    return LineMarks(tuple(main), tuple(secondary), tuple(not_main))

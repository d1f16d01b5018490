"""What the output says about the scale and unit of a reported number (read, never rescaled).

An event-study scenario accepts a cumulative figure over the effect window *if it is labelled
as cumulative* (the prompt's words). :func:`cumulative_label` finds that label: the words printed
before the number on its line, or the section heading or caption it is printed under, on the
number's own line or on any line that prints the same number (an ``ESTIMATE:`` line restates a
labelled one). A comment in the code is not a label: the reader of the output never sees it.

:func:`printed_unit` says how a number was printed when extraction turned it into the estimate
(a percent or basis points), so that the conversion can be shown.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from causalverify.extraction._headings import sections
from causalverify.extraction._printed import Printed, read_line, read_stdout

#: words that say a figure is a sum over days (the grouping of candidates uses the same words)
CUMULATIVE: Final = re.compile(r"\bc(a|umulative )?ar\b|cumulative|\bsum\b|\btotal\b", re.I)
#: characters of a label kept for the record
_SHOWN: Final = 160


_UNITS: Final = {
    "%": "a percent",
    "% (label)": "a percent, by its label",
    "pp": "percentage points",
    "bp": "basis points",
}


@functools.lru_cache(maxsize=8)
def _read(stdout: str) -> tuple[tuple[Printed, ...], tuple[str, ...]]:
    return tuple(read_stdout(stdout)), tuple(sections(stdout))


def _same(p: Printed, value: float) -> bool:
    """``p`` prints ``value`` to its printed precision (of at least two significant digits)."""
    if p.significant < 2:
        return False
    half = 0.5 * 10.0 ** (-p.decimals) * abs(p.factor)
    return abs(p.value - value) <= half + 1e-12 * max(1.0, abs(value))


def cumulative_label(stdout: str, value: float, line: int | None = None) -> str | None:
    """The printed words that label ``value`` as cumulative, or None.

    Parameters
    ----------
    stdout
        What the script printed.
    value
        The reported number (as extraction read it).
    line
        The stdout line (1-based) it was read from, when known.

    Returns
    -------
    str or None
        The line that labels the figure cumulative (``CAR``, ``cumulative``, ``sum``,
        ``total``), as printed, or the heading it is printed under (lower-cased).
    """
    printed, heads = _read(stdout)
    lines = stdout.splitlines()
    for p in printed:
        if p.missing or not (p.line == line or (not p.integer and _same(p, value))):
            continue
        if any(CUMULATIVE.search(t.replace("_", " ")) for t in (p.label, p.key, p.column) if t):
            return lines[p.line - 1].strip()[:_SHOWN]
        head = heads[p.line - 1] if p.line <= len(heads) else ""
        if CUMULATIVE.search(head.replace("_", " ")):
            return head.strip()[:_SHOWN]
    return None


def printed_unit(stdout: str, value: float, line: int | None) -> str | None:
    """How ``value`` was printed on ``line`` when a unit turned it into the estimate
    (``"5.2% (a percent)"``), else None."""
    lines = stdout.splitlines()
    if line is None or not 1 <= line <= len(lines):
        return None
    for p in read_line(lines[line - 1], line):
        if p.factor != 1.0 and not p.missing and abs(p.value - value) <= 1e-12 * max(1, abs(value)):
            unit = _UNITS.get(p.unit, p.unit)
            shown = p.token + ("%" if p.unit == "%" else "")
            return f"{shown} ({unit}: × {p.factor:g})"
    return None

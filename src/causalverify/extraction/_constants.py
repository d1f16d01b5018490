"""Numbers the code sets: cutoffs, bandwidths, orders, levels, seeds, windows, splits.

A printed number that equals one of them (at its printed precision) is a setup constant, never
the estimate: ``Bandwidth used: 0.30`` prints the ``h <- 0.3`` the code set, whatever a fit's
coefficient happens to round to.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Final

#: a numeric literal not part of a name
_LITERAL: Final = re.compile(r"(?<![\w.])(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
#: ``name <- 0.3``, ``name = 0.3``, ``name: 0.3`` (a named constant)
_NAMED: Final = re.compile(r"\b[A-Za-z_.][\w.]*\s*(?:<-|=|:)\s*(-?(?:\d+(?:\.\d*)?|\.\d+))\b")
_MAX_CODE: Final = 200_000
_MAX_NAMED: Final = 60


def _strip_comment(line: str) -> str:
    """The line without a trailing ``#`` comment (a ``#`` inside a string is kept)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


@dataclass(frozen=True)
class CodeConstants:
    """Sorted literal values of the code (and sums and differences of named ones)."""

    values: tuple[float, ...]

    def equal(self, printed: float, decimals: int) -> float | None:
        """The constant that ``printed`` prints at ``decimals`` decimals, or None."""
        half = 0.5 * 10.0 ** (-decimals) * (1 + 1e-9) + 1e-15
        for target in (printed, -printed):
            i = bisect.bisect_left(self.values, target - half)
            if i < len(self.values) and self.values[i] <= target + half:
                return self.values[i] if target == printed else -self.values[i]
        return None


def code_constants(code: str) -> CodeConstants:
    """Every numeric literal of ``code`` outside comments, and ``a ± b`` for named constants."""
    found: set[float] = set()
    named: list[float] = []
    for raw in code[:_MAX_CODE].splitlines():
        line = _strip_comment(raw)
        for m in _LITERAL.finditer(line):
            try:
                found.add(float(m.group(0)))
            except ValueError:
                continue
        for m in _NAMED.finditer(line):
            if len(named) < _MAX_NAMED:
                named.append(float(m.group(1)))
    for i, a in enumerate(named):
        for b in named[i + 1 :]:
            found |= {a + b, abs(a - b)}
    found |= {round(1 - v, 12) for v in list(found) if 0.5 < v < 1}  # 0.95 -> 0.05
    return CodeConstants(tuple(sorted(found)))

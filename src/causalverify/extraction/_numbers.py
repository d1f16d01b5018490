"""Number tokens as R and Python print them (scientific notation, stars, unicode minus, NA)."""

from __future__ import annotations

import math
import re
from typing import Final

#: a printed number: sign, digits, optional fraction, optional exponent
NUMBER: Final[str] = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
NUMBER_RE: Final[re.Pattern[str]] = re.compile(rf"^{NUMBER}$")
#: tokens that stand for a missing number in a table cell
MISSING_TOKENS: Final[frozenset[str]] = frozenset({"na", "nan", "<na>", "none", "inf", "-inf"})
#: significance codes printed after a p-value (R ``printCoefmat``, stargazer-like prints)
STARS_RE: Final[re.Pattern[str]] = re.compile(r"^(?:\*{1,3}|\.|\+)$")

_SPACED_EXPONENT = re.compile(r"(\d)([eE])([-+])\s+(\d)")
_LESS_THAN = re.compile(r"<\s+(\d)")


def normalize_line(line: str) -> str:
    """Undo printing quirks that split one number into several tokens.

    ``pillar`` (tibbles) prints ``7.87e- 1``; R's ``format.pval`` prints ``< 2e-16``; some
    locales print a unicode minus sign.
    """
    line = line.replace("\u2212", "-").replace("\t", "    ")
    line = _SPACED_EXPONENT.sub(r"\1\2\3\4", line)
    return _LESS_THAN.sub(r"<\1", line)


def parse_number(token: str) -> float | None:
    """Return the float a token prints, or None when it is not a finite number.

    A leading ``<`` (``<2e-16``) is kept as the bound; trailing commas are ignored.
    """
    tok = token.strip().rstrip(",;")
    if tok.startswith("<"):
        tok = tok[1:]
    if not NUMBER_RE.match(tok):
        return None
    value = float(tok)
    return value if math.isfinite(value) else None


def is_numeric_token(token: str) -> bool:
    """True for a number or a printed missing value (a cell of a numeric column)."""
    tok = token.strip().rstrip(",;")
    return parse_number(tok) is not None or tok.lower() in MISSING_TOKENS


def decimals_of(token: str) -> int:
    """Digits after the decimal point, adjusted for an exponent (``1.5e-03`` -> 4)."""
    tok = token.strip().lstrip("<").lower()
    mantissa, _, exponent = tok.partition("e")
    frac = mantissa.split(".")[1] if "." in mantissa else ""
    return len(frac) - (int(exponent) if exponent else 0)

"""Every number a script printed, with the words around it: label, unit, role, arithmetic.

A line is read once, left to right, by a tokenizer (linear in the line's length: no pattern here
backtracks), into :class:`Printed` numbers. Each number gets

- its **label**: the words printed before it since the previous value of the line (``Main 2SLS
  elasticity (y wrt x):`` for ``0.218`` in ``Main 2SLS elasticity (y wrt x): 0.218  SE: 0.12``);
  numbers that are part of a label (``CAR[-1,+1]``, ``3-day``, ``95% CI``) stay in it;
- its **unit**: ``%`` after the number, or a percent or basis-point unit named in its label or
  column name (``Effect (%)``, ``effect_pct``, ``bp``), as the factor that turns the printed
  number into the estimate;
- whether it is an **operand** of printed arithmetic (``0.12 / 0.30 = 0.40``: 0.12 and 0.30 are,
  0.40 is the result) and whether it sits in parentheses right after another value (a standard
  error or a restatement).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Final

from causalverify.extraction._numbers import normalize_line

#: longest line read (the sandbox caps stdout; a longer line is read up to here)
MAX_LINE: Final = 4000
#: most numbers read from one stdout
MAX_NUMBERS: Final = 20000

#: a number that is not part of a name (``x1``, ``R2``) nor of a longer number
_NUMBER: Final = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_DIGITS: Final = re.compile(r"[-+]?[\d.]+(?:[eE][-+]?\d+)?")
_THOUSANDS: Final = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_R_INDEX: Final = re.compile(r"^\s*\[\d+\]\s")
_SUFFIX_UNIT: Final = re.compile(r"\s?(bps?|basis points?|pp|p\.p\.|percentage points?)\b")
_PERCENT_LABEL: Final = re.compile(
    r"\(\s*%\s*\)|\[\s*%\s*\]|_pct\b|\bpct\b|\bpercent(age)?\b|%\s*$|in %"
)
_PP_LABEL: Final = re.compile(r"percentage points?|\bp\.?p\.?\b")
_BP_LABEL: Final = re.compile(r"\bbasis points?\b|\bbps?\b|_bps?\b")


@dataclass(frozen=True)
class Printed:
    """One printed number and what the line says about it."""

    line: int  # 1-based stdout line
    index: int  # 0-based position among the numbers of its line
    token: str  # as printed (without a trailing %)
    printed: float  # the token's value
    factor: float  # estimate = printed * factor (1, 0.01 for a percent, 1e-4 for basis points)
    unit: str  # "" | "%" | "% (label)" | "pp" | "bp"
    label: str  # the words printed before it (original case, trimmed)
    prefix: str  # the rest of the line before its label (digits removed)
    depth: int  # open parentheses or brackets before it
    after_value: bool  # in parentheses right after another value of the line
    operand: bool  # an operand of printed arithmetic (not its result)
    result: bool  # the result of printed arithmetic (after its last ``=``)
    integer: bool  # printed without a decimal point or exponent
    decimals: int
    significant: int

    @property
    def value(self) -> float:
        return self.printed * self.factor


def _significant(token: str) -> int:
    mantissa = token.lower().lstrip("+-").split("e")[0]
    return len(mantissa.replace(".", "").lstrip("0"))


def _decimals(token: str) -> int:
    mantissa, _, exponent = token.lower().partition("e")
    frac = mantissa.split(".")[1] if "." in mantissa else ""
    return len(frac) - (int(exponent) if exponent else 0)


def clean_line(raw: str) -> str:
    """A stdout line as read: tabs, unicode minus, spaced exponents, thousands separators and
    R's ``[1]`` index undone, quotes dropped, cut at :data:`MAX_LINE`."""
    text = normalize_line(raw[:MAX_LINE])
    text = _R_INDEX.sub("    ", text, count=1)
    text = _THOUSANDS.sub("", text)
    return text.replace('"', " ").replace("`", " ")


def _depths(text: str) -> list[int]:
    """The bracket depth before each character (linear)."""
    out: list[int] = []
    depth = 0
    for ch in text:
        out.append(depth)
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth > 0:
            depth -= 1
    return out


def _next_char(text: str, pos: int) -> str:
    i = pos
    while i < len(text) and text[i] == " ":
        i += 1
    return text[i] if i < len(text) else ""


def _ends_field(text: str, end: int, token: str, depth: int) -> bool:
    """Does this number close a ``label value`` field (so the next number has its own label)?"""
    if depth > 0:
        return False
    if "." in token or "e" in token.lower():
        return True
    rest = text[end : end + 3]
    nxt = _next_char(text, end)
    return nxt == "" or nxt in "|;,)" or rest.startswith("  ") or rest.startswith("%  ")


def _unit(label: str, pct_sign: bool) -> tuple[float, str]:
    if pct_sign:
        return 0.01, "%"
    low = label.lower()
    tail = low[-60:]
    if _BP_LABEL.search(tail):
        return 1e-4, "bp"
    if _PP_LABEL.search(tail):
        return 0.01, "pp"
    if _PERCENT_LABEL.search(tail):
        return 0.01, "% (label)"
    return 1.0, ""


def read_line(
    raw: str,
    line_no: int,
    column_names: dict[int, str] | None = None,
    *,
    label_columns: bool = True,
) -> list[Printed]:
    """The numbers of one stdout line (see the module docstring).

    ``column_names`` maps a number's position in the line to the name of the table column it
    sits in, when the line is a table row: the column name then also counts as its label's unit.
    """
    text = clean_line(raw)
    depths = _depths(text)
    matches = list(_NUMBER.finditer(text))
    last_eq = text.rfind("=")
    operands = _operands(text[:last_eq], matches) if last_eq > 0 else set()
    results = {i for i, m in enumerate(matches) if operands and m.start() > last_eq}
    out: list[Printed] = []
    label_start = 0
    prev_value_end: int | None = None
    for i, m in enumerate(matches):
        token = m.group(0)
        start, end = m.span()
        after = text[end : end + 24].lower()
        pct = after[:1] == "%" or after.startswith(" %")
        if after.startswith(" %"):
            end += 1
        depth = depths[start]
        bar = text.rfind("|", label_start, start)
        if bar >= 0:  # a table cell: its label is the cell's own text
            label_start = bar + 1
        label = text[label_start:start]
        prefix = _DIGITS.sub(" ", text[:label_start])
        if i in results and sum(ch.isalpha() for ch in label) < 2:
            label = _DIGITS.sub(" ", text[:start])  # a result named by what the line says first
        operand = i in operands
        result = i in results
        after_value = (
            depth > 0
            and prev_value_end is not None
            and not text[prev_value_end:start].strip(" (").strip()
        )
        unit_label = label
        if column_names and i in column_names:
            unit_label = f"{label} {column_names[i]}".strip()
            if label_columns:
                label = unit_label
        factor, unit = _unit(unit_label, pct)
        suffix = _SUFFIX_UNIT.match(after)
        if suffix and not pct:
            factor, unit = (1e-4, "bp") if suffix.group(1).startswith("b") else (0.01, "pp")
        integer = "." not in token and "e" not in token.lower()
        out.append(
            Printed(
                line=line_no,
                index=i,
                token=token,
                printed=float(token),
                factor=factor,
                unit=unit,
                label=label.strip(),
                prefix=" ".join(prefix.split()),
                depth=depth,
                after_value=after_value,
                operand=operand,
                result=result,
                integer=integer,
                decimals=_decimals(token),
                significant=_significant(token),
            )
        )
        if _ends_field(text, end + (1 if pct else 0), token, depth):
            label_start = end + (1 if pct else 0)
            prev_value_end = label_start
        elif depth > 0 and prev_value_end is not None and after_value:
            label_start = max(label_start, end + (1 if pct else 0))
    return out


def _operands(head: str, matches: list[re.Match[str]]) -> set[int]:
    """Positions of the numbers joined by an operator before the line's last ``=``
    (``0.52 - 0.31``, ``0.12 / 0.30``, ``(a - b) - (c - d)``)."""
    inside = [(i, m) for i, m in enumerate(matches) if m.end() <= len(head)]
    found: set[int] = set()
    for (i, a), (j, b) in itertools.pairwise(inside):
        between = head[a.end() : b.start()].replace("(", " ").replace(")", " ").strip()
        signed = between == "" and b.group(0)[0] in "+-"
        if between in ("+", "-", "*", "/", "×", "÷", "x") or signed:
            found |= {i, j}
    return found


def _columns(header: str | None, raw: str) -> dict[int, str] | None:
    """Column names of a row of numbers printed under a header of names (a data frame, a
    ``key value`` table): position among the row's numbers -> name."""
    if header is None:
        return None
    names = header.split()
    cells = raw.split()
    if not names or not cells or len(names) > 40 or any(_NUMBER.fullmatch(n) for n in names):
        return None
    numeric = [bool(_NUMBER.fullmatch(c.rstrip("*%"))) for c in cells]
    lead = 0
    while lead < len(cells) and not numeric[lead]:
        lead += 1
    values = cells[lead:]
    if not values or not all(numeric[lead:]) or len(values) not in (len(names), len(names) - lead):
        if len(values) == len(names) + 1 and lead == 0:  # a numeric row index
            values, lead = values[1:], 1
        else:
            return None
    offset = len(numeric) - len(values)  # numbers of the row before its values (an index)
    return {offset + j: names[len(names) - len(values) + j] for j in range(len(values))}


def read_stdout(stdout: str) -> list[Printed]:
    """Every number of ``stdout`` (at most :data:`MAX_NUMBERS`), in printing order.

    A row of numbers printed under a header of names takes each number's column name as its
    unit; as its label too when it is the header's only row (a one-row frame of results: a
    many-row frame lists units, stocks or coefficients, which the table readers handle).
    """
    lines = [raw[:MAX_LINE] for raw in stdout.splitlines()]
    out: list[Printed] = []
    header: str | None = None
    for no, text in enumerate(lines, start=1):
        if len(out) >= MAX_NUMBERS:
            break
        if any(ch.isdigit() for ch in text):
            columns = _columns(header, text)
            only_row = (
                columns is not None
                and (no >= len(lines) or _columns(header, lines[no]) is None)
                and (no < 2 or lines[no - 2] == header)
            )
            out.extend(read_line(text, no, columns, label_columns=only_row))
        if text.strip() and not any(ch.isdigit() for ch in text):
            header = text
        elif not text.strip():
            header = None
    return out[:MAX_NUMBERS]

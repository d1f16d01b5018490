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
import math
import re
from dataclasses import dataclass, replace
from typing import Final

from causalverify.extraction._numbers import normalize_line
from causalverify.extraction._tables import MULTIWORD

#: longest line read (the sandbox caps stdout; a longer line is read up to here)
MAX_LINE: Final = 4000
#: most numbers read from one stdout
MAX_NUMBERS: Final = 20000

#: a number that is not part of a name (``x1``, ``R2``) nor of a longer number
#: (a number may end a sentence: ``is 0.253.``; a trailing ``.`` is not part of it)
_NUMBER: Final = re.compile(
    r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?|\d+\.(?![\s.,;:)\]]|$)|\.\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)"
)
#: a number, or a printed missing value where a number would be (``NA``, ``NaN``, ``None``)
_VALUE: Final = re.compile(
    r"(?<![\w.])(?:[-+]?(?:\d+(?:\.\d+)?|\d+\.(?![\s.,;:)\]]|$)|\.\d+)(?:[eE][-+]?\d+)?"
    r"|NA|NaN|nan|None|NULL|<NA>)(?!\w|\.\d)"
)
_HAS_MISSING: Final = re.compile(r"(?<![\w.])(NA|NaN|nan|None|NULL)(?![\w.])")
MISSING: Final = frozenset({"NA", "NaN", "nan", "None", "NULL", "<NA>"})
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
    key: str  # the text between the previous number and its label (an enclosing JSON key)
    column: str  # the table column it sits in ("" outside a table); ``label`` is then its row
    named_by_column: bool  # its label is the column name of a one-row frame, not a statement
    rows: int  # the number of rows of that table (0 outside a table)
    depth: int  # open parentheses or brackets before it
    after_value: bool  # in parentheses right after another value of the line
    operand: bool  # an operand of printed arithmetic (not its result)
    result: bool  # the result of printed arithmetic (after its last ``=``)
    integer: bool  # printed without a decimal point or exponent
    missing: bool  # a printed missing value (NA, NaN, None) where a number would be
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


def _depths(text: str) -> tuple[list[int], list[int]]:
    """Per character: the parenthesis/bracket depth before it, and the position of the last
    field separator (``,``, ``;``, ``|``, ``{``, ``}``) at depth 0 before it (-1 if none).
    Braces separate fields (JSON); they do not nest labels (linear)."""
    depths: list[int] = []
    seps: list[int] = []
    depth = 0
    last = -1
    prev = ""  # the last character that is not a space
    for i, ch in enumerate(text):
        depths.append(depth)
        seps.append(last)
        if ch in "([":
            depth += 1
        elif ch in ")]" and depth > 0:
            depth -= 1
        elif depth == 0 and (ch in ";|{}" or (ch == "," and (prev.isdigit() or prev in "\"']}"))):
            last = i  # a comma after a value or a quoted key; not one inside words
        if ch != " ":
            prev = ch
    return depths, seps


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
    row: _Row | None = None,
    *,
    label_columns: bool = True,
) -> list[Printed]:
    """The numbers of one stdout line (see the module docstring).

    ``row`` says which table column each number sits in, when the line is a row under a header:
    the column name then counts for its unit, and the row's label is its label (with the column
    name too when ``label_columns``).
    """
    text = clean_line(raw)
    depths, seps = _depths(text)
    matches = list(_VALUE.finditer(text))
    last_eq = text.rfind("=")
    operands = _operands(text[:last_eq], matches) if last_eq > 0 else set()
    results = {i for i, m in enumerate(matches) if operands and m.start() > last_eq}
    out: list[Printed] = []
    label_start = 0
    prev_value_end: int | None = None
    prev_end = 0
    for i, m in enumerate(matches):
        token = m.group(0)
        start, end = m.span()
        after = text[end : end + 24].lower()
        pct = after[:1] == "%" or after.startswith(" %")
        if after.startswith(" %"):
            end += 1
        depth = depths[start]
        # a table cell or a JSON field: its label starts after the last separator
        label_start = max(label_start, seps[start] + 1)
        label = text[label_start:start]
        prefix = _DIGITS.sub(" ", text[:label_start])
        key = text[prev_end:label_start]
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
        column = ""
        named_by_column = False
        if row is not None and i in row.names:
            column = row.names[i]
            unit_label = f"{row.label} {column}".strip()
            label = row.label
            if label_columns and not row.label:
                label, column = column, ""  # a one-row frame of results: names are labels
                named_by_column = True
        factor, unit = _unit(unit_label, pct)
        suffix = _SUFFIX_UNIT.match(after)
        if suffix and not pct:
            factor, unit = (1e-4, "bp") if suffix.group(1).startswith("b") else (0.01, "pp")
        missing = token in MISSING
        integer = not missing and "." not in token and "e" not in token.lower()
        out.append(
            Printed(
                line=line_no,
                index=i,
                token=token,
                printed=math.nan if missing else float(token),
                missing=missing,
                factor=factor,
                unit=unit,
                label=label.strip(),
                column=column,
                named_by_column=named_by_column,
                rows=row.rows if row is not None and column else 0,
                prefix=" ".join(prefix.split()),
                key=" ".join(key.split()),
                depth=depth,
                after_value=after_value,
                operand=operand,
                result=result,
                integer=integer,
                decimals=0 if missing else _decimals(token),
                significant=0 if missing else _significant(token),
            )
        )
        prev_end = end + (1 if pct else 0)
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


@dataclass(frozen=True)
class _Row:
    """A row of numbers under a header of names: which number sits in which column."""

    names: dict[int, str]  # position among the line's numbers -> column name
    label: str  # the row's label cells (``2SLS (preferred)``, ``local linear h=0.30 *``)
    rows: int = 0  # rows in its table


#: column names printed as two words (``Std. Error``, ``t value``)
_TWO_WORDS: Final = frozenset(MULTIWORD) | {"std. dev."}
_TOKEN: Final = re.compile(r"\S+")
_LEADING_INDEX: Final = re.compile(r"^\s*\d+:?(?=\s)")
_ROW_INDEX: Final = re.compile(r"\d+:?|\[\d+,?\]")


def _header_spans(header: str) -> list[tuple[int, int, str]]:
    """The names of a header line with their spans, two-word names joined."""
    toks = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(header)]
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(toks):
        if i + 1 < len(toks) and f"{toks[i][2]} {toks[i + 1][2]}".lower() in _TWO_WORDS:
            out.append((toks[i][0], toks[i + 1][1], f"{toks[i][2]} {toks[i + 1][2]}"))
            i += 2
        else:
            out.append(toks[i])
            i += 1
    return out


def _columns(header: str | None, raw: str) -> _Row | None:
    """The columns of a row printed under a header of names (a data frame, a tibble, a table of
    specifications, a coefficient table). A number belongs to the column whose name ends at or
    after its end, after the previous name (R, pandas and tibbles right-align numbers and their
    names, tibbles up to the decimal point); a leading row index and numbers in brackets
    (``[-1,1]``) belong to the row's label."""
    if header is None:
        return None
    spans = _header_spans(clean_line(header))
    if not spans or len(spans) > 40:
        return None
    text = clean_line(raw)
    depths, _ = _depths(text)
    index = _LEADING_INDEX.match(text)
    mapping: dict[int, str] = {}
    first = None
    last_end = None
    for i, m in enumerate(_VALUE.finditer(text)):
        if depths[m.start()] > 0 or (index and m.end() <= index.end() and m.end() <= spans[0][0]):
            continue
        if text[: m.start()].rstrip()[-1:] in ("=", ":"):
            continue  # ``h=0.30`` inside a row's label
        end = m.end() + (1 if text[m.end() : m.end() + 1] == "%" else 0)
        name = None
        prev = -1
        for _s, e, n in spans:
            if prev < end <= e + 1:
                name = n
                break
            prev = e + 1
        if name is None or name in mapping.values():
            continue
        if last_end is not None and text[last_end : m.start()].strip(" *()%<>"):
            return None  # words between two values: a sentence, not a row
        mapping[i] = name
        first = m.start() if first is None else first
        last_end = end
    if len(mapping) < 2 or first is None or re.search(r"[:=]\s*$", text[:first]):
        return None
    label = text[:first].strip()
    if index is not None and label.startswith(index.group(0).strip()):
        label = label[len(index.group(0).strip()) :].strip()
    return _Row(mapping, "" if _ROW_INDEX.fullmatch(label) else label)


#: tibble and data.table decorations between a header and its rows
_DECORATION: Final = re.compile(r"^\s*((<\w+>\s*)+|#\s*(A tibble|…|\.\.\.).*|-{3,}\s*)$")
#: a table with at most this many rows lists results; a longer one lists units, days or stocks
SHORT_TABLE: Final = 6


_QUANTILE_NAME: Final = re.compile(r"^\[0?\.\d{2,3}$|^0?\.\d{2,3}\]$|^\d{1,2}(\.\d)?%$|^%$")


def _is_header(text: str) -> bool:
    """A line of column names: words, and no number but quantile names (``[0.025``, ``2.5 %``)."""
    toks = text.split()
    return (
        bool(toks)
        and any(c.isalpha() for c in text)
        and all(not any(ch.isdigit() for ch in t) or _QUANTILE_NAME.match(t) for t in toks)
    )


def _sentence_before(lines: list[str], at: int) -> str:
    """The start of a sentence wrapped onto line ``at`` (0-based) from the lines before it: the
    previous lines of the paragraph back to one that ends a sentence (at most three)."""
    if at == 0 or (lines[at][:1].strip() != "" and lines[at][:1].isupper()):
        return ""
    parts: list[str] = []
    for j in range(at - 1, max(-1, at - 4), -1):
        prev = lines[j].rstrip()
        if not prev or prev[-1] in ".:!?=|)" or _DECORATION.match(prev) or len(prev) < 30:
            break
        parts.insert(0, _DIGITS.sub(" ", prev))
    return " ".join(" ".join(parts).split())


def read_stdout(stdout: str) -> list[Printed]:
    """Every number of ``stdout`` (at most :data:`MAX_NUMBERS`), in printing order.

    A row of numbers printed under a header of names takes each number's column name as its
    unit; as its label too when it is the header's only row (a one-row frame of results). The
    number of rows under the header is recorded (``Printed.rows``): a short table lists results,
    a long one units, days or stocks.
    """
    lines = [raw[:MAX_LINE] for raw in stdout.splitlines()]
    rows: list[_Row | None] = []
    header: str | None = None
    for text in lines:  # first pass: which header each row is under
        numeric = any(ch.isdigit() for ch in text) or _HAS_MISSING.search(text) is not None
        rows.append(_columns(header, text) if numeric and not _is_header(text) else None)
        if _DECORATION.match(text):
            continue
        if _is_header(text):
            header = text
        elif not text.strip():
            header = None
    sizes = [0] * len(lines)
    i = 0
    while i < len(lines):  # consecutive rows under one header form a table
        j = i
        while j < len(lines) and (rows[j] is not None or (j > i and _DECORATION.match(lines[j]))):
            j += 1
        for k in range(i, j):
            sizes[k] = sum(1 for r in rows[i:j] if r is not None)
        i = max(j, i + 1)
    out: list[Printed] = []
    for no, text in enumerate(lines, start=1):
        if len(out) >= MAX_NUMBERS:
            break
        if any(ch.isdigit() for ch in text) or _HAS_MISSING.search(text):
            row = rows[no - 1]
            if row is not None:
                row = _Row(row.names, row.label, sizes[no - 1])
            found = read_line(text, no, row, label_columns=row is not None and row.rows == 1)
            before = _sentence_before(lines, no - 1)
            if before:  # a wrapped sentence: its start says what its numbers are
                found = [replace(p, prefix=f"{before} {p.prefix}".strip()) for p in found]
            out.extend(found)
    return out[:MAX_NUMBERS]

"""Coefficient tables in printed R and Python output, reduced to (term, estimate) rows.

Handles whitespace-aligned tables (R ``summary``/``coeftest``/``plm``/``estimatr``, data.frame,
data.table and tibble prints, statsmodels, linearmodels and pandas) and markdown tables
(pyfixest ``summary()``). The estimate column is located from the header; a value is taken only
from that column, so a standard error, statistic, p-value or interval bound is never returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from causalverify.extraction._headings import caption
from causalverify.extraction._numbers import (
    STARS_RE,
    is_numeric_token,
    normalize_line,
    parse_number,
)

#: multi-word column names, joined with underscores (same length, so positions are kept)
MULTIWORD: Final = (
    "std. error",
    "std. err.",
    "std err",
    "std. err",
    "t value",
    "z value",
    "t stat",
    "p value",
    "ci lower",
    "ci upper",
    "lower ci",
    "upper ci",
    "conf. low",
    "conf. high",
)
#: estimate-column names, best first
_ESTIMATE_COLUMNS: Final = ("estimate", "coef", "coef.", "parameter", "coefficient", "estimates")
_STAT_WORDS: Final = re.compile(
    r"std|^se$|s\.e\.|error|t_value|z_value|^t$|^z$|statistic|t-stat|p-?value|p\.value|pr\(|p>"
    r"|ci|conf|0\.025|0\.975|2\.5%|97\.5%|lower|upper|df"
)
_SEPARATOR: Final = re.compile(r"^[\s\-=|:+_~]*$")
_TYPE_ROW: Final = re.compile(r"^\s*(<\w+>\s*)+$")  # tibble column types
_ROW_INDEX: Final = re.compile(r"^\d+:?$")
#: label-column names of a table whose rows are specifications rather than coefficients
_SPEC_COLUMNS: Final = frozenset({"spec", "specification", "model", "models", "estimator"})


@dataclass(frozen=True)
class TableRow:
    """One row of a coefficient table: the term and the value in its estimate column."""

    term: str
    value: float
    token: str
    line: int  # 1-based line in stdout
    table: int  # index of the table in stdout
    column: str
    context: str  # lower-cased text printed before the table
    #: the table's label column names specifications (``spec``, ``model``), not terms
    spec: bool = False


MULTIWORD_RE: Final = re.compile(
    "|".join(rf"(?<![\w.]){re.escape(p)}(?![\w])" for p in MULTIWORD), re.IGNORECASE
)


def _prep(line: str) -> str:
    """Normalize a line; join multi-word column names keeping every character's position."""
    line = normalize_line(line)
    line = line.replace(">|t|", ">_t_").replace(">|z|", ">_z_")
    return MULTIWORD_RE.sub(lambda m: m.group(0).replace(" ", "_"), line)


def _tokens(line: str) -> list[tuple[str, int]]:
    """Tokens with their end positions."""
    return [(m.group(0), m.end()) for m in re.finditer(r"\S+", line)]


@dataclass(frozen=True)
class _Header:
    names: list[str]
    ends: list[int]
    est_index: int
    markdown: bool


def _parse_header(line: str) -> _Header | None:
    markdown = line.strip().startswith("|")
    if markdown:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names, ends = cells, [0] * len(cells)
    else:
        toks = _tokens(line)
        names, ends = [t for t, _ in toks], [e for _, e in toks]
    lowered = [n.lower() for n in names]
    if not lowered or sum(parse_number(n) is not None for n in lowered) > 2:
        return None
    for col in _ESTIMATE_COLUMNS:
        if col in lowered:
            others = [n for n in lowered if n != col]
            if col in {"parameter", "coefficient"} and "estimate" in lowered:
                continue
            if any(_STAT_WORDS.search(n) for n in others) or len(lowered) <= 3:
                return _Header(names, ends, lowered.index(col), markdown)
    return None


def _row_values(line: str, header: _Header) -> tuple[str, str, int] | None:
    """Return (term, estimate token, token end) for a table row, or None."""
    if header.markdown:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != len(header.names) or header.est_index == 0:
            return None
        return cells[0], cells[header.est_index], 0
    toks = _tokens(line)
    while toks and STARS_RE.match(toks[-1][0]):
        toks.pop()
    n_num = 0
    while n_num < len(toks) and is_numeric_token(toks[len(toks) - 1 - n_num][0]):
        n_num += 1
    value_cols = len(header.names) - header.est_index
    if n_num < value_cols or value_cols <= 0:
        return None
    prefix = [t for t, _ in toks[: len(toks) - n_num]]
    values = toks[len(toks) - n_num :]
    extra = n_num - (len(header.names) - _n_label_columns(header))
    if extra > 0:  # leading row names that are numbers
        prefix += [t for t, _ in values[:extra]]
        values = values[extra:]
    token, end = values[len(values) - value_cols]
    if abs(end - header.ends[header.est_index]) > max(len(token), 4) + 2:
        return None  # not under the estimate column: misaligned or wrapped
    if len(prefix) > 1 and _ROW_INDEX.match(prefix[0]):
        prefix = prefix[1:]
    return " ".join(prefix), token, end


def _n_label_columns(header: _Header) -> int:
    """Header columns that hold labels rather than numbers (e.g. ``term``)."""
    return header.est_index if header.est_index > 0 else 0


def find_table_rows(stdout: str) -> list[TableRow]:
    """Every row of every coefficient table printed in ``stdout``, in printing order."""
    lines = stdout.splitlines()
    rows: list[TableRow] = []
    table = -1
    last_end = 0
    i = 0
    while i < len(lines):
        prepped = _prep(lines[i])
        header = _parse_header(prepped)
        if header is None:
            i += 1
            continue
        table += 1
        context = caption(lines[max(last_end, i - 20) : i + 1])
        i, found = _read_rows(lines, i + 1, header, table, context)
        rows.extend(found)
        last_end = i
    return rows


def _read_rows(
    lines: list[str], start: int, header: _Header, table: int, context: str
) -> tuple[int, list[TableRow]]:
    found: list[TableRow] = []
    i = start
    while i < len(lines):
        raw = lines[i]
        prepped = _prep(raw)
        if not prepped.strip():
            if found:
                break
            i += 1
            continue
        if _SEPARATOR.match(prepped) or _TYPE_ROW.match(prepped) or _is_index_name(prepped):
            if found and not header.markdown and set(prepped.strip()) <= {"-", "="}:
                break
            i += 1
            continue
        if _parse_header(prepped) is not None:
            break  # a new header (e.g. after a title such as "Parameter Estimates")
        parsed = _row_values(prepped, header)
        if parsed is None:
            if found or i - start > 2:
                break
            i += 1
            continue
        term, token, _ = parsed
        value = parse_number(token)
        column = header.names[header.est_index]
        spec = header.est_index > 0 and header.names[0].lower() in _SPEC_COLUMNS
        if value is not None and (term or i == start):
            # no term: a single row printed as a named vector (R ``coef(summary(fit))["x", ]``);
            # the caller names it from the code
            found.append(TableRow(term, value, token, i + 1, table, column, context, spec))
        i += 1
        if not term:
            break
    return i, found


def _is_index_name(line: str) -> bool:
    """pandas prints the index name alone on the line after the header."""
    toks = line.split()
    return len(toks) == 1 and toks[0].lower() in {"coefficient", "term", "variable", "index"}


_PAREN_NUMBER: Final = re.compile(r"^\(\s*[-+]?[\d.]+(?:[eE][-+]?\d+)?\s*\)$")
_STARRED: Final = re.compile(r"^([-+]?[\d.]+(?:[eE][-+]?\d+)?)[*+†]*$")
_TUPLE_TERM: Final = re.compile(r"""^\(\s*'coef'\s*,\s*'([^']+)'\s*\)$""")


def _md_cells(line: str) -> list[str] | None:
    text = normalize_line(line).strip()
    if not (text.startswith("|") and text.endswith("|")):
        return None
    return [c.strip() for c in text.strip("|").split("|")]


def find_regression_table_rows(stdout: str) -> list[TableRow]:
    """Coefficients of markdown regression tables (pyfixest ``etable``): one model per column.

    A coefficient row holds the estimate (with significance stars) under each model's column and
    the next row holds its standard error in parentheses with an empty label; only such pairs
    are read, so the parenthesised row is never returned.
    """
    lines = stdout.splitlines()
    rows: list[TableRow] = []
    header: list[str] = []
    for i in range(len(lines) - 1):
        cells, below = _md_cells(lines[i]), _md_cells(lines[i + 1])
        if cells is None:
            header = []
            continue
        if not header:
            header = cells
        if below is None or len(below) != len(cells) or below[0] or not cells[0]:
            continue
        m = _TUPLE_TERM.match(cells[0])
        term = m.group(1) if m else cells[0]
        for col in range(1, len(cells)):
            est = _STARRED.match(cells[col])
            if est and _PAREN_NUMBER.match(below[col]):
                value = parse_number(est.group(1))
                if value is not None:
                    name = header[col] if col < len(header) else str(col)
                    context = caption(lines[max(0, i - 20) : i + 1])
                    rows.append(TableRow(term, value, est.group(1), i + 1, -1, name, context))
    return rows

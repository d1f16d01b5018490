"""Named coefficient vectors: R ``coef(fit)`` / ``print(fit)`` and pandas ``params`` Series."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from causalverify.extraction._numbers import is_numeric_token, normalize_line, parse_number
from causalverify.extraction._terms import CodeHints, term_score
from causalverify.families import Family

#: code that touches standard errors, statistics or p-values (for the bare-number rule)
_UNSAFE_CODE: Final = re.compile(
    r"\.bse\b|std_errors|\.pvalues|\.tvalues|\.tstats|sqrt\(diag|vcov\(|std\.error|\bse\("
)
_STAT_VECTOR: Final = (
    r"[\w.$]*(?:\.bse|\.std_errors|\.pvalues|\.tvalues|\.tstats|\$std\.error|\$p\.value)"
    r"|sqrt\(\s*diag\(.*\)\s*\)|\bse\(\s*\w+\s*\)|vcov\(.*\)"
)
#: a line of code that prints a whole vector of standard errors, statistics or p-values
#: (``print(res.bse)``, R's auto-printed ``sqrt(diag(vcov(fit)))``): it prints like a vector of
#: coefficients, so vectors are then unsafe; a formatted single value (``res.bse["x"]``) is not
_PRINTS_STAT_VECTOR: Final = re.compile(
    rf"^\s*(?:print\(\s*)?(?:{_STAT_VECTOR})\s*\)?\s*;?\s*$", re.MULTILINE
)
_ELLIPSIS: Final = re.compile(r"^\s*\.\.\.\s*$")
_SERIES_END: Final = re.compile(r"^(?:Name: (?P<name>[\w ]+), )?dtype: (float|int)\d*\s*$")


@dataclass(frozen=True)
class VectorEntry:
    """One named coefficient."""

    term: str
    value: float
    token: str
    line: int


def find_vectors(code: str, stdout: str) -> list[VectorEntry]:
    """Named coefficients printed as R named vectors or pandas Series.

    Returns nothing when the code prints standard errors or statistics as vectors too, since the
    two print identically.
    """
    if _PRINTS_STAT_VECTOR.search(code):
        return []
    lines = [normalize_line(x) for x in stdout.splitlines()]
    return _r_vectors(lines) + _series(lines)


def _r_vectors(lines: list[str]) -> list[VectorEntry]:
    out: list[VectorEntry] = []
    for i in range(len(lines) - 1):
        names, values = lines[i].split(), lines[i + 1].split()
        if not names or len(names) != len(values):
            continue
        if any(is_numeric_token(n) for n in names) or not all(is_numeric_token(v) for v in values):
            continue
        for name, tok in zip(names, values, strict=True):
            value = parse_number(tok)
            if value is not None:
                out.append(VectorEntry(name, value, tok, i + 2))
    return out


def _series(lines: list[str]) -> list[VectorEntry]:
    out: list[VectorEntry] = []
    for i, line in enumerate(lines):
        m = _SERIES_END.match(line)
        if not m:
            continue
        name = (m.group("name") or "").lower()
        if name and not re.search(r"param|coef|estimate", name):
            continue
        j = i - 1
        while j >= 0:
            if _ELLIPSIS.match(lines[j]):  # a long Series printed truncated: rows go on above
                j -= 1
                continue
            toks = lines[j].split()
            if len(toks) < 2 or not is_numeric_token(toks[-1]) or is_numeric_token(toks[0]):
                break
            value = parse_number(toks[-1])
            if value is not None:
                out.append(VectorEntry(" ".join(toks[:-1]), value, toks[-1], j + 1))
            j -= 1
    return out


_BARE: Final = re.compile(r"^\s*(?:\[1\]\s*)?(?P<num>\S+)\s*$")
#: a single coefficient picked by name: ``params["x"]``, ``coef(fit)["x"]``, ``coef(fit)[["x"]]``
_COEF_PICK: Final = re.compile(
    r"""(?:params|coef\(\s*\w+\s*\)|coefficients)\s*\[\[?\s*["']([^"']+)["']\s*\]"""
)
_STAT_CODE: Final = re.compile(r"conf_?int|confint|\bse\b|std|pvalue|p\.value|tvalue|statistic")


def find_bare_number(
    code: str, stdout: str, family: Family, hints: CodeHints
) -> VectorEntry | None:
    """The value of a script whose whole stdout is one unlabelled number.

    Taken only when the code picks exactly one coefficient by name (``res.params["x"]``,
    ``coef(fit)["x"]``), that name is the family's effect term, and the code touches no standard
    error, statistic, p-value or interval, so the number cannot be one of those.
    """
    lines = [x for x in stdout.splitlines() if x.strip()]
    if len(lines) != 1 or _UNSAFE_CODE.search(code) or _STAT_CODE.search(code):
        return None
    m = _BARE.match(normalize_line(lines[0]))
    value = parse_number(m.group("num")) if m else None
    picks = {p for p in _COEF_PICK.findall(code)}
    if m is None or value is None or len(picks) != 1:
        return None
    term = next(iter(picks))
    if term_score(term, family, hints) is None:
        return None
    line = next(i for i, x in enumerate(stdout.splitlines(), 1) if x.strip())
    return VectorEntry(term, value, m.group("num"), line)

"""Reading facts out of the published scenario texts: column descriptions and stated numbers."""

from __future__ import annotations

import re
from typing import Final

from causalverify.families import Family

#: plain-words meanings used when the published text gives no description of a column
FALLBACK_COLUMNS: Final[dict[Family, dict[str, str]]] = {
    "did": {
        "unit_id": "unit identifier",
        "period": "time period (integer)",
        "treated": "1 for units in the treated group, 0 otherwise",
        "post": "1 in periods from the first treated period on, 0 before",
        "treat_x_post": "treated times post",
        "y": "outcome",
    },
    "event_study": {
        "stock_id": "stock identifier",
        "event_day": "trading day relative to the event (day 0 is the event day)",
        "ret": "daily stock return (decimal)",
        "mkt_ret": "daily market return (decimal)",
        "beta": "the stock's market beta",
    },
    "iv": {
        "y": "outcome",
        "x": "explanatory variable whose effect is asked about",
        "z": "binary variable (0/1)",
        "controls": "additional covariate",
    },
    "rdd": {
        "running_var": "score that decides treatment",
        "treated": "1 if running_var is at or above the cutoff, 0 otherwise",
        "y": "outcome",
        "near_cutoff": "1 if running_var is within the band around the cutoff, 0 otherwise",
    },
}

_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"
_IDENTIFIER: Final[re.Pattern[str]] = re.compile(
    rf"`([^`\n]+)`|{_EDGE_L}([a-z][a-z0-9]*(?:_[a-z0-9]+)+){_EDGE_R}"
)
_FILE: Final[re.Pattern[str]] = re.compile(r"\S+\.(?:csv|json|R|r|py|txt)\b")
_NUMBER = r"(-?\+?\d+(?:\.\d+)?|-?\.\d+)"


def mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a whole word (backticks allowed)."""
    return re.search(f"{_EDGE_L}{re.escape(name)}{_EDGE_R}", text) is not None


def named_identifiers(text: str) -> list[str]:
    """Variable-like names in ``text``: backticked spans and snake_case words, in order, once.

    File names (``s01_data.csv``) are ignored.
    """
    clean = _FILE.sub(" ", text)
    out: list[str] = []
    for match in _IDENTIFIER.finditer(clean):
        name = (match.group(1) or match.group(2) or "").strip()
        if name and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) and name not in out:
            out.append(name)
    return out


def column_description(text: str, column: str) -> str | None:
    """The description the text gives for ``column`` (``col: ...``, ``col = ...``, ``col (...)``).

    Returns
    -------
    str or None
        The first such phrase, trimmed to one clause; ``None`` if the text gives none.
    """
    pattern = (
        rf"{_EDGE_L}`?{re.escape(column)}`?\s*(?::|=|\u2014|\u2013| - |\(|,\s*(?:the|a|an)\s)"
        r"\s*([^\n;]+)"
    )
    for match in re.finditer(pattern, text):
        phrase = _one_clause(match.group(1))
        if len(re.findall(r"[A-Za-z]{3,}", phrase)) >= 1:
            return phrase[:200]
    return None


def _one_clause(text: str) -> str:
    """``text`` up to the end of its sentence or an unbalanced closing parenthesis."""
    depth = 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return text[:i].strip().rstrip(".,;").strip()
        elif char == "." and depth == 0 and _sentence_end(text, i):
            return text[:i].strip()
    return text.strip().rstrip(".,;").strip()


def _sentence_end(text: str, i: int) -> bool:
    return text[i + 1 : i + 2] in (" ", "") and i > 0 and not text[i - 1].isdigit()


def stated_numbers(text: str, pattern: str) -> list[float]:
    """Every number captured by ``pattern`` (one group, case-insensitive) in ``text``."""
    found: list[float] = []
    for match in re.finditer(pattern, text, flags=re.IGNORECASE):
        raw = match.group(1).replace(",", "").replace("+", "")
        try:
            found.append(float(raw))
        except ValueError:
            continue
    return found


NUMBER: Final[str] = _NUMBER

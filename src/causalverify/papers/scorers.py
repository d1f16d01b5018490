"""Scorers that read a method family and an effect direction out of an answer (L3 and L4).

``S1``
    keyword counts in the second half of the answer (by characters), as the published pipeline;
``S2``
    section-aware keywords: the method from the identification-strategy section, the direction
    from the expected-results section (the RID answer's "Strategy and Expected Direction"
    section serves both);
``S3``
    an LLM judge answering one word (:func:`causalverify.papers.prompts.judge_messages`; the
    word is parsed by :func:`parse_judge_word`);
``S4``
    the structured JSON line the prompt asks for (the last JSON object with a
    ``method_family`` or ``direction`` key).

A scorer that finds no unique answer predicts ``None``, which never matches a label.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from causalverify.papers.prompts import Layer
from causalverify.papers.records import DIRECTIONS, METHODS, Direction, MethodLabel

Scorer = Literal["S1", "S2", "S3", "S4"]
SCORERS: Final[tuple[Scorer, ...]] = ("S1", "S2", "S3", "S4")
#: scorers that read the answer alone (S3 needs a judge model)
TEXT_SCORERS: Final[tuple[Scorer, ...]] = ("S1", "S2", "S4")

L = TypeVar("L", bound=str)


@dataclass(frozen=True)
class Prediction:
    """A scorer's reading of one answer; ``None`` where it found no unique answer."""

    method: MethodLabel | None
    direction: Direction | None


_CI: Final[int] = re.IGNORECASE


def _rx(pattern: str, flags: int = _CI) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z0-9])", flags)


METHOD_KEYWORDS: Final[dict[MethodLabel, tuple[re.Pattern[str], ...]]] = {
    "DID": (
        _rx(r"differences?[\s-]+in[\s-]+differences?"),
        _rx(r"diff[\s-]+in[\s-]+diffs?"),
        _rx(r"D-?[iI]-?D", 0),
        _rx(r"parallel[\s-]+trends?"),
        _rx(r"two[\s-]+way[\s-]+fixed[\s-]+effects?"),
        _rx(r"TWFE", 0),
    ),
    "EVENT_STUDY": (
        _rx(r"event[\s-]+stud(?:y|ies)"),
        _rx(r"(?:cumulative\s+)?abnormal\s+returns?"),
        _rx(r"CARs?", 0),
        _rx(r"event\s+windows?"),
    ),
    "IV": (
        _rx(r"instrumental[\s-]+variables?"),
        _rx(r"instruments?"),
        _rx(r"IVs?", 0),
        _rx(r"2SLS|TSLS", 0),
        _rx(r"two[\s-]+stage\s+least\s+squares"),
        _rx(r"first[\s-]+stages?"),
        _rx(r"exclusion\s+restrictions?"),
    ),
    "RDD": (
        _rx(r"regression[\s-]+discontinuit(?:y|ies)"),
        _rx(r"RDD?", 0),
        _rx(r"running\s+variables?"),
        _rx(r"bandwidths?"),
        _rx(r"discontinuit(?:y|ies)"),
    ),
    "OTHER": (
        _rx(r"randomi[sz]ed(?:\s+controlled)?\s+(?:trial|experiment|assignment)s?"),
        _rx(r"RCTs?", 0),
        _rx(r"synthetic\s+controls?"),
        _rx(r"field\s+experiments?"),
    ),
}

DIRECTION_KEYWORDS: Final[dict[Direction, tuple[re.Pattern[str], ...]]] = {
    "positive": (
        _rx(r"positive(?:ly)?"),
        _rx(r"increas(?:e|es|ed|ing)"),
        _rx(r"rais(?:e|es|ed|ing)"),
        _rx(r"higher"),
        _rx(r"improv(?:e|es|ed|ing|ement)"),
    ),
    "negative": (
        _rx(r"negative(?:ly)?"),
        _rx(r"decreas(?:e|es|ed|ing)"),
        _rx(r"reduc(?:e|es|ed|ing|tion)"),
        _rx(r"lower"),
        _rx(r"declin(?:e|es|ed|ing)"),
    ),
    "mixed": (_rx(r"mixed"), _rx(r"heterogene(?:ous|ity)")),
    "unclear": (_rx(r"unclear"), _rx(r"ambiguous"), _rx(r"indeterminate")),
}


def keyword_counts(text: str, table: Mapping[L, tuple[re.Pattern[str], ...]]) -> Counter[L]:
    """How often the keywords of each label occur in ``text``."""
    counts: Counter[L] = Counter()
    for label, patterns in table.items():
        counts[label] = sum(len(p.findall(text)) for p in patterns)
    return counts


def _first_hit(text: str, table: Mapping[L, tuple[re.Pattern[str], ...]], label: L) -> int:
    starts = [m.start() for p in table[label] for m in p.finditer(text)]
    return min(starts) if starts else len(text)


def _winner(text: str, table: Mapping[L, tuple[re.Pattern[str], ...]], *, first: bool) -> L | None:
    """The label with the most hits; a tie is broken by first mention when ``first``."""
    counts = keyword_counts(text, table)
    top = max(counts.values(), default=0)
    if top == 0:
        return None
    leaders = [label for label in table if counts[label] == top]
    if len(leaders) == 1:
        return leaders[0]
    if not first:
        return None
    return min(leaders, key=lambda label: _first_hit(text, table, label))


def score_s1(answer: str) -> Prediction:
    """S1: keyword counts in the second half of the answer; a tie predicts nothing."""
    half = answer[len(answer) // 2 :]
    return Prediction(
        method=_winner(half, METHOD_KEYWORDS, first=False),
        direction=_winner(half, DIRECTION_KEYWORDS, first=False),
    )


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(?P<title>.+?)\s*#*\s*$", re.MULTILINE)


def split_sections(answer: str) -> dict[str, str]:
    """Markdown sections of ``answer``: lower-cased heading -> body (first of equal headings)."""
    marks = list(_HEADING.finditer(answer))
    sections: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(answer)
        sections.setdefault(mark.group("title").lower(), answer[mark.end() : end])
    return sections


def _section(sections: Mapping[str, str], words: tuple[str, ...]) -> str | None:
    for title, body in sections.items():
        if any(w in title for w in words):
            return body
    return None


def score_s2(answer: str) -> Prediction:
    """S2: method from the strategy section, direction from the expected-results section."""
    sections = split_sections(answer)
    method_text = _section(sections, ("identification", "strategy"))
    direction_text = _section(sections, ("expected result", "expected direction", "expected"))
    return Prediction(
        method=_winner(method_text, METHOD_KEYWORDS, first=True) if method_text else None,
        direction=(
            _winner(direction_text, DIRECTION_KEYWORDS, first=True) if direction_text else None
        ),
    )


_ALIASES: Final[dict[str, MethodLabel]] = {
    "did": "DID",
    "dd": "DID",
    "differenceindifferences": "DID",
    "diffindiff": "DID",
    "eventstudy": "EVENT_STUDY",
    "es": "EVENT_STUDY",
    "iv": "IV",
    "instrumentalvariables": "IV",
    "instrumentalvariable": "IV",
    "2sls": "IV",
    "rdd": "RDD",
    "rd": "RDD",
    "regressiondiscontinuity": "RDD",
    "other": "OTHER",
}


def normalise_method(value: object) -> MethodLabel | None:
    """``"event study"``, ``"EVENT_STUDY"``, ``"DiD"`` … -> the label; anything else ``None``."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"[^a-z0-9]", "", value.lower())
    return _ALIASES.get(key)


def normalise_direction(value: object) -> Direction | None:
    """``"Positive"``, ``" negative."`` … -> the label; anything else ``None``."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"[^a-z]", "", value.lower())
    return key if key in DIRECTIONS else None


_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def json_objects(text: str) -> list[dict[str, object]]:
    """Every flat JSON object in ``text`` that parses (single quotes tolerated), in order."""
    found = []
    for match in _OBJECT.finditer(text):
        raw = match.group(0)
        for candidate in (raw, raw.replace("'", '"')):
            try:
                value = json.loads(candidate)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append({str(k).lower(): v for k, v in value.items()})
            break
    return found


def parse_structured(answer: str) -> Prediction:
    """S4: the last JSON object with a ``method_family`` (or ``method``) or ``direction`` key."""
    for obj in reversed(json_objects(answer)):
        method = obj.get("method_family", obj.get("method"))
        if method is not None or "direction" in obj:
            return Prediction(
                method=normalise_method(method), direction=normalise_direction(obj.get("direction"))
            )
    return Prediction(method=None, direction=None)


def parse_judge_word(text: str | None, layer: Layer) -> MethodLabel | Direction | None:
    """S3: the judge's one-word answer (the first word that is a label of ``layer``)."""
    if not text:
        return None
    allowed = METHODS if layer == "method" else DIRECTIONS
    for word in re.findall(r"[A-Za-z_]+", text):
        label = normalise_method(word) if layer == "method" else normalise_direction(word)
        if label is not None and label in allowed:
            return label
    return None


def score_text(answer: str, scorer: Scorer) -> Prediction:
    """Apply a text scorer (S1, S2 or S4) to an answer.

    Raises
    ------
    ValueError
        For ``"S3"``, which needs the judge's stored words (see :func:`parse_judge_word`).
    """
    if scorer == "S1":
        return score_s1(answer)
    if scorer == "S2":
        return score_s2(answer)
    if scorer == "S4":
        return parse_structured(answer)
    raise ValueError(f"{scorer} is not a text scorer; S3 reads the judge's answers")

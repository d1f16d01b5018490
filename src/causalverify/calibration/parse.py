"""Robust parsing of a confidence answer into three values in [0, 1], each with a reason if missing.

Rules (documented in ``docs/CALIBRATION.md``):

- The answer may wrap the JSON object in a code fence or in prose. Every balanced ``{...}`` is
  tried; the **last** object that holds at least one confidence key wins (a model that revises
  itself writes its final answer last). One level of nesting is accepted
  (``{"confidences": {...}}``). Single quotes, trailing commas and Python literals are repaired.
- Keys: ``method_confidence``, ``specification_confidence``, ``numerical_confidence``; the short
  forms ``method`` / ``specification`` / ``numerical`` are accepted, case and separators ignored.
- Values: numbers, or numbers written as strings; ``"85%"`` is read as 0.85.
- Scale: values are on [0, 1]. An answer whose numeric values are all in [0, 100] with every
  value either 0 or above 1 is read as a 0-100 scale (all divided by 100, ``percent_scale``).
  In a mixed answer (some in (0, 1], some above 1) the values above 1 are out of range.
- Anything else (missing key, null, text, negative, above the scale, NaN) is recorded as missing
  with a reason, never dropped.
- With no JSON object at all, ``method confidence: 0.8``-style pairs in prose are read as a last
  resort (the word "confidence" is required, so other numbers in prose are never taken).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from causalverify.store.calibration import CONFIDENCE_TYPES

ParseStatus = Literal["ok", "partial", "unparsable"]

_ALIASES: Final[dict[str, str]] = {
    **{f"{kind}_confidence": kind for kind in CONFIDENCE_TYPES},
    **{kind: kind for kind in CONFIDENCE_TYPES},
    "spec_confidence": "specification",
    "numeric_confidence": "numerical",
}
_NUMBER: Final = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
_PROSE_PAIR: Final = re.compile(
    r"[\"'`*]*(method|specification|numerical)[ _-]?confidence[\"'`*]*\s*[:=]\s*"
    r"[\"']?([-+]?(?:\d+(?:\.\d*)?|\.\d+)\s*%?)",
    flags=re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedConfidences:
    """The outcome of :func:`parse_confidences`.

    ``confidences`` has every confidence type as a key (value None when missing); ``missing``
    maps each missing type to its reason.
    """

    confidences: dict[str, float | None]
    missing: dict[str, str]
    scale: str | None
    status: ParseStatus
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class _Raw:
    value: float | None
    percent: bool = False
    reason: str | None = None


def parse_confidences(content: str | None) -> ParsedConfidences:
    """Read the three confidences from a model's answer.

    Parameters
    ----------
    content
        The raw answer text (may be None or empty).

    Returns
    -------
    ParsedConfidences
        Status ``ok`` (all three parsed), ``partial`` (some missing, each with a reason) or
        ``unparsable`` (nothing readable; all three missing).
    """
    if not content or not content.strip():
        return _all_missing("empty answer")
    obj, note = _find_object(content)
    if obj is None:
        return _all_missing("no JSON object with a confidence key")
    raws = {kind: _raw_value(obj, kind) for kind in CONFIDENCE_TYPES}
    values, missing, scale = _apply_scale(raws)
    status: ParseStatus = "ok" if not missing else "partial"
    return ParsedConfidences(values, missing, scale, status, (note,) if note else ())


def _all_missing(reason: str) -> ParsedConfidences:
    return ParsedConfidences(
        dict.fromkeys(CONFIDENCE_TYPES),
        dict.fromkeys(CONFIDENCE_TYPES, f"unparsable: {reason}"),
        None,
        "unparsable",
    )


def _canonical_key(key: str) -> str | None:
    return _ALIASES.get(re.sub(r"[\s\-]+", "_", key.strip().lower()))


def _confidence_dict(obj: Any) -> dict[str, Any] | None:
    """``obj`` (or a dict nested one level in it) keyed by confidence type, or None."""
    if not isinstance(obj, dict):
        return None
    found = {_canonical_key(str(k)): v for k, v in obj.items()}
    found.pop(None, None)
    if found:
        return {str(k): v for k, v in found.items()}
    for value in obj.values():
        if isinstance(value, dict):
            nested = _confidence_dict(value)
            if nested is not None:
                return nested
    return None


def _find_object(content: str) -> tuple[dict[str, Any] | None, str | None]:
    chosen: dict[str, Any] | None = None
    for candidate in _balanced_objects(content):
        parsed = _loads_lenient(candidate)
        found = _confidence_dict(parsed)
        if found is not None:
            chosen = found
    if chosen is not None:
        return chosen, None
    pairs = {m.group(1).lower(): m.group(2) for m in _PROSE_PAIR.finditer(content)}
    if pairs:
        return pairs, "values read from prose (no JSON object)"
    return None, None


def _balanced_objects(text: str) -> list[str]:
    """Every top-level balanced ``{...}`` substring, in order (braces in strings ignored)."""
    found: list[str] = []
    depth, start, quote, escaped = 0, -1, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch == '"' and depth > 0:
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
    return found


def _loads_lenient(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    repaired = re.sub(r",\s*([}\]])", r"\1", text)
    repaired = re.sub(r"\bNone\b", "null", repaired)
    repaired = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", repaired))
    if '"' not in repaired:
        repaired = repaired.replace("'", '"')
    try:
        return json.loads(repaired)
    except json.JSONDecodeError:
        return None


def _raw_value(obj: dict[str, Any], kind: str) -> _Raw:
    if kind not in obj:
        return _Raw(None, reason="missing key")
    value = obj[kind]
    if value is None:
        return _Raw(None, reason="null")
    if isinstance(value, bool):
        return _Raw(None, reason=f"not a number: {value!r}")
    if isinstance(value, int | float):
        return _finite(float(value), False, value)
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        number = text.rstrip("%").strip()
        if _NUMBER.match(number):
            return _finite(float(number), percent, value)
    return _Raw(None, reason=f"not a number: {_short(value)}")


def _finite(number: float, percent: bool, raw: Any) -> _Raw:
    if not math.isfinite(number):
        return _Raw(None, reason=f"not a finite number: {_short(raw)}")
    return _Raw(number, percent=percent)


def _apply_scale(
    raws: dict[str, _Raw],
) -> tuple[dict[str, float | None], dict[str, str], str | None]:
    plain = [r.value for r in raws.values() if r.value is not None and not r.percent]
    percent_scale = bool(plain) and all(0 <= v <= 100 and (v == 0 or v > 1) for v in plain)
    percent_scale = percent_scale and any(v > 1 for v in plain)
    values: dict[str, float | None] = {}
    missing: dict[str, str] = {}
    scales: set[str] = set()
    for kind, raw in raws.items():
        if raw.value is None:
            values[kind], missing[kind] = None, raw.reason or "missing"
            continue
        divide = raw.percent or percent_scale
        value = raw.value / 100.0 if divide else raw.value
        if not 0.0 <= value <= 1.0:
            shown = f"{raw.value:g}{'%' if raw.percent else ''}"
            values[kind], missing[kind] = None, f"out of range: {shown}"
            continue
        values[kind] = value
        scales.add("percent" if raw.percent else "percent_scale" if percent_scale else "unit")
    scale = "+".join(sorted(scales)) if scales else None
    return values, missing, scale


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."

"""Output provenance: which code wrote each line of a script's stdout.

The fit-log hooks (:mod:`causalverify.sandbox.fitlog`) also note the script's writes to stdout:
Python's ``sys.stdout`` (:mod:`causalverify.sandbox._output_py`: ``print``,
``sys.stdout.write``, and everything pandas or statsmodels print through it) and R's ``cat``,
``print`` (with its methods), ``print.default`` and ``writeLines`` (``output.R``). Each run of
output written from one place becomes one JSON line on the fit-log pipe, ``{"kind": "output",
"function", "line", "code", "call", "top_line", "chars", "head", "tail", "object"}``: the
written text's length in characters with its first 64 and last 32 characters, and where it came
from. :func:`parse_outputs` reads those lines and places each run in stdout: in order, each at
the first place at or after the previous one where its head, length and tail fit; a run that
fits nowhere is skipped. Output that no hook saw (R's auto-printing of a plain vector,
``sys.stdout.buffer``, a subprocess) has no origin.

The records are untrusted data written by untrusted code: :func:`parse_outputs` keeps at most
:data:`MAX_OUTPUTS` records, drops malformed or oversized ones with a note, bounds the work of
placing them, and never raises. A forged record can only attach a wrong code line to text the
script printed anyway.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from typing import Any, Final

from causalverify.records.execution import ExecResult, OutputOrigin

#: how an output record's line starts (the fit log's entries never do)
PREFIX: Final = b'{"kind":"output"'
MAX_OUTPUTS: Final = 4000
MAX_RECORD_BYTES: Final = 8192
_MAX_TEXT: Final = 400
_MAX_NAME: Final = 200
_MAX_HEAD: Final = 64
_MAX_TAIL: Final = 32
#: characters of stdout the search for records may scan, per character of stdout (and at least)
_SCAN_FACTOR: Final = 8
_SCAN_MIN: Final = 4_000_000
_SURROGATE: Final = re.compile("[\ud800-\udfff]")

__all__ = ["MAX_OUTPUTS", "PREFIX", "line_origins", "parse_outputs"]


def _text(value: Any, limit: int, *, default: str | None = "") -> str | None:
    if value is None and default is not None:
        return default
    if not isinstance(value, str) or len(value) > limit:
        return None
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def _line(value: Any) -> int | None:
    """A 1-based line number, None when absent; ValueError when invalid."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000_000:
        raise ValueError(value)
    return value


class _Record:
    __slots__ = ("chars", "fields", "head", "tail")

    def __init__(self, fields: dict[str, Any], chars: int, head: str, tail: str) -> None:
        self.fields = fields
        self.chars = chars
        self.head = head
        self.tail = tail


def _record(raw: Any) -> _Record | None:
    """The record ``raw`` describes; None (or ValueError) when it is not one."""
    if not isinstance(raw, dict) or raw.get("kind") != "output":
        return None
    chars = raw.get("chars")
    if isinstance(chars, bool) or not isinstance(chars, int) or not 1 <= chars <= 1 << 31:
        return None
    head = _text(raw.get("head"), _MAX_HEAD, default=None)
    tail = _text(raw.get("tail"), _MAX_TAIL, default=None)
    if not head or not tail or len(head) > chars or len(tail) > chars:
        return None
    fields: dict[str, Any] = {
        "line": _line(raw.get("line")),
        "top_line": _line(raw.get("top_line")),
    }
    for key, limit in (("function", _MAX_NAME), ("code", _MAX_TEXT), ("call", _MAX_TEXT)):
        value = _text(raw.get(key), limit)
        if value is None:
            return None
        fields[key] = value
    obj = _text(raw.get("object"), _MAX_NAME)
    if obj is None:
        return None
    fields["object"] = obj
    return _Record(fields, chars, head, tail)


def _read(data: bytes, truncated: bool) -> tuple[list[_Record], list[str]]:
    lines = data.split(b"\n")
    if truncated:
        lines = lines[:-1]  # the last line was cut
    records: list[_Record] = []
    bad = over = 0
    for line in lines:
        if not line.startswith(PREFIX):
            continue
        if len(records) >= MAX_OUTPUTS:
            over += 1
            continue
        record = None
        if len(line) <= MAX_RECORD_BYTES:
            try:
                record = _record(json.loads(line.decode("utf-8")))
            except (ValueError, RecursionError):
                record = None
        if record is None:
            bad += 1
        else:
            records.append(record)
    notes = []
    if bad:
        notes.append(f"{bad} malformed output record(s) dropped")
    if over:
        notes.append(f"{over} output records past the first {MAX_OUTPUTS} dropped")
    return records, notes


def _fits(stdout: str, at: int, record: _Record) -> bool:
    end = at + record.chars
    return (
        end <= len(stdout)
        and stdout.startswith(record.head, at)
        and stdout.startswith(record.tail, end - len(record.tail))
    )


def _place(records: list[_Record], stdout: str) -> list[tuple[int, _Record]]:
    """Each record's offset in stdout, in order, greedily; records that fit nowhere are left."""
    placed: list[tuple[int, _Record]] = []
    pos = 0
    budget = max(_SCAN_MIN, _SCAN_FACTOR * len(stdout))
    for record in records:
        if _fits(stdout, pos, record):
            placed.append((pos, record))
            pos += record.chars
            continue
        at = pos
        while budget > 0:
            found = stdout.find(record.head, at)
            budget -= (found if found >= 0 else len(stdout)) - at + 1
            if found < 0:
                break
            if _fits(stdout, found, record):
                placed.append((found, record))
                pos = found + record.chars
                break
            at = found + 1
    return placed


def _line_starts(stdout: str) -> list[int]:
    starts = [0]
    for part in stdout.splitlines(keepends=True):
        starts.append(starts[-1] + len(part))
    return starts


def parse_outputs(
    data: bytes, stdout: str, *, truncated: bool = False
) -> tuple[list[OutputOrigin], str]:
    """The output records in the fit log's bytes, placed in ``stdout``; and a note on drops.

    Never raises: a record that is not valid UTF-8 JSON of the record's shape is dropped and
    counted; one that fits nowhere in ``stdout`` is left out.
    """
    records, notes = _read(data, truncated)
    placed = _place(records, stdout)
    missed = len(records) - len(placed)
    if missed:
        notes.append(f"{missed} output record(s) not found in stdout")
    starts = _line_starts(stdout)
    out = []
    for at, record in placed:
        end = at + record.chars
        out.append(
            OutputOrigin(
                start=at,
                end=end,
                first_line=bisect.bisect_right(starts, at),
                last_line=bisect.bisect_right(starts, end - 1),
                **record.fields,
            )
        )
    return out, "; ".join(notes)


def _weight(text: str) -> int:
    return len(text) - sum(text.count(c) for c in " \t\r\n\f\v")


def line_origins(result: ExecResult) -> dict[int, OutputOrigin]:
    """For each stdout line (1-based, as ``result.stdout.splitlines()`` numbers them) that a
    hook saw written, the origin that wrote most of its visible characters (the first one on a
    tie; a blank line goes to the first origin covering it)."""
    return origins_by_line(result.stdout, result.outputs)


def origins_by_line(stdout: str, outputs: Sequence[OutputOrigin]) -> dict[int, OutputOrigin]:
    """:func:`line_origins` of a stdout and its output records."""
    if not outputs:
        return {}
    starts = _line_starts(stdout)
    best: dict[int, tuple[int, OutputOrigin]] = {}
    for origin in outputs:
        if not 0 <= origin.start < origin.end <= len(stdout):
            continue
        first = bisect.bisect_right(starts, origin.start)
        last = bisect.bisect_right(starts, origin.end - 1)
        for line in range(first, last + 1):
            lo = max(origin.start, starts[line - 1])
            hi = min(origin.end, starts[line])
            weight = _weight(stdout[lo:hi])
            if line not in best or weight > best[line][0]:
                best[line] = (weight, origin)
    return {line: origin for line, (_, origin) in sorted(best.items())}

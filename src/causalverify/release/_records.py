"""Cell records as human-readable JSON Lines, and back.

A stored :class:`~causalverify.records.CellRecord` is split over five files under
``records/``, one line per cell in the same (scenario, model, language, sample) order, each line
carrying the cell ``key``:

- ``cells.jsonl``: key, family, difficulty, beta, canonical, conversions, protocol,
  prompt_sha256, status, status_reason, scores, timings, and the canonical inference (the
  canonical SE under each variant, which scoring the reported SE needs)
- ``responses.jsonl``: the raw model response
- ``executions.jsonl``: the extracted code and the execution (stdout, stderr, status) with the
  resource limits of the run
- ``extractions.jsonl``: the deterministic extraction, the judge output, whether they disagree,
  and the model's declaration of its estimate when it was asked
- ``turns.jsonl`` (repair-mode runs only): every turn of each cell, each with its feedback,
  response, code, execution, extraction and scores (the other files hold the last turn)

``prompts.jsonl`` holds each distinct rendered prompt once, keyed by its ``prompt_sha256``.
Joining the files gives back records equal to the stored ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from causalverify.errors import StoreError
from causalverify.records import CellRecord
from causalverify.release._layout import (
    CELLS_FILE,
    EXECUTIONS_FILE,
    EXTRACTIONS_FILE,
    PROMPTS_FILE,
    RESPONSES_FILE,
    TURNS_FILE,
    dumps_line,
    write_text,
)

#: the part files and the record fields each one holds (besides ``key``)
PARTS: Final[dict[str, tuple[str, ...]]] = {
    CELLS_FILE: (
        "family",
        "difficulty",
        "beta",
        "canonical",
        "conversions",
        "protocol",
        "prompt_sha256",
        "status",
        "status_reason",
        "scores",
        "timings",
        "inference",
    ),
    RESPONSES_FILE: ("response",),
    EXECUTIONS_FILE: ("code", "execution"),
    EXTRACTIONS_FILE: ("extraction", "judge", "extraction_disagree", "declaration"),
}


def write_records(
    root: Path, records: Sequence[CellRecord], *, limits: Mapping[str, Any] | None
) -> None:
    """Write the record files of ``records`` (already in store order) under ``root``."""
    lines: dict[str, list[str]] = {name: [] for name in PARTS}
    prompts: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        data = record.model_dump(mode="json")
        for name, fields in PARTS.items():
            part = {"key": data["key"], **{f: data[f] for f in fields}}
            if name == EXECUTIONS_FILE:
                part["limits"] = dict(limits) if limits is not None else None
            lines[name].append(dumps_line(part))
        prompts.setdefault(record.prompt_sha256, data["prompt"])
    if any(record.turns for record in records):
        lines[TURNS_FILE] = [
            dumps_line({"key": r.key.model_dump(mode="json"), "turns": _turns(r)}) for r in records
        ]
    for name, rows in lines.items():
        write_text(root / name, "".join(row + "\n" for row in rows))
    prompt_lines = (
        dumps_line({"prompt_sha256": sha, "messages": prompts[sha]}) + "\n"
        for sha in sorted(prompts)
    )
    write_text(root / PROMPTS_FILE, "".join(prompt_lines))


def read_prompts(root: Path) -> dict[str, list[dict[str, Any]]]:
    """The rendered prompts of a release: ``prompt_sha256 -> messages``."""
    prompts: dict[str, list[dict[str, Any]]] = {}
    for number, row in read_jsonl(root, PROMPTS_FILE):
        try:
            prompts[str(row["prompt_sha256"])] = list(row["messages"])
        except (KeyError, TypeError) as exc:
            raise StoreError(f"{PROMPTS_FILE} line {number}: malformed prompt ({exc})") from None
    return prompts


def read_records(root: Path) -> list[CellRecord]:
    """Join the record files of the release at ``root`` back into cell records.

    Raises
    ------
    StoreError
        If a file is missing or malformed, the files disagree on the cells they hold, or a
        cell's prompt is not in ``prompts.jsonl``.
    """
    prompts = read_prompts(root)
    parts = {name: list(read_jsonl(root, name)) for name in PARTS}
    turns = list(read_jsonl(root, TURNS_FILE)) if (root / TURNS_FILE).is_file() else None
    cells = parts[CELLS_FILE]
    for name, rows in parts.items():
        if len(rows) != len(cells):
            raise StoreError(f"{name} holds {len(rows)} cells but {CELLS_FILE} holds {len(cells)}")
    records: list[CellRecord] = []
    for index, (number, cell) in enumerate(cells):
        merged: dict[str, Any] = dict(cell)
        for name in PARTS:
            other_number, row = parts[name][index]
            if row.get("key") != cell.get("key"):
                raise StoreError(
                    f"{name} line {other_number}: key {row.get('key')} does not match "
                    f"{CELLS_FILE} line {number}"
                )
            merged.update({f: row.get(f) for f in PARTS[name]})
        if turns is not None:
            merged["turns"] = _joined_turns(turns, index, cell, number)
        sha = str(cell.get("prompt_sha256"))
        if sha not in prompts:
            raise StoreError(f"{CELLS_FILE} line {number}: prompt {sha} not in {PROMPTS_FILE}")
        merged["prompt"] = prompts[sha]
        try:
            records.append(CellRecord.model_validate(merged))
        except ValidationError as exc:
            raise StoreError(
                f"{CELLS_FILE} line {number}: not a valid cell record: {exc}"
            ) from None
    return records


def _turns(record: CellRecord) -> list[dict[str, Any]]:
    return [turn.model_dump(mode="json") for turn in record.turns]


def _joined_turns(
    rows: list[tuple[int, dict[str, Any]]], index: int, cell: Mapping[str, Any], number: int
) -> Any:
    if len(rows) <= index:
        raise StoreError(f"{TURNS_FILE} holds {len(rows)} cells, fewer than {CELLS_FILE}")
    other_number, row = rows[index]
    if row.get("key") != cell.get("key"):
        raise StoreError(
            f"{TURNS_FILE} line {other_number}: key {row.get('key')} does not match "
            f"{CELLS_FILE} line {number}"
        )
    return row.get("turns") or []


def read_jsonl(root: Path, name: str) -> Iterable[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of ``root/name``.

    Raises
    ------
    StoreError
        If the file is missing, a line is not JSON, or a line is not an object.
    """
    path = root / name
    if not path.is_file():
        raise StoreError(f"{name} is missing from the release {root}")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise StoreError(f"{name} line {number}: invalid JSON ({exc})") from None
            if not isinstance(row, dict):
                raise StoreError(f"{name} line {number}: not a JSON object")
            yield number, row

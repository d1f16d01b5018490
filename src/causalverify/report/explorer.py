"""The cell explorer's data: every cell of a run, beside the report, readable from ``file://``.

``explorer/cells.js`` holds one short row per cell (the filterable, sortable table);
``explorer/chunk-NNNN.js`` hold the details of :data:`CHUNK` cells each (response, code, stdout
and stderr, the extraction, scores, judge, fit log and every repair turn), loaded only when a
cell is opened; ``explorer/prompts.js`` holds each distinct prompt once. They are JavaScript
files that call a function of the page, not JSON, so that a browser opening the report from disk
loads them without a server. Everything is written sorted and compact, so the same run gives the
same bytes. The page (:mod:`causalverify.report._render`) inserts model output as text only.

The index also carries layer L2c (docs/SCORING.md): the reported SE, the canonical SE under the
reference variant, the tier, the matched variant, their ratio and L2c; a cell's details add every
canonical variant and the reported interval.

A cell's address is ``index.html#cell/<scenario>/<model>/<language>/<sample>``, each part
URL-encoded (:func:`cell_address`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from causalverify.analysis import classify_cell, prepare_cells
from causalverify.families import PUBLISHED_NAME
from causalverify.records import CellKey, CellRecord, TurnRecord
from causalverify.store.table import cells_frame

EXPLORER_DIR: Final = "explorer"
CHUNK: Final = 200
#: the index columns, in order (``chunk`` names the detail file)
FIELDS: Final[tuple[str, ...]] = (
    "scenario",
    "model",
    "language",
    "sample",
    "family",
    "difficulty",
    "status",
    "estimate",
    "canonical",
    "rel_error",
    "L1",
    "L2a",
    "L2b",
    "L2b_plus",
    "turns",
    "chunk",
    "reported_se",
    "canonical_se",
    "se_tier",
    "se_variant",
    "se_ratio",
    "L2c",
    "category",
)


def cell_address(key: CellKey) -> str:
    """``cell/<scenario>/<model>/<language>/<sample>``, each part URL-encoded."""
    parts = (key.scenario_id, key.model, key.language, str(key.sample))
    return "cell/" + "/".join(quote(p, safe="") for p in parts)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _row(record: CellRecord, chunk: int) -> list[Any]:
    scores = record.scores
    return [
        record.key.scenario_id,
        record.key.model,
        record.key.language,
        record.key.sample,
        PUBLISHED_NAME.get(record.family, record.family),
        record.difficulty,
        record.status,
        scores.estimate if scores else None,
        record.canonical,
        scores.rel_error if scores else None,
        _flag(scores.L1) if scores else None,
        _flag(scores.L2a) if scores else None,
        _flag(scores.L2b) if scores else None,
        _flag(scores.L2b_plus) if scores else None,
        len(record.turn_states()),
        chunk,
        *_inference(record),
    ]


def _inference(record: CellRecord) -> list[Any]:
    """``reported_se, canonical_se, se_tier, se_variant, se_ratio, L2c`` of a cell (None where
    not assessed); the reported SE is the one scoring read (the judge's under its extractor)."""
    scores, inference = record.scores, record.inference
    reported = record.extraction
    if scores is not None and scores.extractor == "judge":
        reported = record.judge
    return [
        reported.se if reported is not None else None,
        inference.ses[inference.reference] if inference is not None else None,
        scores.se_tier if scores else None,
        scores.se_variant if scores else None,
        scores.se_ratio if scores else None,
        _flag(scores.L2c) if scores else None,
    ]


def _turn(turn: TurnRecord) -> dict[str, Any]:
    ex, code, ext = turn.execution, turn.code, turn.extraction
    return {
        "turn": turn.turn,
        "feedback": turn.feedback.content if turn.feedback else None,
        "response": turn.response.content if turn.response else None,
        "response_error": turn.response.error if turn.response else None,
        "code": code.code if code else None,
        "block_index": code.block_index if code else None,
        "blocks": code.blocks if code else None,
        "several_blocks": code.several_blocks if code else False,
        "parse_error": code.parse_error if code else None,
        "exec_status": ex.status if ex else None,
        "exit_code": ex.exit_code if ex else None,
        "exec_detail": ex.detail if ex else None,
        "stdout": ex.stdout if ex else None,
        "stderr": ex.stderr if ex else None,
        "fits": [f.model_dump(mode="json") for f in ex.fits] if ex else [],
        "extraction": ext.model_dump(
            mode="json", include={"value", "rule", "line", "se", "ci", "se_source"}
        )
        if ext
        else None,
        "judge": turn.judge.model_dump(
            mode="json", include={"value", "rule", "rationale", "se", "ci"}
        )
        if turn.judge
        else None,
        "scores": turn.scores.model_dump(mode="json") if turn.scores else None,
        "status": turn.status,
        "status_reason": turn.status_reason,
    }


def _detail(record: CellRecord) -> dict[str, Any]:
    turns = record.turn_states()
    return {
        "prompt": record.prompt_sha256,
        "protocol": record.protocol,
        "inference": record.inference.model_dump(mode="json") if record.inference else None,
        "last": _turn(turns[-1]),
        "turns": [_turn(t) for t in turns] if len(turns) > 1 else [],
    }


def write_explorer(records: Sequence[CellRecord], out_dir: Path, unit: str) -> Path:
    """Write the explorer's data files under ``out_dir/explorer``; return that folder."""
    folder = out_dir / EXPLORER_DIR
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    ordered = sorted(records, key=lambda r: r.key.as_tuple())
    # each cell's failure category, as the taxonomy table counts it (its numbers link here)
    category: dict[tuple[str, str, str, int], str] = {}
    if ordered:
        frame = prepare_cells(cells_frame(ordered))
        for (_, row), cat in zip(frame.iterrows(), frame.apply(classify_cell, axis=1), strict=True):
            key = (str(row["scenario_id"]), str(row["model"]), str(row["language"]))
            category[(*key, int(row["sample"]))] = str(cat)
    rows: list[list[Any]] = []
    prompts: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(ordered), CHUNK):
        chunk = start // CHUNK
        part = ordered[start : start + CHUNK]
        details = {cell_address(r.key): _detail(r) for r in part}
        for r in part:
            rows.append([*_row(r, chunk), category.get(r.key.as_tuple())])
            prompts.setdefault(r.prompt_sha256, [m.model_dump(mode="json") for m in r.prompt])
        (folder / f"chunk-{chunk:04d}.js").write_text(
            f"CV_CHUNK({chunk},{_dumps(details)});\n", encoding="utf-8"
        )
    index = {"fields": list(FIELDS), "rows": rows, "unit": unit}
    (folder / "cells.js").write_text(f"window.CV_INDEX={_dumps(index)};\n", encoding="utf-8")
    (folder / "prompts.js").write_text(f"CV_PROMPTS({_dumps(prompts)});\n", encoding="utf-8")
    return folder

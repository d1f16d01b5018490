"""``causalverify export``: a run's cells (and turns) as a flat table for pandas, Arrow, Hugging
Face ``datasets`` and the other tools users already have.

``cells.<ext>`` has one row per cell (a repair-mode cell by its final turn); ``turns.<ext>`` one
row per turn (a single-shot cell is its own turn 1). Every row carries the suite and run settings,
the cell's key, design and true and canonical effects, its status and scores, layer L2c (the
reported SE and interval, the canonical SE under the reference variant and every variant as JSON,
the tier, matched variant, ratio, coverage, significance agreement; docs/SCORING.md), the extraction
(method, value, rule, line, ambiguity, every candidate, and the whole stored record as JSON, so
fields added later are not lost), the execution, tokens, cost and timings. The columns are fixed
(:data:`COLUMNS`, then one ``time_<stage>`` column per timing the run recorded), so every format
has the same schema whatever the run holds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

from causalverify.records import CellRecord, RunMeta, TurnRecord

ExportFormat = Literal["parquet", "csv", "jsonl"]
FORMATS: Final[tuple[str, ...]] = ("parquet", "csv", "jsonl")

#: (column, Arrow type name) in order; ``candidates`` is a list of {value, rule, line}
COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("suite", "string"),
    ("suite_fingerprint", "string"),
    ("suite_seed", "int64"),
    ("protocol", "string"),
    ("mode", "string"),
    ("max_turns", "int64"),
    ("scenario_id", "string"),
    ("model", "string"),
    ("language", "string"),
    ("sample", "int64"),
    ("turn", "int64"),
    ("turns", "int64"),
    ("family", "string"),
    ("difficulty", "string"),
    ("true_effect", "float64"),
    ("canonical", "float64"),
    ("status", "string"),
    ("L1", "bool"),
    ("L2a", "bool"),
    ("L2b", "bool"),
    ("L2b_plus", "bool"),
    ("unscoreable", "bool"),
    ("estimate", "float64"),
    ("rel_error", "float64"),
    ("matched_conversion", "string"),
    ("fitted_effect", "float64"),
    ("fitted_right", "bool"),
    ("reported_se", "float64"),
    ("reported_ci_low", "float64"),
    ("reported_ci_high", "float64"),
    ("se_source", "string"),
    ("canonical_se", "float64"),
    ("se_reference", "string"),
    ("canonical_ses", "string"),
    ("se_tier", "string"),
    ("se_variant", "string"),
    ("se_ratio", "float64"),
    ("ci_covers", "bool"),
    ("significance_agrees", "bool"),
    ("L2c", "bool"),
    ("profile", "string"),
    ("tolerance", "float64"),
    ("extractor", "string"),
    ("extraction_method", "string"),
    ("extraction_value", "float64"),
    ("extraction_rule", "string"),
    ("extraction_line", "int64"),
    ("extraction_ambiguous", "bool"),
    ("candidates", "candidates"),
    ("extraction_record", "string"),
    ("judge_value", "float64"),
    ("extraction_disagree", "bool"),
    ("exec_status", "string"),
    ("exit_code", "int64"),
    ("wall_seconds", "float64"),
    ("cpu_seconds", "float64"),
    ("peak_memory_mb", "float64"),
    ("missing_package", "string"),
    ("input_tokens", "int64"),
    ("output_tokens", "int64"),
    ("cost_usd", "float64"),
    ("latency_seconds", "float64"),
    ("cached", "bool"),
    ("truncated", "bool"),
)


def _num(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _run_fields(meta: RunMeta) -> dict[str, Any]:
    mode = meta.mode_or_single
    return {
        "suite": meta.suite,
        "suite_fingerprint": meta.suite_fingerprint,
        "suite_seed": meta.suite_seed,
        "protocol": meta.protocol if meta.has("protocol") else None,
        "mode": mode.name,
        "max_turns": int(mode.max_turns or 1) if mode.name == "repair" else 1,
    }


def _state_fields(state: CellRecord | TurnRecord) -> dict[str, Any]:
    """What a cell or one of its turns holds: status, scores, extraction, execution, response."""
    scores, extraction, execution, response = (
        state.scores,
        state.extraction,
        state.execution,
        state.response,
    )
    return {
        "status": state.status,
        "L1": scores.L1 if scores else None,
        "L2a": scores.L2a if scores else None,
        "L2b": scores.L2b if scores else None,
        "L2b_plus": scores.L2b_plus if scores else None,
        "unscoreable": scores.unscoreable if scores else state.status == "unscoreable",
        "estimate": _num(scores.estimate) if scores else None,
        "rel_error": _num(scores.rel_error) if scores else None,
        "matched_conversion": scores.matched_conversion if scores else None,
        "fitted_effect": _num(scores.fitted_effect) if scores else None,
        "fitted_right": scores.fitted_right if scores else None,
        **_inference_fields(state),
        "profile": scores.profile if scores else None,
        "tolerance": scores.tolerance if scores else None,
        "extractor": scores.extractor if scores else None,
        "extraction_method": extraction.method if extraction else None,
        "extraction_value": _num(extraction.value) if extraction else None,
        "extraction_rule": extraction.rule if extraction else None,
        "extraction_line": extraction.line if extraction else None,
        "extraction_ambiguous": extraction.ambiguous if extraction else None,
        "candidates": [
            {"value": c.value, "rule": c.rule, "line": c.line}
            for c in (extraction.candidates if extraction else [])
        ],
        "extraction_record": (
            json.dumps(extraction.model_dump(mode="json"), sort_keys=True) if extraction else None
        ),
        "judge_value": _num(state.judge.value) if state.judge else None,
        "extraction_disagree": state.extraction_disagree,
        "exec_status": execution.status if execution else None,
        "exit_code": execution.exit_code if execution else None,
        "wall_seconds": execution.wall_seconds if execution else None,
        "cpu_seconds": execution.cpu_seconds if execution else None,
        "peak_memory_mb": execution.peak_memory_mb if execution else None,
        "missing_package": execution.missing_package if execution else None,
        "input_tokens": response.input_tokens if response else None,
        "output_tokens": response.output_tokens if response else None,
        "cost_usd": response.cost_usd if response else None,
        "latency_seconds": response.latency_seconds if response else None,
        "cached": response.cached if response else None,
        "truncated": response.truncated if response else None,
        **{f"time_{k}": float(v) for k, v in state.timings.items()},
    }


def _inference_fields(state: CellRecord | TurnRecord) -> dict[str, Any]:
    """Layer L2c of a cell or turn: what was reported (read by the extractor that scored it)
    and how it was scored."""
    scores = state.scores
    read = state.judge if scores is not None and scores.extractor == "judge" else state.extraction
    ci = read.ci if read is not None else None
    return {
        "reported_se": _num(read.se) if read else None,
        "reported_ci_low": _num(ci[0]) if ci else None,
        "reported_ci_high": _num(ci[1]) if ci else None,
        "se_source": read.se_source if read else None,
        "se_tier": scores.se_tier if scores else None,
        "se_variant": scores.se_variant if scores else None,
        "se_ratio": _num(scores.se_ratio) if scores else None,
        "ci_covers": scores.ci_covers if scores else None,
        "significance_agrees": scores.significance_agrees if scores else None,
        "L2c": scores.L2c if scores else None,
    }


def _key_fields(record: CellRecord, run: Mapping[str, Any]) -> dict[str, Any]:
    inference = record.inference
    return {
        **run,
        "scenario_id": record.key.scenario_id,
        "model": record.key.model,
        "language": record.key.language,
        "sample": record.key.sample,
        "turns": len(record.turn_states()),
        "family": record.family,
        "difficulty": record.difficulty,
        "true_effect": record.beta,
        "canonical": record.canonical,
        "canonical_se": inference.ses[inference.reference] if inference else None,
        "se_reference": inference.reference if inference else None,
        "canonical_ses": json.dumps(inference.ses, sort_keys=True) if inference else None,
    }


def export_rows(
    records: Iterable[CellRecord], meta: RunMeta
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(cell rows, turn rows)`` of a run, in the store's cell order."""
    run = _run_fields(meta)
    cells: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for record in records:
        key = _key_fields(record, run)
        states = record.turn_states()
        cells.append({**key, "turn": len(states), **_state_fields(record)})
        turns += [{**key, "turn": t.turn, **_state_fields(t)} for t in states]
    return cells, turns


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    timings = sorted({k for row in rows for k in row if k.startswith("time_")})
    return [*COLUMNS, *((name, "float64") for name in timings)]


def _arrow_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> Any:
    import pyarrow as pa

    candidate = pa.struct([("value", pa.float64()), ("rule", pa.string()), ("line", pa.int64())])
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "candidates": pa.list_(candidate),
    }
    schema = pa.schema([(name, types[kind]) for name, kind in columns])
    full = [{name: row.get(name) for name, _ in columns} for row in rows]
    return pa.Table.from_pylist(full, schema=schema)


def write_table(rows: Sequence[Mapping[str, Any]], path: Path, fmt: ExportFormat) -> Path:
    """Write ``rows`` to ``path`` as Parquet, CSV (candidates as JSON text) or JSON lines."""
    columns = _columns(rows)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(_arrow_table(rows, columns), path)
    elif fmt == "jsonl":
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            for row in rows:
                line = {name: row.get(name) for name, _ in columns}
                handle.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")
    elif fmt == "csv":
        frame = _arrow_table(rows, columns).to_pandas()
        frame["candidates"] = [
            json.dumps([dict(c) for c in value], ensure_ascii=False)
            for value in frame["candidates"]
        ]
        frame.to_csv(path, index=False, lineterminator="\n")
    else:
        raise ValueError(f"unknown export format {fmt!r}")
    return path


def write_export(
    records: Iterable[CellRecord],
    meta: RunMeta,
    out_dir: Path,
    fmt: ExportFormat,
) -> dict[str, Path]:
    """Write ``cells.<fmt>`` and ``turns.<fmt>`` under ``out_dir``; returns their paths."""
    cells, turns = export_rows(records, meta)
    out_dir.mkdir(parents=True, exist_ok=True)
    return {
        "cells": write_table(cells, out_dir / f"cells.{fmt}", fmt),
        "turns": write_table(turns, out_dir / f"turns.{fmt}", fmt),
    }

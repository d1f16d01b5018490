"""An Inspect log as a CausalVerify run folder (``causalverify import-inspect LOG --out DIR``).

Each sample scored by :func:`causalverify.inspect_eval.causalverify_scorer` carries its cell
record in the score's metadata; those records are stored in a new run store with metadata that
says where they came from, so ``report``, ``analyze`` and ``freeze`` read it like a native run.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from causalverify.errors import StoreError
from causalverify.records import CellRecord
from causalverify.runner.meta import META_SCHEMA
from causalverify.store import RunStore

SCORER = "causalverify_scorer"


def _records(log: Any) -> list[CellRecord]:
    out = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get(SCORER)
        cell = (score.metadata or {}).get("causalverify_cell") if score is not None else None
        if cell is not None:
            out.append(CellRecord.model_validate(cell))
    return out


def log_to_run(log_path: Path, out_dir: Path) -> Path:
    """Write the cells of the Inspect log at ``log_path`` into a new run folder ``out_dir``.

    Raises
    ------
    StoreError
        If the log cannot be read (not a log, or cut short), holds no CausalVerify-scored
        sample, or ``out_dir`` already holds a run.
    """
    try:
        log = read_eval_log(str(log_path))
        records = sorted(_records(log), key=lambda r: r.key.as_tuple())
    except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile) as exc:
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise StoreError(
            f"{log_path} is not a readable Inspect log ({type(exc).__name__}"
            f"{': ' + reason if reason else ''}); a log cut short or still being written cannot "
            "be imported: import the finished log (`inspect log list` shows them)"
        ) from exc
    if not records:
        raise StoreError(f"{log_path} holds no sample scored by the causalverify scorer")
    if (out_dir / "run.sqlite").exists():
        raise StoreError(f"{out_dir} already holds a run; choose a new folder")
    first = records[0]
    meta = {
        "schema": META_SCHEMA,
        "source": {"inspect_log": str(Path(log_path).resolve()), "task": log.eval.task},
        "models": sorted({r.key.model for r in records}),
        "languages": sorted({r.key.language for r in records}),
        "samples": 1 + max(r.key.sample for r in records),
        "protocol": first.protocol,
        "profile": first.scores.profile if first.scores else "default",
        "tolerance": first.scores.tolerance if first.scores else 0.5,
        "extractor": first.scores.extractor if first.scores else "deterministic",
        "limits": None,
        "unsafe": False,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    with RunStore.open(out_dir, create=True) as store:
        store.put_cells(records, meta=meta)
    return out_dir

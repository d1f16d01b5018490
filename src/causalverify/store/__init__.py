"""The SQLite run store and the per-cell table built from it."""

from __future__ import annotations

from causalverify.records import (
    CellKey,
    CellRecord,
    CellStatus,
    CodeRecord,
    ExtractionRecord,
    Message,
    ModelResponse,
    ScoreRecord,
)
from causalverify.store.calibration import CONFIDENCE_TYPES, CalibrationRecord
from causalverify.store.compare import stable_view
from causalverify.store.sqlite import STORE_FILE, RunStore
from causalverify.store.table import BOUND_COLUMNS, COLUMNS, INFERENCE_COLUMNS, cells_frame

__all__ = [
    "BOUND_COLUMNS",
    "COLUMNS",
    "CONFIDENCE_TYPES",
    "INFERENCE_COLUMNS",
    "STORE_FILE",
    "CalibrationRecord",
    "CellKey",
    "CellRecord",
    "CellStatus",
    "CodeRecord",
    "ExtractionRecord",
    "Message",
    "ModelResponse",
    "RunStore",
    "ScoreRecord",
    "cells_frame",
    "stable_view",
]

"""The internal per-cell frame that every analysis reads, and loaders that produce it.

Two sources are normalised to one frame: the run store's ``cells_frame`` (already in the internal
column names) and the published per-cell table ``l2b_plus_scores_canonical_judge_v2.csv``, whose
headline flag ``L2b_plus_v2`` and error ``rel_error_v2`` become ``L2b_plus`` and ``rel_error``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from causalverify.errors import CellsFormatError as CellsFormatError
from causalverify.families import PUBLISHED_NAME, parse_family
from causalverify.records import status_from_layers
from causalverify.store.table import COLUMNS, INFERENCE_COLUMNS, INT_COLUMNS

LAYERS: Final[tuple[str, ...]] = ("L1", "L2a", "L2b", "L2b_plus")
#: layers whose model ranking is compared with the L2b+ ranking
COMPARED_LAYERS: Final[tuple[str, ...]] = ("L1", "L2a", "L2b")
#: below this absolute canonical value a cell cannot be scored (relative error is meaningless)
UNSCOREABLE_ABS: Final[float] = 1e-9

Unit = Literal["model", "model_language"]
PublishedFormat = Literal["causalverify-2026"]

#: internal column order (the published names where they apply): the run store's table layout
CELL_COLUMNS: Final[tuple[str, ...]] = COLUMNS
_REQUIRED: Final[tuple[str, ...]] = ("scenario_id", "method", "model", "L1", "L2a", "L2b")
_TEXT_COLUMNS: Final[tuple[str, ...]] = (
    "difficulty",
    "language",
    "status",
    "exec_status",
    "missing_package",
    "extraction_rule",
    "matched_conversion",
)
_FLOAT_COLUMNS: Final[tuple[str, ...]] = (
    "dgp_effect",
    "baseline_effect",
    "estimated",
    "rel_error",
    "judge_effect",
    "fitted_effect",
    "cost_usd",
)
_INFERENCE_TEXT: Final[tuple[str, ...]] = ("se_tier", "se_variant")
_MISSING_PACKAGE = re.compile(
    r"there is no package called\s*[‘'\"]([A-Za-z0-9._]+)[’'\"]"
    r"|No module named\s*[‘'\"]([A-Za-z0-9_.]+)[’'\"]"
)


def _flag(series: pd.Series) -> pd.Series:
    """Read a 0/1 (or True/False, "TRUE"/"FALSE") column as float with NaN for missing."""
    mapping = {"true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0}
    if series.dtype == object or pd.api.types.is_string_dtype(series):
        text = series.astype("string").str.strip().str.lower()
        return text.map(mapping, na_action="ignore").astype(float)
    return pd.to_numeric(series, errors="coerce").astype(float)


def _derive_status(df: pd.DataFrame) -> pd.Series:
    """A cell status from the layer flags, for tables that do not carry one."""
    flags = [(df[col] == 1).tolist() for col in ("L1", "L2a", "L2b", "L2b_plus", "unscoreable")]
    missing = (df["missing_package"] != "").tolist()
    estimated = df["estimated"].notna().tolist()
    status = [
        status_from_layers(
            L1=bool(l1),
            L2a=bool(l2a),
            L2b=bool(l2b),
            L2b_plus=bool(plus),
            unscoreable=bool(unscoreable),
            missing_package=bool(package),
            estimated=bool(known),
        )
        for l1, l2a, l2b, plus, unscoreable, package, known in zip(
            *flags, missing, estimated, strict=True
        )
    ]
    return pd.Series(status, index=df.index, dtype=object)


def prepare_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Validate a per-cell frame and return it in the internal layout.

    Parameters
    ----------
    frame
        One row per cell with at least ``scenario_id``, ``method``, ``model``, ``L1``, ``L2a`` and
        ``L2b``. Missing optional columns get neutral defaults; ``method`` may use either spelling.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CELL_COLUMNS` in that order, rows sorted by scenario, model, language and
        sample, with a fresh integer index.

    Raises
    ------
    CellsFormatError
        If a required column is missing or a family name is unknown.
    """
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise CellsFormatError(f"per-cell table lacks required column(s): {', '.join(missing)}")
    df = frame.copy()
    try:
        df["method"] = [PUBLISHED_NAME[parse_family(str(m))] for m in df["method"]]
    except ValueError as exc:
        raise CellsFormatError(f"per-cell table: {exc}") from exc
    df["scenario_id"] = df["scenario_id"].astype(str)
    df["model"] = df["model"].astype(str)
    for col in _TEXT_COLUMNS:
        default = "r" if col == "language" else ""
        values = df[col] if col in df.columns else pd.Series(default, index=df.index)
        df[col] = values.astype(object).where(values.notna(), default).astype(str)
    for col in _FLOAT_COLUMNS:
        values = df[col] if col in df.columns else pd.Series(np.nan, index=df.index)
        df[col] = pd.to_numeric(values, errors="coerce").astype(float)
    for col in ("L1", "L2a", "L2b", "L2b_plus", "unscoreable", "extraction_disagree", "truncated"):
        df[col] = _flag(df[col]) if col in df.columns else np.nan
    near_zero = df["baseline_effect"].abs() < UNSCOREABLE_ABS
    flagged = df["unscoreable"].fillna(0) == 1
    df["unscoreable"] = (flagged | near_zero).astype(int)
    for col in ("L1", "L2a", "L2b"):
        df[col] = df[col].fillna(0).astype(int)
    # A cell that did not execute fails L2b+; only unscoreable cells have no L2b+ value.
    plus = df["L2b_plus"].where(df["L2b"] == 1, 0.0).fillna(0.0)
    df["L2b_plus"] = plus.where(df["unscoreable"] == 0, np.nan)
    if (df["status"] == "").all():
        df["status"] = _derive_status(df)
    for col in INT_COLUMNS:
        if col not in ("L1", "L2a", "L2b", "unscoreable"):
            values = df[col] if col in df.columns else pd.Series(0, index=df.index)
            df[col] = pd.to_numeric(values, errors="coerce").fillna(0).astype(int)
    # optional L2b+ bounds of cells the extractor left undecided (kept only when present)
    bounds = [c for c in ("L2b_plus_lower", "L2b_plus_upper") if c in df.columns]
    for col in bounds:
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    # optional layer L2c (docs/SCORING.md; kept only when present): tier and variant as text
    # ("" when not assessed), the rest as numbers (NaN when not assessed)
    inference = [c for c in INFERENCE_COLUMNS if c in df.columns]
    for col in inference:
        if col in _INFERENCE_TEXT:
            df[col] = df[col].astype(object).where(df[col].notna(), "").astype(str)
        else:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df = df.loc[:, [*CELL_COLUMNS, *bounds, *inference]]
    df = df.sort_values(["scenario_id", "model", "language", "sample"], kind="mergesort")
    return df.reset_index(drop=True)


def _published_missing_package(excerpt: pd.Series) -> pd.Series:
    """The package named in an R/Python "not installed" error excerpt, or ""."""
    found = excerpt.astype(str).str.extract(_MISSING_PACKAGE)
    return found[0].fillna(found[1]).fillna("").astype(str)


def _column(frame: pd.DataFrame, name: str, default: object) -> pd.Series:
    """``frame[name]``, or a column filled with ``default`` when absent."""
    if name in frame.columns:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index, dtype=object)


def load_published_cells(path: Path, *, fmt: PublishedFormat = "causalverify-2026") -> pd.DataFrame:
    """Read a published per-cell table and normalise it to the internal frame.

    Parameters
    ----------
    path
        CSV in the ``l2b_plus_scores_canonical_judge_v2.csv`` layout: one row per (scenario,
        model), headline flag ``L2b_plus_v2``, its relative error ``rel_error_v2``, the canonical
        estimate ``baseline_effect``.
    fmt
        The published format; only ``"causalverify-2026"`` exists.

    Returns
    -------
    pandas.DataFrame
        The internal frame (see :func:`prepare_cells`). ``estimated`` is the judge's effect when
        one was recorded, else the regex estimate, because the headline score uses the judge.
        Language is ``"r"`` (the release ran R only); difficulty is empty when absent.

    Raises
    ------
    CellsFormatError
        If the file cannot be read or lacks the headline columns.
    """
    if fmt != "causalverify-2026":
        raise CellsFormatError(f"unknown per-cell table format {fmt!r}")
    try:
        raw = pd.read_csv(path, dtype={"scenario_id": str, "model": str})
    except (OSError, ValueError) as exc:
        raise CellsFormatError(f"cannot read per-cell table {path}: {exc}") from exc
    needed = ("scenario_id", "method", "model", "L1", "L2a", "L2b", "L2b_plus_v2", "rel_error_v2")
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise CellsFormatError(
            f"{path} is not a causalverify-2026 per-cell table: missing {', '.join(missing)}"
        )
    judge = pd.to_numeric(_column(raw, "judge_effect", np.nan), errors="coerce")
    regex = pd.to_numeric(_column(raw, "estimated", np.nan), errors="coerce")
    excerpt = _column(raw, "err_excerpt", "")
    frame = pd.DataFrame(
        {
            "scenario_id": raw["scenario_id"],
            "method": raw["method"],
            "difficulty": _column(raw, "difficulty", ""),
            "model": raw["model"],
            "language": "r",
            "sample": 0,
            "dgp_effect": _column(raw, "dgp_effect", np.nan),
            "baseline_effect": _column(raw, "baseline_effect", np.nan),
            "L1": raw["L1"],
            "L2a": raw["L2a"],
            "L2b": raw["L2b"],
            "estimated": judge.fillna(regex),
            "rel_error": raw["rel_error_v2"],
            "L2b_plus": raw["L2b_plus_v2"],
            "judge_effect": judge,
            "missing_package": _published_missing_package(excerpt.fillna("")),
            "matched_conversion": _column(raw, "es_window_match", ""),
        }
    )
    flags = frame[["L1", "L2a", "L2b"]].apply(_flag).fillna(0)
    frame["exec_status"] = np.where((flags["L2a"] == 1) & (flags["L2b"] == 0), "error", "")
    frame.loc[flags["L2b"] == 1, "exec_status"] = "ok"
    return prepare_cells(frame)


def add_unit(cells: pd.DataFrame, unit: Unit) -> pd.DataFrame:
    """Return ``cells`` with a ``unit`` column: the thing that is ranked.

    ``"model"`` pools every language and sample of a model; ``"model_language"`` ranks each
    (model, language) pair separately, labelled ``"<model> (<language>)"``.
    """
    out = cells.copy()
    if unit == "model":
        out["unit"] = out["model"]
    elif unit == "model_language":
        out["unit"] = out["model"] + " (" + out["language"] + ")"
    else:
        raise ValueError(f"unknown ranking unit {unit!r}")
    return out

"""Calibration metrics per protocol, model and confidence type, as a JSON-ready summary.

The frame joins every calibration row with its cell's L2b+ result (``cells_frame``). Cells whose
L2b+ is undefined (unscoreable) are left out of the metrics; every other elicited cell counts, a
missing confidence included (it enters the missingness test and the missing counts, never
silently disappears).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from causalverify.calibration import metrics
from causalverify.store import RunStore, cells_frame
from causalverify.store.calibration import CONFIDENCE_TYPES, CalibrationRecord

SCHEMA: Final[str] = "causalverify.calibration/1"
DEFAULT_SEED: Final[int] = 20260
N_RESAMPLES: Final[int] = 1000
KEY_COLUMNS: Final[tuple[str, ...]] = ("scenario_id", "model", "language", "sample")


def calibration_frame(cells: pd.DataFrame, records: Iterable[CalibrationRecord]) -> pd.DataFrame:
    """One row per calibration record, with the cell's correctness.

    Parameters
    ----------
    cells
        The per-cell frame (:func:`causalverify.store.cells_frame`).
    records
        Calibration records, e.g. ``RunStore.iter_calibration()``.

    Returns
    -------
    pandas.DataFrame
        Key columns, ``method``, ``protocol``, ``status``, ``correct`` (1/0, NaN when the cell is
        unscoreable or absent), and per confidence type ``<type>_confidence`` (NaN when missing)
        and ``<type>_missing`` (the reason, or None). Sorted by protocol then key.
    """
    rows = []
    for record in records:
        row: dict[str, Any] = dict(zip(KEY_COLUMNS, record.key.as_tuple(), strict=True))
        row.update(protocol=record.protocol, status=record.status)
        for kind in CONFIDENCE_TYPES:
            value = record.confidence(kind)
            row[f"{kind}_confidence"] = np.nan if value is None else float(value)
            row[f"{kind}_missing"] = record.missing.get(kind, "missing") if value is None else None
        rows.append(row)
    columns = [*KEY_COLUMNS, "protocol", "status"]
    columns += [f"{k}_{s}" for k in CONFIDENCE_TYPES for s in ("confidence", "missing")]
    frame = pd.DataFrame(rows, columns=columns)
    truth = cells[[*KEY_COLUMNS, "method", "L2b_plus"]].rename(columns={"L2b_plus": "correct"})
    frame = frame.merge(truth, on=list(KEY_COLUMNS), how="left", validate="many_to_one")
    frame["correct"] = frame["correct"].astype("float64")
    frame = frame.sort_values(["protocol", *KEY_COLUMNS], kind="stable").reset_index(drop=True)
    return frame


def load_calibration(run_dir: Path) -> pd.DataFrame | None:
    """The calibration frame of a stored run, or None when the run holds no calibration rows."""
    with RunStore.open(run_dir) as store:
        records = list(store.iter_calibration())
        if not records:
            return None
        return calibration_frame(cells_frame(store.iter_cells()), records)


def _stream_seed(seed: int, protocol: str, model: str, kind: str) -> np.random.Generator:
    """A generator for one (protocol, model, type), independent of which others exist."""
    digest = hashlib.sha256(f"{protocol}\x00{model}\x00{kind}".encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([seed, *words]))


def type_metrics(
    confidence: np.ndarray, correct: np.ndarray, missing_reasons: list[Any], *,
    rng: np.random.Generator, n_resamples: int = N_RESAMPLES,
) -> dict[str, Any]:  # fmt: skip
    """Every metric of one model and confidence type (cells with a defined L2b+ only).

    Parameters
    ----------
    confidence
        Stated confidences, NaN where missing.
    correct
        0/1 L2b+ of the same cells.
    missing_reasons
        The reason per cell (None where the confidence is present).
    rng
        Generator of the ECE bootstrap.
    n_resamples
        Bootstrap resamples.
    """
    present = ~np.isnan(confidence)
    conf, corr = confidence[present], correct[present].astype(np.int64)
    reasons = Counter(r.split(":")[0].strip() for r in missing_reasons if isinstance(r, str))
    ci = metrics.ece_bootstrap(conf, corr, rng=rng, n_resamples=n_resamples)
    return {
        "n": int(conf.size),
        "n_missing": int((~present).sum()),
        "missing_reasons": dict(sorted(reasons.items())),
        "accuracy": float(corr.mean()) if conf.size else None,
        "mean_confidence": float(conf.mean()) if conf.size else None,
        "ece": metrics.ece(conf, corr),
        "ece_ci": list(ci) if ci is not None else None,
        "confidence_gap": metrics.confidence_gap(conf, corr),
        "p_high_given_wrong": metrics.p_confident_when_wrong(conf, corr),
        "brier": metrics.brier(conf, corr),
        "auroc": metrics.auroc(conf, corr),
        "missingness": asdict(metrics.missingness_test(~present, correct.astype(np.int64))),
        "bins": [asdict(b) for b in metrics.reliability_bins(conf, corr)],
    }


def _model_summary(
    rows: pd.DataFrame, *, protocol: str, model: str, seed: int, n_resamples: int
) -> dict[str, Any]:
    scoreable = rows[rows["correct"].notna()]
    correct = scoreable["correct"].to_numpy(dtype=np.float64)
    types = {
        kind: type_metrics(
            scoreable[f"{kind}_confidence"].to_numpy(dtype=np.float64),
            correct,
            list(scoreable[f"{kind}_missing"]),
            rng=_stream_seed(seed, protocol, model, kind),
            n_resamples=n_resamples,
        )
        for kind in CONFIDENCE_TYPES
    }
    return {
        "n_elicited": len(rows),
        "n_scoreable": len(scoreable),
        "accuracy": float(correct.mean()) if correct.size else None,
        "statuses": dict(sorted(Counter(rows["status"]).items())),
        "types": types,
    }


def summarize_calibration(
    frame: pd.DataFrame,
    *,
    seed: int = DEFAULT_SEED,
    n_resamples: int = N_RESAMPLES,
    models: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The ``calibration`` section of ``summary.json``.

    Parameters
    ----------
    frame
        :func:`calibration_frame` output.
    seed
        Base seed of the bootstraps; each (protocol, model, type) derives its own stream, so a
        model's interval does not depend on which other models are in the run.
    n_resamples
        ECE bootstrap resamples.
    models
        Report order of the models (default: sorted).

    Returns
    -------
    dict
        ``{"schema", "target", "bins", "high_confidence", "seed", "n_resamples",
        "confidence_types", "protocols": {protocol: {"model_order": [...],
        "models": {model: {...}}}}}``.
    """
    order = list(models) if models is not None else sorted(frame["model"].unique())
    protocols: dict[str, Any] = {}
    for protocol in sorted(frame["protocol"].unique()):
        block = frame[frame["protocol"] == protocol]
        present = [m for m in order if m in set(block["model"])]
        protocols[str(protocol)] = {
            "model_order": present,
            "models": {
                m: _model_summary(
                    block[block["model"] == m],
                    protocol=str(protocol),
                    model=m,
                    seed=seed,
                    n_resamples=n_resamples,
                )
                for m in present
            },
        }
    return {
        "schema": SCHEMA,
        "target": "L2b_plus",
        "bins": metrics.N_BINS,
        "high_confidence": metrics.HIGH_CONFIDENCE,
        "seed": seed,
        "n_resamples": n_resamples,
        "confidence_types": list(CONFIDENCE_TYPES),
        "protocols": protocols,
    }

"""``write_report``: summary.json, leaderboard.md, cells.csv, figures and index.html."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pandas as pd

from causalverify.analysis import (
    DEFAULT_SEED,
    CiMethod,
    IntervalSettings,
    Unit,
    add_unit,
    analyze_cells,
    dumps_summary,
    prepare_cells,
)
from causalverify.analysis._summary import N_RESAMPLES
from causalverify.progress import StepCallback, tell
from causalverify.records import CellRecord
from causalverify.report._figures import write_figures
from causalverify.report._render import render_html, render_markdown
from causalverify.report.calibration import calibration_summary, write_calibration_figures
from causalverify.report.experiment_a import experiment_a_entry, write_experiment_a_figures
from causalverify.report.explorer import write_explorer
from causalverify.report.repair import repair_entry, write_repair_figures
from causalverify.store import RunStore, cells_frame

DEFAULT_TITLE: Final[str] = "CausalVerify report"
#: run metadata copied into the summary (values that do not depend on the machine)
META_KEYS: Final[tuple[str, ...]] = (
    "suite",
    "suite_seed",
    "models",
    "languages",
    "samples",
    "protocol",
    "profile",
    "tolerance",
    "extractor",
    "rescored",
    "mode",
)


def load_run_cells(run_dir: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The per-cell frame and metadata of a stored run (a frozen release is read by
    :func:`causalverify.release.load_cells`, one layer up).

    Raises
    ------
    StoreError
        If ``run_dir`` holds no run store.
    """
    with RunStore.open(run_dir) as store:
        return cells_frame(store.iter_cells()), store.meta()


def _load_run(run_dir: Path) -> tuple[pd.DataFrame, dict[str, Any], list[CellRecord]]:
    """:func:`load_run_cells`, and the records themselves (repair mode reads their turns)."""
    with RunStore.open(run_dir) as store:
        records = list(store.iter_cells())
        return cells_frame(records), store.meta(), records


def write_report(
    source: Path | pd.DataFrame,
    out_dir: Path,
    *,
    seed: int = DEFAULT_SEED,
    title: str = DEFAULT_TITLE,
    unit: Unit = "model",
    n_resamples: int = N_RESAMPLES,
    meta: Mapping[str, Any] | None = None,
    progress: StepCallback | None = None,
    ci: CiMethod = "cluster",
) -> Path:
    """Write the full report for a run folder or a per-cell frame.

    Parameters
    ----------
    source
        A run folder (read through the run store) or a per-cell frame.
    out_dir
        Output folder; created if needed. Existing report files are overwritten.
    seed
        Bootstrap seed.
    title
        Report title (also stored in ``summary.json``).
    unit
        Ranked unit: ``"model"`` (languages pooled) or ``"model_language"``.
    n_resamples
        Bootstrap resamples.
    meta
        Run metadata; for a run folder it is read from the store. Only :data:`META_KEYS` are kept.
    progress
        Told each step as it starts (see :mod:`causalverify.progress`).
    ci
        Interval of every rate: ``"cluster"``, ``"bootstrap"`` or ``"wilson"`` (see
        :func:`causalverify.analysis.analyze_cells`).

    Returns
    -------
    pathlib.Path
        The path of ``index.html``. Beside it: ``summary.json``, ``leaderboard.md``,
        ``cells.csv`` and ``figures/*.png``, all byte-identical for identical inputs.
    """
    tell(progress, "reading the cells")
    records: list[CellRecord] = []
    if isinstance(source, pd.DataFrame):
        frame = source
    else:
        frame, stored_meta, records = _load_run(Path(source))
        meta = stored_meta if meta is None else meta
    cells = prepare_cells(frame)
    tell(progress, f"analysing (bootstrap, {n_resamples} resamples)")
    summary = analyze_cells(cells, seed=seed, unit=unit, n_resamples=n_resamples, ci=ci)
    settings = IntervalSettings(method=ci, seed=seed, n_resamples=n_resamples)
    suite = (meta or {}).get("suite")
    if title == DEFAULT_TITLE and isinstance(suite, str) and suite not in ("default", "smoke"):
        title = f"{title}: the {suite} suite"  # the report names a suite other than the default
    summary["title"] = title
    summary["run"] = {
        k: meta[k]
        for k in META_KEYS
        if meta is not None and k in meta and (meta[k] is not None or k != "rescored")
    }
    if meta is not None and "schema" in meta:  # a run store: say single mode too
        mode = meta.get("mode")
        summary["run"]["mode"] = mode if isinstance(mode, dict) else {"name": "single"}
    if not isinstance(source, pd.DataFrame):  # calibration rows live in the run store
        tell(progress, "calibration and Experiment A")
        models = (meta or {}).get("models")
        calibration = calibration_summary(
            Path(source), seed=seed, n_resamples=n_resamples, models=models
        )
        if calibration is not None:
            summary["calibration"] = calibration
        repair = repair_entry(records, meta, settings=settings)
        if repair is not None:  # a repair-mode run
            summary["repair"] = repair
        experiment_a = experiment_a_entry(Path(source), frame)
        if experiment_a is not None:  # papers.sqlite beside the run store
            summary["experiment_a"] = experiment_a
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_text(out_dir / "summary.json", dumps_summary(summary))
    summary = _reload(out_dir / "summary.json")
    cells.to_csv(out_dir / "cells.csv", index=False, lineterminator="\n")
    tell(progress, "drawing the figures")
    figures = write_figures(summary, add_unit(cells, unit), out_dir / "figures")
    figures.update(write_calibration_figures(summary, out_dir / "figures"))
    figures.update(write_repair_figures(summary, out_dir / "figures"))
    figures.update(write_experiment_a_figures(summary, out_dir / "figures"))
    if records:
        tell(progress, "writing the cell explorer")
        write_explorer(records, out_dir, unit)
    tell(progress, "writing leaderboard.md and index.html")
    _write_text(out_dir / "leaderboard.md", render_markdown(summary, title))
    index = out_dir / "index.html"
    _write_text(index, render_html(summary, title, figures, explorer=bool(records)))
    return index


def _reload(path: Path) -> dict[str, Any]:
    """Read the written summary back, so every rendered number is the one in the file."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")

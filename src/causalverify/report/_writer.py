"""``write_report``: summary.json, leaderboard.md, cells.csv, figures and index.html."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
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
    json_ready,
    prepare_cells,
)
from causalverify.analysis._summary import N_RESAMPLES
from causalverify.progress import StepCallback, tell
from causalverify.records import CellRecord, RunMeta, Summary
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


def load_run_cells(run_dir: Path) -> tuple[pd.DataFrame, RunMeta]:
    """The per-cell frame and metadata of a stored run (a frozen release is read by
    :func:`causalverify.release.load_cells`, one layer up).

    Raises
    ------
    StoreError
        If ``run_dir`` holds no run store.
    """
    with RunStore.open(run_dir) as store:
        return cells_frame(store.iter_cells()), store.run_meta()


@dataclass(frozen=True)
class ReportSource:
    """The one source of a report: the per-cell frame, the run metadata, the cell records (the
    explorer and the repair section read them) and the run folder (its side tables: calibration
    rows, Experiment A). A published per-cell table is a frame alone.

    ``report`` and ``analyze`` (with or without ``--out``) build it the same way, so the same
    cells give the same summary whichever command wrote it.
    """

    frame: pd.DataFrame
    meta: RunMeta | None = None
    records: tuple[CellRecord, ...] = ()
    run_dir: Path | None = None

    @classmethod
    def of_run(cls, run_dir: Path, *, exclude_models: Sequence[str] = ()) -> ReportSource:
        """A run folder's cells, metadata and records; ``exclude_models`` are left out of all
        three (and of the side tables, which are read for the run's models).

        Raises
        ------
        StoreError
            If ``run_dir`` holds no run store.
        """
        with RunStore.open(run_dir) as store:
            records = tuple(store.iter_cells())
            meta = store.run_meta()
        return cls(cells_frame(records), meta, records, Path(run_dir)).without(exclude_models)

    def without(self, models: Sequence[str]) -> ReportSource:
        """The source without the cells (and records, and run metadata models) of ``models``."""
        if not models:
            return self
        excluded = set(models)
        frame = self.frame[~self.frame["model"].astype(str).isin(excluded)]
        records = tuple(r for r in self.records if r.key.model not in excluded)
        meta = self.meta
        if meta is not None and meta.has("models"):
            kept = [m for m in meta.models if m not in excluded]
            meta = RunMeta.of({**meta.stored(), "models": kept})
        return ReportSource(frame, meta, records, self.run_dir)

    @classmethod
    def of(cls, source: ReportSource | Path | pd.DataFrame) -> ReportSource:
        """``source`` itself, a run folder's (:meth:`of_run`) or a per-cell frame's."""
        if isinstance(source, ReportSource):
            return source
        if isinstance(source, pd.DataFrame):
            return cls(source)
        return cls.of_run(Path(source))


def build_summary(
    source: ReportSource,
    *,
    seed: int = DEFAULT_SEED,
    title: str = DEFAULT_TITLE,
    unit: Unit = "model",
    n_resamples: int = N_RESAMPLES,
    progress: StepCallback | None = None,
    ci: CiMethod = "cluster",
) -> Summary:
    """The summary of ``source``: every analysis of its cells, the run's settings and the side
    sections its run folder holds (calibration, repair, Experiment A). The arguments are
    :func:`write_report`'s."""
    tell(progress, f"analysing (bootstrap, {n_resamples} resamples)")
    cells = prepare_cells(source.frame)
    entries = analyze_cells(cells, seed=seed, unit=unit, n_resamples=n_resamples, ci=ci)
    settings = IntervalSettings(method=ci, seed=seed, n_resamples=n_resamples)
    meta = source.meta
    suite = meta.suite if meta is not None else None
    if title == DEFAULT_TITLE and suite is not None and suite not in ("default", "smoke"):
        title = f"{title}: the {suite} suite"  # the report names a suite other than the default
    entries["title"] = title
    entries["run"] = _run_settings(meta)
    if source.run_dir is not None:  # calibration rows and Experiment A live in the run folder
        tell(progress, "calibration and Experiment A")
        calibration = calibration_summary(
            source.run_dir,
            seed=seed,
            n_resamples=n_resamples,
            models=meta.models if meta is not None and meta.has("models") else None,
        )
        if calibration is not None:
            entries["calibration"] = calibration
        experiment_a = experiment_a_entry(source.run_dir, source.frame)
        if experiment_a is not None:  # papers.sqlite beside the run store
            entries["experiment_a"] = experiment_a
    repair = repair_entry(source.records, meta, settings=settings)
    if repair is not None:  # a repair-mode run
        entries["repair"] = repair
    return Summary.of(json_ready(entries))


def _run_settings(meta: RunMeta | None) -> dict[str, Any]:
    """``summary.json["run"]``: the :data:`META_KEYS` the run recorded (a rescoring only when
    it differed), and its mode (``single`` when none is recorded)."""
    if meta is None:
        return {}
    stored = meta.stored()
    run = {
        k: stored[k]
        for k in META_KEYS
        if k in stored and (stored[k] is not None or k != "rescored")
    }
    if meta.schema_version is not None:  # a run store: say single mode too
        run["mode"] = meta.mode_or_single.model_dump(mode="json", exclude_unset=True)
    return run


def write_report(
    source: ReportSource | Path | pd.DataFrame,
    out_dir: Path,
    *,
    seed: int = DEFAULT_SEED,
    title: str = DEFAULT_TITLE,
    unit: Unit = "model",
    n_resamples: int = N_RESAMPLES,
    progress: StepCallback | None = None,
    ci: CiMethod = "cluster",
) -> Path:
    """Write the full report of one cells source.

    Parameters
    ----------
    source
        A :class:`ReportSource`, a run folder (:meth:`ReportSource.of_run`) or a per-cell frame
        (no metadata, records or side tables).
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
    source = ReportSource.of(source)
    summary = build_summary(
        source,
        seed=seed,
        title=title,
        unit=unit,
        n_resamples=n_resamples,
        progress=progress,
        ci=ci,
    )
    cells = prepare_cells(source.frame)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_text(out_dir / "summary.json", dumps_summary(summary.stored()))
    summary = _reload(out_dir / "summary.json")
    cells.to_csv(out_dir / "cells.csv", index=False, lineterminator="\n")
    tell(progress, "drawing the figures")
    figures = write_figures(summary, add_unit(cells, unit), out_dir / "figures")
    figures.update(write_calibration_figures(summary, out_dir / "figures"))
    figures.update(write_repair_figures(summary, out_dir / "figures"))
    figures.update(write_experiment_a_figures(summary.experiment_a, out_dir / "figures"))
    if source.records:
        tell(progress, "writing the cell explorer")
        write_explorer(list(source.records), out_dir, unit)
    tell(progress, "writing leaderboard.md and index.html")
    _write_text(out_dir / "leaderboard.md", render_markdown(summary, summary.title or title))
    index = out_dir / "index.html"
    _write_text(
        index,
        render_html(summary, summary.title or title, figures, explorer=bool(source.records)),
    )
    return index


def _reload(path: Path) -> Summary:
    """Read the written summary back, so every rendered number is the one in the file."""
    return Summary.of(json.loads(path.read_text(encoding="utf-8")))


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")

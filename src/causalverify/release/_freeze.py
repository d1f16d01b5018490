"""``freeze_run``: write a self-checking release folder from a run folder."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from causalverify import __version__
from causalverify.analysis import DEFAULT_SEED
from causalverify.analysis._summary import N_RESAMPLES
from causalverify.errors import StoreError, SuiteError
from causalverify.progress import StepCallback, tell
from causalverify.records import CellRecord, RunMeta
from causalverify.release._croissant import build_croissant
from causalverify.release._datasheet import render_datasheet
from causalverify.release._environment import build_environment
from causalverify.release._hashes import write_sums
from causalverify.release._layout import (
    CROISSANT_FILE,
    DATASHEET_FILE,
    ENVIRONMENT_FILE,
    RELEASE_FILE,
    RELEASE_SCHEMA,
    REPORT_DIR,
    SCENARIOS_FILE,
    SCORES_FILE,
    SUITE_DIR,
    SUMS_FILE,
    dumps_json,
    is_release,
    release_files,
    sha256_file,
    write_text,
)
from causalverify.release._records import write_records
from causalverify.release._scrub import SERVER, host_replacements, scrub
from causalverify.release._tables import SIDE_DATABASES, export_tables
from causalverify.report import DEFAULT_TITLE, write_report
from causalverify.runner.meta import suite_fingerprint
from causalverify.runner.rescore import write_scores_csv
from causalverify.scenarios import load_suite
from causalverify.scenarios.model import Scenario
from causalverify.store import RunStore, cells_frame
from causalverify.store.sqlite import STORE_FILE

Unit = Literal["model", "model_language"]


@dataclass(frozen=True, kw_only=True)
class ReportSettings:
    """How the frozen report was computed (``verify`` recomputes it the same way)."""

    seed: int
    unit: Unit
    n_resamples: int
    title: str


@dataclass(frozen=True)
class FreezeResult:
    """A written release: its folder, size, cell statuses and digest (SHA-256 of ``SHA256SUMS``)."""

    path: Path
    n_files: int
    n_cells: int
    digest: str
    statuses: dict[str, int]


def freeze_run(
    run_dir: Path,
    out_dir: Path,
    *,
    suite_dir: Path | None = None,
    report: ReportSettings | None = None,
    name: str = "causalverify-release",
    license_id: str = "CC-BY-4.0",
    overwrite: bool = False,
    progress: StepCallback | None = None,
) -> FreezeResult:
    """Freeze the run at ``run_dir`` into the release folder ``out_dir``.

    Parameters
    ----------
    run_dir
        A run folder (``causalverify run``).
    out_dir
        The release folder to write; it must not exist or be empty, unless ``overwrite`` is set
        and it holds an earlier release.
    suite_dir
        The run's suite, when it is no longer at the path recorded in the run metadata.
    report
        Report settings; the report defaults (seed, model unit, 1000 resamples) when None.
    name, license_id
        Dataset name and licence written to ``croissant.json`` and the datasheet.
    overwrite
        Replace an existing release at ``out_dir``.
    progress
        Told each step as it starts (see :mod:`causalverify.progress`).

    Returns
    -------
    FreezeResult

    Raises
    ------
    StoreError
        If ``run_dir`` holds no run, or ``out_dir`` is in use.
    SuiteError
        If the suite cannot be found or is not the suite the run used.
    """
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    settings = report if report is not None else _default_report()
    _check_out(out_dir, overwrite=overwrite)
    with tempfile.TemporaryDirectory(prefix="cv-freeze-") as tmp:
        tell(progress, "copying the run store")
        snapshot = _snapshot(run_dir, Path(tmp) / "run")
        return _freeze_snapshot(
            snapshot,
            out_dir,
            suite_dir,
            settings,
            name,
            license_id,
            origin=run_dir,
            progress=progress,
        )


def _snapshot(run_dir: Path, target: Path) -> Path:
    """Copy the run store consistently (SQLite backup), so a run still being written, or
    resumed while we freeze, cannot make the release disagree with itself."""
    if is_release(run_dir):
        raise StoreError(f"{run_dir} is already a release; freeze a run folder")
    source_path = run_dir / STORE_FILE
    if not source_path.is_file():
        raise StoreError(
            f"no run store at {source_path}; run `causalverify run --out {run_dir}` first"
        )
    target.mkdir(parents=True)
    for name in (STORE_FILE, *SIDE_DATABASES):
        if (run_dir / name).is_file():
            _backup(run_dir / name, target / name)
    return target


def _backup(source_path: Path, target: Path) -> None:
    source = sqlite3.connect(f"{source_path.resolve().as_uri()}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{source_path} is not a readable database: {exc}") from exc
    finally:
        copy.close()
        source.close()


def _freeze_snapshot(
    run_dir: Path,
    out_dir: Path,
    suite_dir: Path | None,
    settings: ReportSettings,
    name: str,
    license_id: str,
    *,
    origin: Path,
    progress: StepCallback | None,
) -> FreezeResult:
    tell(progress, "reading the cells")
    recorded, records = _read_run(run_dir)
    suite = _find_suite(recorded, suite_dir, records)
    # No host paths, server address or user name leave this machine: the snapshot's metadata (which the exported
    # tables copy) and everything written from it use placeholders instead.
    replacements = host_replacements(origin, suite.root)
    server = recorded.base_url
    if server:  # an internal host name is not published either
        replacements = [(server, SERVER), *replacements]
    meta = RunMeta.of(scrub(recorded.stored(), replacements))
    with RunStore.open(run_dir) as snapshot_store:
        snapshot_store.set_meta(meta.stored())
    staging = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    frozen_meta = meta.with_entries(suite_path=SUITE_DIR)
    try:
        tell(progress, "copying the suite")
        _copy_suite(suite.root, staging / SUITE_DIR)
        tell(progress, "writing the cell records")
        write_records(staging, records, limits=meta.limits)
        tell(progress, "exporting the tables")
        tables = export_tables(run_dir / STORE_FILE, staging)
        databases = {
            name: export_tables(run_dir / name, staging, folder=folder, skip=frozenset())
            for name, folder in SIDE_DATABASES.items()
            if (run_dir / name).is_file()
        }
        frame = _write_tables(staging, records, suite.scenarios)
        tell(progress, "writing the report")
        _write_report(staging, run_dir, settings)
        tell(progress, "writing the metadata")
        index = _index(frozen_meta, records, settings, tables, name, license_id)
        index["databases"] = databases
        write_text(staging / RELEASE_FILE, dumps_json(index))
        write_text(staging / ENVIRONMENT_FILE, dumps_json(build_environment(meta)))
        sheet = render_datasheet(
            name=name,
            license_id=license_id,
            meta=meta,
            scenarios=suite.scenarios,
            cells=frame,
            tables={
                **tables,
                **{
                    f"{db}/{t}": info
                    for db, found in databases.items()
                    for t, info in found.items()
                },
            },
        )
        write_text(staging / DATASHEET_FILE, sheet)
        _write_croissant(staging, name, license_id, frame)
        tell(progress, "hashing the files")
        digest = write_sums(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out_dir.exists():
        shutil.rmtree(out_dir) if any(out_dir.iterdir()) else out_dir.rmdir()
    staging.rename(out_dir)
    n_files = len(release_files(out_dir))
    statuses = dict(sorted(Counter(str(r.status) for r in records).items()))
    return FreezeResult(out_dir, n_files, len(records), digest, statuses)


def _default_report() -> ReportSettings:
    return ReportSettings(
        seed=DEFAULT_SEED, unit="model", n_resamples=N_RESAMPLES, title=DEFAULT_TITLE
    )


def _check_out(out_dir: Path, *, overwrite: bool) -> None:
    if not out_dir.exists() or (out_dir.is_dir() and not any(out_dir.iterdir())):
        return
    if overwrite and is_release(out_dir):
        return
    hint = " (add --overwrite to replace it)" if is_release(out_dir) else ""
    raise StoreError(f"{out_dir} exists and is not empty; choose a new release folder{hint}")


def _read_run(run_dir: Path) -> tuple[RunMeta, list[CellRecord]]:
    with RunStore.open(run_dir) as store:
        meta, records = store.run_meta(), list(store.iter_cells())
    if not records:
        raise StoreError(f"the run at {run_dir} holds no cells; nothing to freeze")
    return meta, records


def _find_suite(meta: RunMeta, suite_dir: Path | None, records: Sequence[CellRecord]) -> Any:
    where = suite_dir if suite_dir is not None else meta.suite_path
    if where is None:
        imported = meta.source is not None and meta.source.inspect_logs is not None
        raise SuiteError(
            "the run records no suite folder"
            + (
                " (it was imported from an Inspect log whose suite folder was gone)"
                if imported
                else ""
            )
            + "; pass the suite the run used with --suite DIR (checked by fingerprint)"
        )
    if not Path(where).is_dir():
        raise SuiteError(
            f"the run's suite is not at {where}; pass the suite folder with --suite DIR"
        )
    suite = load_suite(Path(where))
    expected = meta.suite_fingerprint
    if expected is not None and suite_fingerprint(suite.scenarios) != expected:
        raise SuiteError(
            f"the suite at {where} is not the suite this run used (fingerprint differs)"
        )
    ids = {s.id for s in suite.scenarios}
    unknown = sorted({r.key.scenario_id for r in records} - ids)
    if unknown:
        raise SuiteError(
            f"the suite at {where} lacks scenarios of the run: {', '.join(unknown[:5])}"
        )
    return suite


def _copy_suite(source: Path, target: Path) -> None:
    """Copy the files the suite's own ``SHA256SUMS`` lists, and that manifest."""
    listed = [line.split("  ", 1)[1] for line in (source / SUMS_FILE).read_text().splitlines()]
    for rel in [*listed, SUMS_FILE]:
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, destination)


def _write_tables(
    root: Path, records: Sequence[CellRecord], scenarios: Sequence[Scenario]
) -> pd.DataFrame:
    frame = cells_frame(records)
    write_scores_csv(frame, root / SCORES_FILE)
    rows = [
        {
            "scenario_id": s.id,
            "family": s.family,
            "difficulty": s.difficulty,
            "group": s.group,
            "beta": s.beta,
            "canonical_estimate": s.canonical.estimate,
            "canonical_se": s.canonical.se,
            "data_file": s.data_file,
            "csv_sha256": s.csv_sha256,
        }
        for s in scenarios
    ]
    write_scores_csv(pd.DataFrame(rows), root / SCENARIOS_FILE)
    return frame


def _write_report(root: Path, run_dir: Path, settings: ReportSettings) -> None:
    """The report exactly as ``causalverify report`` writes it from the run folder (whose
    metadata is the scrubbed snapshot's)."""
    write_report(
        run_dir,
        root / REPORT_DIR,
        seed=settings.seed,
        title=settings.title,
        unit=settings.unit,
        n_resamples=settings.n_resamples,
    )


def _index(
    meta: RunMeta,
    records: Sequence[CellRecord],
    settings: ReportSettings,
    tables: dict[str, dict[str, Any]],
    name: str,
    license_id: str,
) -> dict[str, Any]:
    return {
        "schema": RELEASE_SCHEMA,
        "name": name,
        "license": license_id,
        "causalverify_version": __version__,
        "run": meta.stored(),
        "report": {
            "seed": settings.seed,
            "unit": settings.unit,
            "n_resamples": settings.n_resamples,
            "title": settings.title,
        },
        "counts": {
            "cells": len(records),
            "scenarios": len({r.key.scenario_id for r in records}),
            "executed": sum(r.execution is not None for r in records),
            "statuses": dict(sorted(Counter(r.status for r in records).items())),
        },
        "tables": tables,
    }


def _write_croissant(root: Path, name: str, license_id: str, frame: pd.DataFrame) -> None:
    files = [(rel, sha256_file(root / rel)) for rel in release_files(root)]
    description = (
        f"A frozen CausalVerify run: {len(frame)} cells "
        f"({frame['model'].nunique()} models, {frame['scenario_id'].nunique()} scenarios) with "
        "the suite, prompts, raw responses, executions, extractions, scores and report."
    )
    document = build_croissant(
        name=name,
        description=description,
        license_id=license_id,
        version=__version__,
        files=files,
    )
    write_text(root / CROISSANT_FILE, dumps_json(document))

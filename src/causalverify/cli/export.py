"""``causalverify export``: a run's cells and turns as Parquet, CSV or JSON lines."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import echo_json, friendly_errors
from causalverify.cli._options import json_option, out_folder_option


@click.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("parquet", "csv", "jsonl")),
    default="parquet",
    show_default=True,
    help="File format.",
)
@out_folder_option("Output folder (default: RUN_DIR/export; required for a frozen release).")
@json_option("Print the written paths and counts as JSON.")
@friendly_errors
def export(run_dir: Path, fmt: str, out: Path | None, as_json: bool) -> None:
    """Write RUN_DIR's cells (cells.<format>, one row per cell) and turns (turns.<format>, one row
    per turn) with the suite, model, scores, extraction candidates and timings.

    The files load with pandas (read_parquet, read_csv, read_json(lines=True)) and with the
    Hugging Face datasets library (load_dataset("parquet" | "csv" | "json", data_files=...)).
    RUN_DIR may be a frozen release.
    """
    from causalverify.release import is_release, open_cells_source
    from causalverify.report.export import ExportFormat, write_export

    if out is None and is_release(run_dir):
        raise click.UsageError(f"{run_dir} is a frozen release (read-only): give --out DIR")
    target = out if out is not None else run_dir / "export"
    with open_cells_source(run_dir) as source:
        records = list(source.iter_cells())
        meta = source.run_meta()
    fmt_name: ExportFormat = "parquet" if fmt == "parquet" else "csv" if fmt == "csv" else "jsonl"
    paths = write_export(records, meta, target, fmt_name)
    turns = sum(len(r.turn_states()) for r in records)
    if as_json:
        echo_json({"cells": len(records), "turns": turns, "files": paths})
    else:
        click.echo(f"{len(records)} cells -> {paths['cells']}")
        click.echo(f"{turns} turns -> {paths['turns']}")

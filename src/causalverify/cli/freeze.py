"""``causalverify freeze RUN_DIR --out RELEASE_DIR``: write a self-checking release of a run."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import echo_json, friendly_errors, step_progress
from causalverify.cli._options import quiet_option


@click.command("freeze")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The release folder to write (must not exist, or be empty).",
)
@click.option(
    "--suite",
    "suite_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The run's suite, if it moved since the run (checked by fingerprint).",
)
@click.option("--name", default="causalverify-release", show_default=True, help="Dataset name.")
@click.option(
    "--license",
    "license_id",
    default="CC-BY-4.0",
    show_default=True,
    help="Licence of the release (SPDX id or URL).",
)
@click.option("--seed", type=int, default=None, help="Report bootstrap seed (default: fixed).")
@click.option(
    "--unit",
    type=click.Choice(["model", "model_language"]),
    default="model",
    show_default=True,
    help="Ranked unit of the report.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Bootstrap resamples of the report.",
)
@click.option("--title", default=None, help="Report title.")
@click.option("--overwrite", is_flag=True, help="Replace an existing release at --out.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@quiet_option
@friendly_errors
def freeze(
    run_dir: Path,
    out_dir: Path,
    suite_dir: Path | None,
    name: str,
    license_id: str,
    seed: int | None,
    unit: str,
    resamples: int,
    title: str | None,
    overwrite: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Freeze RUN_DIR into a release: suite, records, scores, report, metadata and SHA256SUMS."""
    from causalverify.analysis import DEFAULT_SEED
    from causalverify.release import ReportSettings, freeze_run
    from causalverify.report import DEFAULT_TITLE

    settings = ReportSettings(
        seed=DEFAULT_SEED if seed is None else seed,
        unit="model_language" if unit == "model_language" else "model",
        n_resamples=resamples,
        title=title or DEFAULT_TITLE,
    )
    with step_progress(quiet or as_json) as progress:
        result = freeze_run(
            run_dir,
            out_dir,
            suite_dir=suite_dir,
            report=settings,
            name=name,
            license_id=license_id,
            overwrite=overwrite,
            progress=progress,
        )
    if as_json:
        data = {
            "release": str(result.path),
            "cells": result.n_cells,
            "files": result.n_files,
            "digest": result.digest,
            "statuses": result.statuses,
        }
        echo_json(data)
        return
    click.echo(f"froze {result.n_cells} cells into {result.path} ({result.n_files} files)")
    pending = result.statuses.get("api_error", 0)
    if pending:
        click.echo(
            f"note: {pending} cells have no answer (api_error); rerunning `causalverify run` "
            "on the run folder would complete them before freezing"
        )
    click.echo(f"release digest (sha256 of SHA256SUMS): {result.digest}")
    click.echo(f"check it with: causalverify verify {result.path}")

"""``causalverify report``: write the report of a stored run."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import friendly_errors, json_for_terminal, step_progress
from causalverify.cli._options import (
    ci_option,
    json_option,
    out_folder_option,
    quiet_option,
    resamples_option,
    unit_option,
)


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@out_folder_option("Output folder (default: RUN_DIR/report).")
@click.option(
    "--seed", type=int, default=None, help="Bootstrap seed (default: the fixed report seed)."
)
@click.option("--title", default=None, help="Report title.")
@unit_option()
@resamples_option()
@ci_option()
@json_option("Print summary.json to stdout after writing.")
@quiet_option
@friendly_errors
def report(
    run_dir: Path,
    out: Path | None,
    seed: int | None,
    title: str | None,
    unit: str,
    resamples: int,
    ci: str,
    as_json: bool,
    quiet: bool,
) -> None:
    """Write summary.json, leaderboard.md, cells.csv, figures and index.html for RUN_DIR.

    RUN_DIR may be a release written by `causalverify freeze` (then --out is required).
    """
    from causalverify.analysis import DEFAULT_SEED
    from causalverify.release import is_release, run_dir_for
    from causalverify.report import DEFAULT_TITLE, write_report

    if out is None and is_release(run_dir):
        raise click.UsageError(f"{run_dir} is a frozen release (read-only): give --out DIR")
    with run_dir_for(run_dir) as source, step_progress(quiet or as_json) as progress:
        index = write_report(
            source,
            out if out is not None else run_dir / "report",
            seed=DEFAULT_SEED if seed is None else seed,
            title=title or DEFAULT_TITLE,
            unit="model_language" if unit == "model_language" else "model",
            n_resamples=resamples,
            progress=progress,
            ci="bootstrap" if ci == "bootstrap" else "wilson" if ci == "wilson" else "cluster",
        )
    if as_json:
        summary = (index.parent / "summary.json").read_text(encoding="utf-8")
        click.echo(json_for_terminal(summary), nl=False)
    else:
        click.echo(str(index))

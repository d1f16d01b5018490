"""``causalverify import-inspect``: an Inspect log as a CausalVerify run folder."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import echo_json, friendly_errors


@click.command("import-inspect")
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The new run folder.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run folder and cell count.")
@friendly_errors
def import_inspect(log: Path, out_dir: Path, as_json: bool) -> None:
    """Store the cells of an Inspect LOG (task causalverify) as a run folder, so that report,
    analyze and freeze apply to it. Needs the inspect extra."""
    try:
        from causalverify.inspect_eval import log_to_run
    except ImportError as exc:
        raise click.ClickException(
            "import-inspect needs the inspect extra: pip install 'causalverify[inspect]'"
        ) from exc
    from causalverify.store import RunStore

    run = log_to_run(log, out_dir)
    with RunStore.open(run) as store:
        n = store.count_cells()
    if as_json:
        echo_json({"run_dir": str(run), "cells": n})
        return
    click.echo(f"{n} cells stored in {run}; next: causalverify report {run}")

"""``causalverify import-inspect``: Inspect logs as a CausalVerify run folder."""

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
    help="The run folder: new, or holding cells imported from other logs (other models or "
    "languages) of the same suite and settings.",
)
@click.option(
    "--suite",
    "suite_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The suite the log was run on, if its folder moved (checked by fingerprint).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run folder and cell counts.")
@friendly_errors
def import_inspect(log: Path, out_dir: Path, suite_dir: Path | None, as_json: bool) -> None:
    """Store the cells of an Inspect LOG (task causalverify) in a run folder, so that report,
    analyze and freeze apply to it. Logs of several models go into one folder by importing each;
    importing a log again changes nothing. Needs the inspect extra."""
    try:
        from causalverify.inspect_eval.convert import import_log
    except ImportError as exc:
        raise click.ClickException(
            "import-inspect needs the inspect extra: pip install 'causalverify[inspect]'"
        ) from exc
    from causalverify.store import RunStore

    done = import_log(log, out_dir, suite_dir=suite_dir)
    with RunStore.open(done.run_dir) as store:
        n = store.count_cells()
    if as_json:
        echo_json(
            {
                "run_dir": str(done.run_dir),
                "cells": n,
                "added": done.added,
                "unchanged": done.unchanged,
                "suite_path": None if done.suite_path is None else str(done.suite_path),
            }
        )
        return
    already = f" ({done.unchanged} already there)" if done.unchanged else ""
    click.echo(f"{done.added} cells added{already}; {n} cells in {done.run_dir}")
    if done.suite_note:
        click.echo(f"note: {done.suite_note}")
    click.echo(f"next: causalverify report {done.run_dir}")

"""``causalverify score RUN_DIR``: rescore a stored run without calling a model or executing code."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from causalverify.cli._common import echo_json, friendly_errors, safe_text
from causalverify.cli._options import json_option, out_folder_option
from causalverify.records import DEFAULT_TOLERANCE


@click.command("score")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--profile",
    type=click.Choice(["paper", "default"]),
    default="default",
    show_default=True,
    help="paper: event studies pass on the best k*canonical, k=1..11; default: declared scales only.",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0.0, min_open=True),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="Relative tolerance tau (inclusive).",
)
@click.option(
    "--extractor",
    type=click.Choice(["deterministic", "judge", "both"]),
    default="deterministic",
    show_default=True,
    help="Which extracted estimate is scored (judge values come from the store).",
)
@out_folder_option(
    "For a frozen release (read-only): a new run folder to unfreeze it into and rescore."
)
@json_option("Print the per-model rates as JSON.")
@friendly_errors
def score(
    run_dir: Path,
    profile: Literal["paper", "default"],
    tolerance: float,
    extractor: Literal["deterministic", "judge", "both"],
    out: Path | None,
    as_json: bool,
) -> None:
    """Rescore every cell of RUN_DIR, write RUN_DIR/scores.csv and print a per-model table.

    RUN_DIR may be a release written by `causalverify freeze`; it is then unfrozen into --out.
    """
    from causalverify.release import is_release, unfreeze
    from causalverify.runner.rescore import SCORES_FILE, model_table, score_run

    release = is_release(run_dir)
    if release:
        if out is None:
            raise click.UsageError(f"{run_dir} is a frozen release (read-only): give --out DIR")
        run_dir = unfreeze(run_dir, out)
    elif out is not None:
        raise click.UsageError("--out is only for a release; a run folder is rescored in place")

    frame = score_run(run_dir, profile=profile, tolerance=tolerance, extractor=extractor)
    rows = model_table(frame)
    if as_json:
        echo_json({"cells": len(frame), "models": rows})
        return
    _print_rows(
        rows, f"{len(frame)} cells rescored (profile {profile}, tau {tolerance}, {extractor})"
    )
    click.echo(f"wrote {run_dir / SCORES_FILE}; the stored cells carry the new scores")
    if release:  # a new folder holding the release's cells: nothing to resume
        click.echo(f"next: `causalverify report {run_dir}` writes its report")
        return
    click.echo(
        "the run's own settings are unchanged (a resumed `causalverify run` repeats them); "
        f"rerun `causalverify report {run_dir}` to update its report"
    )


def _print_rows(rows: list[dict[str, object]], title: str) -> None:
    from rich.console import Console

    from causalverify.analysis import ordered_units
    from causalverify.cli._tables import pct, print_legend, print_table, short_names
    from causalverify.records.summary import Incomplete
    from causalverify.report import incomplete_banner

    console = Console()
    by_name = {str(row["model"]): row for row in rows}
    order = ordered_units({name: float(row["L2b+"]) for name, row in by_name.items()})  # type: ignore[arg-type]
    names = short_names(order)
    print_legend(console, names)
    keys = ("cells", "L1", "L2a", "L2b", "L2b+", "unscoreable", "unanswered")
    print_table(
        console,
        title=title,
        header=("model", *keys),
        rows=[
            (
                name,
                *(
                    pct(by_name[name][k]) if k.startswith("L") else str(by_name[name][k])
                    for k in keys
                ),
            )
            for name in order
        ],
        names=names,
    )
    by_model = {name: int(str(row["unanswered"])) for name, row in by_name.items()}
    by_model = {name: n for name, n in by_model.items() if n}
    banner = incomplete_banner(Incomplete(cells=sum(by_model.values()), by_model=by_model))
    if banner:
        console.print(safe_text(banner, style="bold red"))

"""``causalverify score RUN_DIR``: rescore a stored run without calling a model or executing code."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import click

from causalverify.cli._common import friendly_errors


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
    type=click.FloatRange(min=0.0),
    default=0.5,
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
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="For a frozen release (read-only): a new run folder to unfreeze it into and rescore.",
)
@friendly_errors
def score(
    run_dir: Path,
    profile: Literal["paper", "default"],
    tolerance: float,
    extractor: Literal["deterministic", "judge", "both"],
    out: Path | None,
) -> None:
    """Rescore every cell of RUN_DIR, write RUN_DIR/scores.csv and print a per-model table.

    RUN_DIR may be a release written by `causalverify freeze`; it is then unfrozen into --out.
    """
    from causalverify.release import is_release, unfreeze
    from causalverify.scoring._run import SCORES_FILE, model_table, score_run

    if is_release(run_dir):
        if out is None:
            raise click.UsageError(f"{run_dir} is a frozen release (read-only): give --out DIR")
        run_dir = unfreeze(run_dir, out)
    elif out is not None:
        raise click.UsageError("--out is only for a release; a run folder is rescored in place")

    frame = score_run(run_dir, profile=profile, tolerance=tolerance, extractor=extractor)
    click.echo(f"{len(frame)} cells rescored (profile {profile}, tau {tolerance}, {extractor})")
    rows = model_table(frame)
    width = max([5, *(len(str(row["model"])) for row in rows)])
    click.echo(
        f"{'model':<{width}} {'cells':>5} {'L1':>6} {'L2a':>6} {'L2b':>6} {'L2b+':>6} "
        f"{'unsc':>5} {'unans':>5}"
    )
    for row in rows:
        rates = [_pct(row[k]) for k in ("L1", "L2a", "L2b", "L2b+")]
        click.echo(
            f"{row['model']!s:<{width}} {row['cells']:>5} {rates[0]:>6} {rates[1]:>6} "
            f"{rates[2]:>6} {rates[3]:>6} {row['unscoreable']:>5} {row['unanswered']:>5}"
        )
    unanswered = sum(int(str(row["unanswered"])) for row in rows)
    if unanswered:
        click.echo(
            f"incomplete: {unanswered} cells without an answer (api_error); they are left out "
            "of every rate"
        )
    click.echo(f"wrote {run_dir / SCORES_FILE}; the stored cells carry the new scores")
    click.echo(
        "the run's own settings are unchanged (a resumed `causalverify run` repeats them); "
        f"rerun `causalverify report {run_dir}` to update its report"
    )


def _pct(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return "-" if math.isnan(number) else f"{100 * number:.1f}%"

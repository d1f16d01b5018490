"""``causalverify build``: generate the scenario suite."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from causalverify.cli._common import echo_json, friendly_errors, plain
from causalverify.families import DIFFICULTIES, FAMILIES, PUBLISHED_NAME
from causalverify.scenarios.build import BuildReport, build_suite
from causalverify.scenarios.grid import DEFAULT_SEED, SUITES


def summary_table(report: BuildReport) -> Table:
    """Counts by family x difficulty, plus totals."""
    table = Table(title=f"suite '{report.suite}' (seed {report.seed}) -> {report.root}")
    table.add_column("family")
    for level in DIFFICULTIES:
        table.add_column(level, justify="right")
    table.add_column("total", justify="right")
    for family in FAMILIES:
        row = [report.counts.get((family, level), 0) for level in DIFFICULTIES]
        if not sum(row):
            continue  # a design this suite does not have
        table.add_row(PUBLISHED_NAME[family], *map(str, row), str(sum(row)))
    column_totals = [
        sum(report.counts.get((f, level), 0) for f in FAMILIES) for level in DIFFICULTIES
    ]
    table.add_row("all", *map(str, column_totals), str(report.n_scenarios), style="bold")
    return table


@click.command()
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Suite folder.")
@click.option("--suite", type=click.Choice(SUITES), default="default", show_default=True)
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Suite seed.")
@click.option(
    "--scenarios",
    "n_scenarios",
    type=click.IntRange(min=1),
    default=None,
    help="Number of scenarios (default: the grid's size; larger suites cycle the grid). The "
    "scenario is the cluster of every interval: the smallest difference between two models a "
    "run can detect shrinks as 1/sqrt(N) (about 14 pp at 100, 7 pp at 400; docs/STATISTICS.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was built as JSON.")
@friendly_errors
def build(out: Path, suite: str, seed: int, n_scenarios: int | None, as_json: bool) -> None:
    """Generate a scenario suite: suite.json, scenarios/, data/ and SHA256SUMS under OUT."""
    console = Console(stderr=True)
    columns = (
        TextColumn("building"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("build", total=n_scenarios)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = build_suite(
            out, suite=suite, seed=seed, n_scenarios=n_scenarios, progress=progress
        )
    if as_json:
        counts = {f"{family}/{level}": n for (family, level), n in sorted(report.counts.items())}
        echo_json({**plain(report), "counts": counts})
        return
    stdout = Console()
    stdout.print(summary_table(report))
    redrawn = f" ({', '.join(report.redrawn[:10])}{' ...' if len(report.redrawn) > 10 else ''})"
    stdout.print(
        f"redraws: {report.redraws}{redrawn if report.redrawn else ''}  "
        f"check violations: {report.violations}  files: {report.files}  "
        f"time: {report.seconds:.1f} s"
    )

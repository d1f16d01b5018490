"""``causalverify analyze``: the key analyses of a stored run or of a published per-cell table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from causalverify.cli._common import (
    friendly_errors,
    json_for_terminal,
    safe_text,
    step_progress,
)
from causalverify.cli._options import (
    ci_option,
    published_format_option,
    resamples_option,
    unit_option,
)
from causalverify.errors import CausalVerifyError
from causalverify.records import Summary

if TYPE_CHECKING:
    from causalverify.report import ReportSource

#: tables printed to the terminal, in order
SHOWN = (
    "leaderboard",
    "repair",
    "pairwise",
    "power",
    "executed_wrong",
    "rank_agreement",
    "stability",
    "sweep",
    "taxonomy",
)


def _print_tables(summary: Summary) -> None:
    from rich.console import Console

    from causalverify.cli._tables import print_legend, print_table, short_names
    from causalverify.report import incomplete_banner
    from causalverify.report._catalog import all_tables
    from causalverify.report._render import power_lines, settings_line

    console = Console()
    banner = incomplete_banner(summary)
    if banner:
        console.print(safe_text(banner, style="bold red"))
    settings = settings_line(summary)
    if settings:
        console.print(safe_text(settings))
    for line in power_lines(summary):
        console.print(safe_text(line))
    names = short_names(summary.order)
    print_legend(console, names)
    for spec in all_tables(summary):
        if spec.key not in SHOWN:
            continue
        left = [i for i, name in enumerate(spec.header) if i == 0 or name == summary.unit]
        print_table(
            console,
            title=spec.title,
            header=spec.header,
            rows=spec.rows,
            note=spec.note,
            left=left,
            names=names,
        )


@contextmanager
def _source(
    run_dir: Path | None, cells: Path | None, fmt: str, exclude_model: tuple[str, ...]
) -> Iterator[ReportSource]:
    """The one cells source of the report: a run folder's (a release through a scratch copy,
    as ``causalverify report`` reads it) or a published table's, without ``exclude_model``."""
    from causalverify.report import ReportSource

    if (run_dir is None) == (cells is None):
        raise click.UsageError("give either RUN_DIR or --cells FILE.csv (not both)")
    if cells is not None:
        from causalverify.analysis import load_published_cells

        if fmt != "causalverify-2026":
            raise click.UsageError(f"unknown --format {fmt}")
        source = ReportSource(load_published_cells(cells, fmt="causalverify-2026"))
        yield _without(source, exclude_model)
        return
    from causalverify.release import run_dir_for

    assert run_dir is not None
    with run_dir_for(run_dir) as folder:
        yield _without(ReportSource.of_run(folder), exclude_model)


def _without(source: ReportSource, exclude_model: tuple[str, ...]) -> ReportSource:
    unknown = sorted(set(exclude_model) - set(source.frame["model"].astype(str)))
    if unknown:
        raise CausalVerifyError(f"--exclude-model: no such model(s): {', '.join(unknown)}")
    return source.without(exclude_model)


@click.command("analyze")
@click.argument(
    "run_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--cells",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A published per-cell table instead of a run folder.",
)
@published_format_option()
@click.option("--exclude-model", multiple=True, help="Leave this model out (repeatable).")
@unit_option()
@click.option("--seed", type=int, default=None, help="Bootstrap seed.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print summary.json to stdout instead of tables."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write the full report (summary.json, figures, index.html) here.",
)
@resamples_option()
@ci_option()
@friendly_errors
def analyze(
    run_dir: Path | None,
    cells: Path | None,
    fmt: str,
    exclude_model: tuple[str, ...],
    unit: str,
    seed: int | None,
    as_json: bool,
    out: Path | None,
    resamples: int,
    ci: str,
) -> None:
    """Rates, rank agreement, robustness and failure taxonomy of RUN_DIR or --cells FILE.csv.

    Every rate has a scenario-clustered 95% interval (--ci); models are compared in pairs over
    shared scenarios, and the minimum detectable difference of the design is printed.
    """
    from causalverify.analysis import DEFAULT_SEED, CiMethod, Unit, dumps_summary
    from causalverify.report import build_summary, write_report

    chosen_seed = DEFAULT_SEED if seed is None else seed
    chosen_unit: Unit = "model_language" if unit == "model_language" else "model"
    method: CiMethod = (
        "bootstrap" if ci == "bootstrap" else "wilson" if ci == "wilson" else "cluster"
    )
    with _source(run_dir, cells, fmt, exclude_model) as source, step_progress(as_json) as progress:
        # the report and the terminal read the one summary of the one source
        if out is not None:
            index = write_report(
                source,
                out,
                seed=chosen_seed,
                unit=chosen_unit,
                n_resamples=resamples,
                progress=progress,
                ci=method,
            )
            summary = Summary.of(json.loads((out / "summary.json").read_text(encoding="utf-8")))
        else:
            summary = build_summary(
                source,
                seed=chosen_seed,
                unit=chosen_unit,
                n_resamples=resamples,
                progress=progress,
                ci=method,
            )
    if as_json:
        click.echo(json_for_terminal(dumps_summary(summary.stored())), nl=False)
    else:
        _print_tables(summary)
    if out is not None and not as_json:
        click.echo(str(index))

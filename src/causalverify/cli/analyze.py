"""``causalverify analyze``: the key analyses of a stored run or of a published per-cell table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
from causalverify.progress import tell

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


def _print_tables(summary: dict[str, Any]) -> None:
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
    names = short_names(summary["rankings"]["L2b_plus"]["order"])
    print_legend(console, names)
    for spec in all_tables(summary):
        if spec.key not in SHOWN:
            continue
        left = [i for i, name in enumerate(spec.header) if i == 0 or name == summary["unit"]]
        print_table(
            console,
            title=spec.title,
            header=spec.header,
            rows=spec.rows,
            note=spec.note,
            left=left,
            names=names,
        )


def _add_run_settings(
    summary: dict[str, Any],
    run_dir: Path,
    excluded: tuple[str, ...],
    method: Any,
    seed: int,
    resamples: int,
) -> None:
    """The run's settings (``summary["run"]``, as the report has them) and, for a repair-mode
    run, its turn-by-turn results (``summary["repair"]``)."""
    from causalverify.analysis import IntervalSettings
    from causalverify.release import open_cells_source
    from causalverify.report._writer import META_KEYS
    from causalverify.report.repair import repair_entry

    with open_cells_source(run_dir) as source:
        meta = source.meta()
        run = {k: meta[k] for k in META_KEYS if k in meta and meta[k] is not None}
        mode = meta.get("mode")
        if not isinstance(mode, dict) or mode.get("name") != "repair":
            summary["run"] = {**run, "mode": {"name": "single"}}
            return
        records = [r for r in source.iter_cells() if r.key.model not in excluded]
    summary["run"] = run
    settings = IntervalSettings(method=method, seed=seed, n_resamples=resamples)
    repair = repair_entry(records, meta, settings=settings)
    if repair is not None:
        summary["repair"] = repair


def _load(run_dir: Path | None, cells: Path | None, fmt: str) -> Any:
    if (run_dir is None) == (cells is None):
        raise click.UsageError("give either RUN_DIR or --cells FILE.csv (not both)")
    if cells is not None:
        from causalverify.analysis import load_published_cells

        if fmt != "causalverify-2026":
            raise click.UsageError(f"unknown --format {fmt}")
        return load_published_cells(cells, fmt="causalverify-2026")
    from causalverify.release import load_cells

    assert run_dir is not None
    return load_cells(run_dir)[0]


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
    from causalverify.analysis import DEFAULT_SEED, CiMethod, Unit, analyze_cells, dumps_summary

    frame = _load(run_dir, cells, fmt)
    unknown = sorted(set(exclude_model) - set(frame["model"].astype(str)))
    if unknown:
        raise CausalVerifyError(f"--exclude-model: no such model(s): {', '.join(unknown)}")
    frame = frame[~frame["model"].astype(str).isin(exclude_model)]
    chosen_seed = DEFAULT_SEED if seed is None else seed
    chosen_unit: Unit = "model_language" if unit == "model_language" else "model"
    method: CiMethod = (
        "bootstrap" if ci == "bootstrap" else "wilson" if ci == "wilson" else "cluster"
    )
    if out is not None:
        from causalverify.report import write_report

        # a run folder's own report also reads its records (repair turns) and settings
        whole_run = run_dir is not None and not exclude_model and (run_dir / "run.sqlite").is_file()
        with step_progress(as_json) as progress:
            index = write_report(
                run_dir if whole_run and run_dir is not None else frame,
                out,
                seed=chosen_seed,
                unit=chosen_unit,
                n_resamples=resamples,
                progress=progress,
                ci=method,
            )
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    else:
        with step_progress(as_json) as progress:
            tell(progress, f"analysing (bootstrap, {resamples} resamples)")
            summary = analyze_cells(
                frame, seed=chosen_seed, unit=chosen_unit, n_resamples=resamples, ci=method
            )
    if run_dir is not None and out is None:
        _add_run_settings(summary, run_dir, exclude_model, method, chosen_seed, resamples)
    if as_json:
        click.echo(json_for_terminal(dumps_summary(summary)), nl=False)
    else:
        _print_tables(summary)
    if out is not None and not as_json:
        click.echo(str(index))

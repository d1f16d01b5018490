"""``causalverify compare``: cell-by-cell agreement of a run with a published per-cell table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from causalverify.cli._common import friendly_errors, safe, safe_text
from causalverify.cli._options import published_format_option

_LAYER_TITLES = (("L2a", "L2a"), ("L2b", "L2b"), ("value", "value"), ("L2b_plus", "L2b+"))


def _agreement(rates: dict[str, Any]) -> str:
    if not rates["n"]:
        return "-"
    return f"{100 * rates['rate']:.0f}% ({rates['agree']}/{rates['n']})"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _figures_table(summary: dict[str, Any], scope: str, title: str) -> Any:
    from rich.table import Table

    from causalverify.published.compare import iter_groups

    table = Table(title=title)
    table.add_column("group")
    table.add_column("cells", justify="right")
    for _, name in _LAYER_TITLES:
        table.add_column(f"{name} agree", justify="right")
    table.add_column("L2b+ ours/published", justify="right")
    for label, rates in iter_groups(summary, scope):
        plus = f"{_pct(rates['ours_L2b_plus_rate'])} / {_pct(rates['published_L2b_plus_rate'])}"
        agreements = [_agreement(rates[key]) for key, _ in _LAYER_TITLES]
        table.add_row(safe_text(label), str(rates["cells"]), *agreements, plus)
    return table


def _disagreement_table(summary: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"Disagreements ({len(summary['disagreements'])})")
    for name in ("scenario", "model", "reason", "detail"):
        table.add_column(name, overflow="fold")
    for cell in summary["disagreements"]:
        table.add_row(
            *(safe_text(cell[k]) for k in ("scenario_id", "published_model", "reason", "detail"))
        )
    return table


def _print(summary: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    pairs = ", ".join(
        f"{safe(ours)} = {safe(theirs)}" for ours, theirs in summary["model_map"].items()
    )
    console.print(f"{summary['matched_cells']} matched cells; models: {pairs}")
    console.print(_figures_table(summary, "all", "Agreement, all matched cells"))
    console.print(
        _figures_table(summary, "installed_only", "Agreement, code using installed packages only")
    )
    console.print(_disagreement_table(summary))
    for reason, count in summary["reasons"].items():
        console.print(f"  {safe(reason)}: {count}")
    others = summary["published_models_not_compared"]
    if others:
        console.print(f"published models not in the run: {safe(', '.join(others))}")
    for side in ("ours", "published"):
        unmatched = summary[f"unmatched_{side}"]
        if unmatched:
            shown = safe(", ".join(f"{s}/{m}" for s, m in unmatched[:10]))
            more = f" and {len(unmatched) - 10} more" if len(unmatched) > 10 else ""
            console.print(f"{len(unmatched)} {side} cells have no counterpart: {shown}{more}")


def _model_map(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        ours, sep, theirs = value.rpartition("=")
        if not sep or not ours or not theirs:
            raise click.BadParameter(f"expected OURS=PUBLISHED, got {value!r}", ctx, param)
        pairs[ours] = theirs
    return pairs


@click.command("compare")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--cells",
    "cells_csv",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The published per-cell table (l2b_plus_scores_canonical_judge_v2.csv).",
)
@published_format_option()
@click.option(
    "--language",
    type=click.Choice(["r", "python"]),
    default="r",
    show_default=True,
    help="Which of the run's cells to compare (the release ran R).",
)
@click.option(
    "--model-map",
    multiple=True,
    callback=_model_map,
    help="OURS=PUBLISHED model pair (repeatable); others are matched by name.",
)
@click.option(
    "--value-rtol",
    type=click.FloatRange(min=0.0),
    default=0.01,
    show_default=True,
    help="Relative difference under which two extracted values agree.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary as JSON instead of tables."
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the per-cell comparison to this CSV file.",
)
@friendly_errors
def compare(
    run_dir: Path,
    cells_csv: Path,
    fmt: str,
    language: str,
    model_map: dict[str, str],
    value_rtol: float,
    as_json: bool,
    out: Path | None,
) -> None:
    """Compare the cells of RUN_DIR with a published per-cell table, listing every disagreement."""
    from causalverify.published.compare import cells_csv_bytes, compare_run, summarize

    comparison = compare_run(
        run_dir,
        cells_csv,
        fmt=fmt,
        language="python" if language == "python" else "r",
        model_map=model_map,
        value_rtol=value_rtol,
    )
    summary = summarize(comparison)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(cells_csv_bytes(comparison))
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True, indent=2))
    else:
        _print(summary)
        if out is not None:
            click.echo(f"wrote {out}")

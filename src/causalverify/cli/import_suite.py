"""``causalverify import-suite``: a suite in our format from a downloaded copy of the published release."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from causalverify.cli._common import echo_json, friendly_errors, plain
from causalverify.cli._options import published_format_option


@click.command("import-suite")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@published_format_option(help="Layout of the release.")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the suite to (new, empty, or an earlier suite to replace).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was imported as JSON.")
@friendly_errors
def import_suite(path: Path, fmt: str, out: Path, as_json: bool) -> None:
    """Import the scenarios and CSVs of the published release at PATH as a suite.

    PATH is the root of the release (it holds experiments/exp_b/scenarios/). Canonical estimates
    use the paper profile; what code can tell is wrong with a scenario goes to OUT/defects.csv
    and never stops the import.
    """
    from causalverify.published import import_suite as run_import

    report = run_import(path, out, fmt=fmt)
    if as_json:
        counts = {f"{family}/{level}": n for (family, level), n in sorted(report.counts.items())}
        echo_json({**plain(report), "counts": counts})
        return
    families: Counter[str] = Counter()
    for (family, _), count in report.counts.items():
        families[family] += count
    shown = ", ".join(f"{name} {families[name]}" for name in sorted(families))
    click.echo(f"imported {report.n_scenarios} scenarios ({shown}) into {out}")
    kinds = Counter(d.kind for d in report.defects)
    affected = len({d.scenario_id for d in report.defects})
    click.echo(f"{len(report.defects)} defects in {affected} scenarios -> {out / 'defects.csv'}")
    for kind, count in sorted(kinds.items()):
        click.echo(f"  {kind:<24} {count}")
    click.echo(f"done in {report.seconds:.1f} s")

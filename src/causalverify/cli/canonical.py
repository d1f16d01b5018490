"""``causalverify canonical``: the canonical estimate of one CSV in the published layout."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd

from causalverify.cli._common import friendly_errors
from causalverify.errors import SuiteError
from causalverify.families import FAMILIES, Family, parse_family


def _family(ctx: click.Context, param: click.Parameter, value: str) -> Family:
    try:
        return parse_family(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from exc


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read {path} as CSV: {exc}") from exc


@click.command("canonical")
@click.argument("csv", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--family",
    required=True,
    callback=_family,
    metavar="[" + "|".join(FAMILIES) + "]",
    help="Design family (published spellings such as DID or EVENT_STUDY are accepted).",
)
@click.option("--json", "as_json", is_flag=True, help='Print only {"estimate", "se", "n"} as JSON.')
@friendly_errors
def canonical(csv: Path, family: Family, as_json: bool) -> None:
    """Print the canonical (profile paper) estimate of CSV, a data set in the published layout."""
    from causalverify.estimators import canonical as estimate

    result = estimate(_read_csv(csv), family)
    if as_json:
        click.echo(json.dumps({"estimate": result.estimate, "se": result.se, "n": result.n}))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Canonical estimate of {csv.name} ({family}, profile {result.profile})")
    table.add_column("estimate", justify="right")
    table.add_column("se", justify="right")
    table.add_column("n", justify="right")
    table.add_column("method")
    table.add_row(repr(result.estimate), repr(result.se), str(result.n), result.method)
    Console().print(table)

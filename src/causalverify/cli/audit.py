"""``causalverify audit``: a blinded extraction-audit sheet and the agreement it shows."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import echo, echo_json, friendly_errors, plain
from causalverify.cli._tables import pct
from causalverify.errors import StoreError


@click.group("audit")
def audit() -> None:
    """Audit the extractor against human reading of the printed output."""


@audit.command("sample")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--n", "n", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--seed", type=int, required=True, help="Seed of the draw.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@friendly_errors
def sample(run_dir: Path, n: int, seed: int, out: Path) -> None:
    """Write a family-stratified, blinded sample of executed cells of RUN_DIR to --out (CSV)."""
    from causalverify.scoring.audit import sample_sheet
    from causalverify.store import RunStore

    with RunStore.open(run_dir) as store:
        sheet = sample_sheet(list(store.iter_cells()), n=n, seed=seed)
    sheet.to_csv(out, index=False, lineterminator="\n")
    counts = sheet["family"].value_counts().sort_index()
    summary = ", ".join(f"{fam} {cnt}" for fam, cnt in counts.items())
    click.echo(f"wrote {len(sheet)} cells to {out} ({summary}); fill in the human_effect column")


@audit.command("agree")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("sheet", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the agreement as JSON.")
@friendly_errors
def agree(run_dir: Path, sheet: Path, as_json: bool) -> None:
    """Report numeric and pass/fail agreement of SHEET's human_effect with the extractor."""
    import pandas as pd

    from causalverify.scoring.audit import agreement
    from causalverify.store import RunStore

    frame = pd.read_csv(sheet, dtype={"cell_id": str, "human_effect": str}, keep_default_na=False)
    human = {str(row.cell_id): _value(str(row.human_effect)) for row in frame.itertuples()}
    with RunStore.open(run_dir) as store:
        meta = store.run_meta()
        records = list(store.iter_cells())
    profile, tolerance = meta.scoring.profile, meta.scoring.tolerance
    try:
        result = agreement(records, human, profile=profile, tolerance=tolerance)
    except ValueError as exc:
        raise StoreError(str(exc)) from exc
    if as_json:
        data = {**plain(result), "profile": profile, "tolerance": tolerance}
        echo_json(
            {**data, "numeric_rate": result.numeric_rate, "passfail_rate": result.passfail_rate}
        )
        return
    click.echo(f"cells audited: {result.n}")
    click.echo(f"numeric agreement: {result.numeric_agree}/{result.n} ({pct(result.numeric_rate)})")
    click.echo(
        f"pass/fail agreement (profile {profile}, tau {tolerance}): "
        f"{result.passfail_agree}/{result.n_scoreable} ({pct(result.passfail_rate)})"
    )
    for line in result.disagreements:
        echo(f"  {line}")  # quotes what the cell printed


def _value(text: str) -> float | None:
    text = text.strip()
    if text.lower() in {"", "na", "nan", "null", "none", "-"}:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise click.BadParameter(f"human_effect {text!r} is not a number") from exc

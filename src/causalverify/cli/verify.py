"""``causalverify verify RELEASE_DIR [--reexecute]``: check a frozen release."""

from __future__ import annotations

from pathlib import Path

import click

from causalverify.cli._common import echo, echo_json, friendly_errors, step_progress
from causalverify.cli._options import quiet_option, warm_option
from causalverify.release import VerifyReport


@click.command("verify")
@click.argument("release_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--reexecute",
    is_flag=True,
    help="Also run every executed cell again in the sandbox and compare L2b and the values.",
)
@click.option(
    "--hashes-only",
    is_flag=True,
    help="Only check the files against SHA256SUMS (fast); do not rescore.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Cells re-executed at the same time [default: the CPUs available].",
)
@click.option(
    "--digest",
    default=None,
    help="The published sha256 of SHA256SUMS; verification fails if it differs.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="With --reexecute: run only N executed cells, at even steps through them.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verification as JSON.")
@warm_option()
@quiet_option
@friendly_errors
def verify(
    release_dir: Path,
    reexecute: bool,
    hashes_only: bool,
    workers: int | None,
    digest: str | None,
    limit: int | None,
    as_json: bool,
    quiet: bool,
    warm: bool | None,
) -> None:
    """Check every hash of RELEASE_DIR and rescore it; exit 1 if anything differs."""
    from causalverify.release import verify_release
    from causalverify.runner import default_workers

    if limit is not None and not reexecute:
        raise click.UsageError("--limit chooses cells to re-execute: add --reexecute")
    with step_progress(quiet or as_json) as progress:
        report = verify_release(
            release_dir,
            reexecute=reexecute,
            rescore=not hashes_only,
            workers=default_workers() if workers is None else workers,
            expected_digest=digest,
            limit=limit,
            progress=progress,
            warm=warm,
        )
    if as_json:
        echo_json(_as_dict(report))
    else:
        _print(report)
    if not report.ok:
        raise SystemExit(1)


def _as_dict(report: VerifyReport) -> dict[str, object]:
    re = report.reexecution
    return {
        "release": str(report.release),
        "ok": report.ok,
        "digest": report.digest,
        "files": report.n_files,
        "cells": report.n_cells,
        "rescored": report.rescored,
        "reexecution": None
        if re is None
        else {"cells": re.n_cells, "l2b_agree": re.l2b_agree, "value_agree": re.value_agree},
        "problems": list(report.problems),
    }


def _print(report: VerifyReport) -> None:
    click.echo(f"release {report.release}")
    click.echo(f"digest (sha256 of SHA256SUMS): {report.digest}")
    state = "ok" if not report.hash_problems else f"{len(report.hash_problems)} problem(s)"
    click.echo(f"hashes: {report.n_files} files checked: {state}")
    if report.rescored:
        state = "identical" if not report.rescore_problems else "DIFFERENT"
        click.echo(f"rescoring: {report.n_cells} cells rescored; scores and summary.json {state}")
    else:
        click.echo(f"rescoring: skipped ({report.n_cells} cells read)")
    if report.reexecution is not None:
        re = report.reexecution
        click.echo(
            f"re-execution: {re.n_cells} cells; L2b agrees {re.l2b_agree}/{re.n_cells}; "
            f"extracted value agrees {re.value_agree}/{re.n_cells}"
        )
    for problem in report.problems:
        echo(f"  FAIL {problem}")  # may name a file or value of the release
    click.echo("verified" if report.ok else "verification FAILED")

"""``causalverify exec``: run one script exactly as a benchmark cell is run."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from causalverify.cli._common import friendly_errors
from causalverify.families import Language
from causalverify.sandbox import ExecResult, Limits, get_sandbox

_SUFFIX: dict[str, Language] = {".r": "r", ".py": "python"}


def _summary(result: ExecResult) -> Table:
    table = Table(show_header=False, title="execution")
    table.add_column("field", style="bold")
    table.add_column("value")
    rows = {
        "status": result.status,
        "exit code": str(result.exit_code),
        "wall / CPU seconds": f"{result.wall_seconds:.3f} / {result.cpu_seconds:.3f}",
        "peak memory MB": "-" if result.peak_memory_mb is None else f"{result.peak_memory_mb:.1f}",
        "sandboxed": str(result.sandboxed),
        "missing package": result.missing_package or "-",
        "truncated (out, err)": f"{result.stdout_truncated}, {result.stderr_truncated}",
        "detail": result.detail or "-",
        "fitted models": _fits_line(result),
    }
    for key, value in rows.items():
        table.add_row(key, value)
    return table


def _fits_line(result: ExecResult) -> str:
    """``3: stats::lm, AER::ivreg ×2`` (the fit log; ``--json`` has every coefficient)."""
    if not result.fits:
        return "0" + (f" ({result.fits_note})" if result.fits_note else "")
    counts: dict[str, int] = {}
    for fit in result.fits:
        counts[fit.function] = counts.get(fit.function, 0) + 1
    names = ", ".join(f"{f} ×{n}" if n > 1 else f for f, n in counts.items())
    note = f"; {result.fits_note}" if result.fits_note else ""
    return f"{len(result.fits)}: {names}{note}"


@click.command(name="exec")
@click.argument("script", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--data",
    "data",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="CSV given to the script.",
)
@click.option(
    "--data-path",
    default=None,
    help="Where the CSV appears, relative to the working directory [default: data/<csv name>].",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the ExecResult as JSON (with the fit log as its top-level `fits` list).",
)
@click.option(
    "--wall-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=Limits().wall_seconds,
    show_default=True,
    help="Wall-clock limit of the script (positive).",
)
@click.option(
    "--unsafe-no-sandbox",
    is_flag=True,
    help="Run without isolation (also needs CAUSALVERIFY_ALLOW_UNSAFE=1).",
)
@friendly_errors
def exec_(
    script: Path,
    data: Path,
    data_path: str | None,
    as_json: bool,
    wall_seconds: float,
    unsafe_no_sandbox: bool,
) -> None:
    """Run SCRIPT (.R or .py) in the sandbox with the CSV at data/<name>, as a cell is run."""
    language = _SUFFIX.get(script.suffix.lower())
    if language is None:
        raise click.BadParameter("SCRIPT must end in .R or .py", param_hint="SCRIPT")
    sandbox = get_sandbox(unsafe=unsafe_no_sandbox)
    code = script.read_text(encoding="utf-8")
    rel = data_path or f"data/{data.name}"
    limits = Limits(wall_seconds=wall_seconds)
    result = sandbox.run(code, language, {rel: data.resolve()}, limits=limits)
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    else:
        click.echo(result.stdout, nl=False)
        if result.stderr:
            click.echo(result.stderr, nl=False, err=True)
        Console(stderr=True).print(_summary(result))
    sys.exit(0 if result.ok else 1)

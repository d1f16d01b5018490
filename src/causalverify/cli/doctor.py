"""``causalverify doctor``: is this machine ready to run the benchmark?"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from causalverify.cli._common import echo_json, friendly_errors
from causalverify.errors import CausalVerifyError
from causalverify.sandbox import rlibrary
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.manifest import PYTHON_PACKAGES, environment_manifest
from causalverify.sandbox.rlibrary import RECOMMENDED
from causalverify.sandbox.warm import warm_default

#: packages the canonical estimators and the reference panel need
REQUIRED_PYTHON = ("numpy", "pandas", "scipy", "statsmodels", "linearmodels")
REQUIRED_R = ("AER", "estimatr", "sandwich", "lmtest", "plm", "data.table", "jsonlite")


def _mark(ok: bool) -> str:
    return "[green]ok[/green]" if ok else "[red]MISSING[/red]"


def _environment_table() -> tuple[Table, bool]:
    tc = discover()
    manifest = environment_manifest()
    table = Table(title="environment")
    for col in ("component", "version / path", "status"):
        table.add_column(col)
    ok = True
    table.add_row("python", f"{platform.python_version()} ({sys.executable})", _mark(True))
    table.add_row("bubblewrap", tc.bwrap or "not found", _mark(tc.bwrap is not None))
    table.add_row("R", f"{manifest.r_version} ({tc.rscript})", _mark(tc.rscript is not None))
    ok &= tc.bwrap is not None and tc.rscript is not None
    for name in PYTHON_PACKAGES:
        version = manifest.python_packages.get(name)
        if version is None and name not in REQUIRED_PYTHON:
            continue
        ok &= version is not None
        table.add_row(f"python: {name}", version or "-", _mark(version is not None))
    for name in REQUIRED_R:
        version = manifest.r_packages.get(name)
        ok &= version is not None
        table.add_row(f"R: {name}", version or "-", _mark(version is not None))
    table.add_row("R packages installed", str(len(manifest.r_packages)), "")
    table.add_row(
        "R library (managed)",
        tc.r_library or "not created (causalverify r-packages install --recommended)",
        "",
    )
    pinned = {p.name: p.pinned for p in _managed_packages(tc.r_library)}
    for name in RECOMMENDED:  # optional: model code loads them, Debian does not ship them
        version = manifest.r_packages.get(name)
        paper = rlibrary.PAPER_VERSIONS.get(name)
        note = f" (pinned {pinned[name]})" if pinned.get(name) else ""
        if paper and version and version != paper:
            note += f"; the published environment used {paper}"
        table.add_row(
            f"R (managed): {name}",
            (version + note) if version else "not installed",
            "[green]ok[/green]" if version else "[yellow]optional[/yellow]",
        )
    missing = [n for n in RECOMMENDED if n not in manifest.r_packages]
    if missing:
        table.add_row(
            "R (managed): missing",
            f"{', '.join(missing)}: causalverify r-packages install --recommended",
            "[yellow]optional[/yellow]",
        )
    return table, ok


def _managed_packages(library: str | None) -> list[rlibrary.InstalledPackage]:
    return rlibrary.list_packages(Path(library)) if library else []


def _hooks_table() -> tuple[Table, bool]:
    """The fit log's R hook, run in the sandbox: a fit is logged as coef() gives it, and every
    hooked function of an installed package keeps its byte-code."""
    from causalverify.sandbox.fitlog import hook_selfcheck

    return _checks_table("fit-log hooks (R)", "check", "fit log (R)", hook_selfcheck, warm=False)


def _selftest_table(warm: bool) -> tuple[Table, bool]:
    """Every protection, checked on the warm path (Python cells forked from the preloaded
    interpreter) or the cold one. A warm interpreter that cannot start is a warning: Python cells
    then run cold, whose protections the cold table checks."""
    from causalverify.sandbox.selftest import WARM_CHECK, run_selftest

    title = f"sandbox self-test ({'warm' if warm else 'cold'} Python)"
    return _checks_table(
        title, "protection", "sandbox", run_selftest, warm=warm, warning=WARM_CHECK
    )


def _checks_table(
    title: str,
    first_column: str,
    unavailable: str,
    run: Callable[[Any], Sequence[Any]],
    *,
    warm: bool,
    warning: str | None = None,
) -> tuple[Table, bool]:
    """A table of checks that ``run`` makes on a fresh sandbox, one row a check (``name``, ``ok``,
    ``detail``), and whether they all hold. A sandbox that cannot start is one failed row named
    ``unavailable``; a failed check named ``warning`` is shown as a warning and does not count."""
    from causalverify.sandbox.bwrap import BwrapSandbox

    table = Table(title=title)
    for col in (first_column, "holds", "detail"):
        table.add_column(col)
    try:
        box = BwrapSandbox(warm=warm)
        try:
            checks = run(box)
        finally:
            box.close()
    except CausalVerifyError as exc:
        table.add_row(unavailable, "[red]no[/red]", str(exc))
        return table, False
    for check in checks:
        bad = "[yellow]no: cells run cold[/yellow]" if check.name == warning else "[red]NO[/red]"
        table.add_row(check.name, "[green]yes[/green]" if check.ok else bad, check.detail)
    return table, all(c.ok for c in checks if c.name != warning)


def _rows(table: Table) -> list[dict[str, str]]:
    """A table's rows as ``column -> text`` (markup removed)."""
    from rich.text import Text

    columns = [str(c.header) for c in table.columns]
    cells = [[Text.from_markup(str(v)).plain for v in c.cells] for c in table.columns]
    return [dict(zip(columns, row, strict=True)) for row in zip(*cells, strict=True)]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@friendly_errors
def doctor(as_json: bool) -> None:
    """Check R, Python, the analysis packages and every sandbox protection; non-zero if not ready."""
    console = Console()
    env_table, env_ok = _environment_table()
    cold_table, cold_ok = _selftest_table(warm=False)
    hooks_table, hooks_ok = _hooks_table() if discover().rscript else (None, True)
    tables = [cold_table]
    test_ok = cold_ok and hooks_ok
    if warm_default():
        warm_table, warm_ok = _selftest_table(warm=True)
        tables.append(warm_table)
        test_ok = test_ok and warm_ok
    if as_json:
        echo_json(
            {
                "ready": env_ok and test_ok,
                "environment": _rows(env_table),
                "sandbox_selftest": _rows(cold_table),
                "sandbox_selftest_warm": _rows(tables[1]) if len(tables) > 1 else None,
                "fitlog_hooks": _rows(hooks_table) if hooks_table is not None else None,
            }
        )
        sys.exit(0 if env_ok and test_ok else 1)
    console.print(env_table)
    for table in tables:
        console.print(table)
    if hooks_table is not None:
        console.print(hooks_table)
    if env_ok and test_ok:
        console.print("[green]ready[/green]")
        return
    console.print("[red]not ready[/red]: install what is missing with `make setup`")
    sys.exit(1)

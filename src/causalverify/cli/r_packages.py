"""``causalverify r-packages``: the R library CausalVerify manages (CRAN packages Debian lacks)."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from causalverify.cli._common import friendly_errors
from causalverify.errors import SetupError
from causalverify.sandbox import rlibrary
from causalverify.sandbox._toolchain import discover


def _rscript() -> str:
    rscript = discover().rscript
    if rscript is None:
        raise SetupError(
            "Rscript not found: install R first (make setup, or apt-get install r-base-core)"
        )
    return rscript


def _merge(specs: list[str]) -> list[str]:
    """Specs once each by package name; a pinned one wins over an unpinned one."""
    out: dict[str, str] = {}
    for spec in specs:
        name, version = rlibrary.parse_spec(spec)
        if name not in out or version is not None:
            out[name] = spec.strip()
    return list(out.values())


@click.group(name="r-packages")
def r_packages() -> None:
    """Install and list CRAN packages in CausalVerify's own R library (read-only in the sandbox).

    The library is $XDG_DATA_HOME/causalverify/r-library/<R version> (or CAUSALVERIFY_R_LIBRARY);
    the repository is --repos, else CAUSALVERIFY_CRAN_REPOS, else the CRAN cloud mirror.
    """


@r_packages.command(name="install")
@click.argument("names", nargs=-1)
@click.option(
    "--recommended",
    is_flag=True,
    help=f"Also install the recommended set ({', '.join(rlibrary.RECOMMENDED)}).",
)
@click.option(
    "--set",
    "package_set",
    type=click.Choice(sorted(rlibrary.SETS)),
    default=None,
    help="Also install a named set: recommended, or paper (the recommended set with the "
    f"published environment's versions pinned: {', '.join(rlibrary.PAPER)}).",
)
@click.option(
    "--repos",
    default=None,
    help=f"CRAN-style repository URL (https://... or file://...) [default: ${rlibrary.REPOS_ENV} "
    f"or {rlibrary.DEFAULT_REPOS}].",
)
@click.option(
    "--connect-timeout",
    type=click.FloatRange(min=0.1),
    default=5.0,
    show_default=True,
    help="Seconds to wait for the repository to answer before giving up.",
)
@click.option(
    "--if-reachable",
    is_flag=True,
    help="When no repository answers, say so in one line and exit 0 (for make setup).",
)
@friendly_errors
def install(
    names: tuple[str, ...],
    recommended: bool,
    package_set: str | None,
    repos: str | None,
    connect_timeout: float,
    if_reachable: bool,
) -> None:
    """Install NAMES (and their dependencies) into the managed R library.

    A name may pin a version, NAME==VERSION (rdrobust==3.0.0): the current version comes from
    the repository's index, an older one from its archive (src/contrib/Archive/NAME/).
    """
    extra = [
        *(rlibrary.RECOMMENDED if recommended else ()),
        *rlibrary.SETS.get(package_set or "", ()),
    ]
    wanted = _merge([*names, *extra])
    if not wanted:
        raise click.UsageError("name at least one package, or pass --recommended or --set")
    rscript = _rscript()
    library = rlibrary.managed_library_path(rlibrary.r_version(rscript))
    repos = repos or rlibrary.default_repos()
    present = {p.name: p.version for p in rlibrary.list_packages(library)}
    todo = [
        spec
        for spec in wanted
        if (pin := rlibrary.parse_spec(spec))[0] not in present
        or (pin[1] is not None and present[pin[0]] != pin[1])
    ]
    if not todo:
        click.echo(f"r-packages: already installed in {library}: {', '.join(wanted)}")
        return
    try:
        new = rlibrary.install_packages(
            todo, rscript=rscript, library=library, repos=repos, timeout=connect_timeout
        )
    except rlibrary.RepositoryUnreachableError as exc:
        if if_reachable:
            click.echo(f"r-packages: {exc}")
            return
        raise
    click.echo(f"r-packages: installed {', '.join(new) or 'nothing new'} into {library}")


@r_packages.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print the packages as JSON.")
@friendly_errors
def list_(as_json: bool) -> None:
    """List the packages of the managed R library and the repository each came from."""
    library = rlibrary.managed_library_path(rlibrary.r_version(_rscript()))
    packages = rlibrary.list_packages(library)
    if as_json:
        rows = [
            {"name": p.name, "version": p.version, "pinned": p.pinned, "repository": p.repository}
            for p in packages
        ]
        click.echo(
            json.dumps({"library": str(library), "packages": rows}, indent=2, sort_keys=True)
        )
        return
    table = Table(title=f"managed R library: {library}")
    for col in ("package", "version", "pinned", "from"):
        table.add_column(col)
    for p in packages:
        table.add_row(p.name, p.version, p.pinned or "", p.repository)
    Console().print(table)
    missing = [n for n in rlibrary.RECOMMENDED if n not in {p.name for p in packages}]
    if missing:
        Console(stderr=True).print(
            f"recommended but not installed: {', '.join(missing)} "
            "(causalverify r-packages install --recommended)"
        )

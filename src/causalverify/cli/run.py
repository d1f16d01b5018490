"""``causalverify run``: put models through a suite, resumably, and summarise the result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from causalverify.cli._common import (
    cost_text,
    echo_json,
    engine_progress,
    friendly_errors,
    plain,
    safe_text,
)
from causalverify.cli._options import (
    base_url_option,
    cache_option,
    max_rpm_option,
    model_access,
    prices_option,
    quiet_option,
    warm_option,
)
from causalverify.families import LANGUAGES, Language
from causalverify.records import DEFAULT_TOLERANCE

#: exit status of a run that left cells without an answer (the provider failed)
EXIT_INCOMPLETE = 3
_PANEL_HELP = "the whole reference panel (reference/textbook, reference/naive, ...)"


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _languages(ctx: click.Context, param: click.Parameter, value: str) -> tuple[Language, ...]:
    names = tuple(name.lower() for name in _split(value))  # `R` is `r`
    unknown = [n for n in names if n not in LANGUAGES]
    if unknown or not names:
        raise click.BadParameter(f"expected a comma list of {', '.join(LANGUAGES)}", ctx, param)
    return tuple(n for n in LANGUAGES if n in names)


@click.command("run")
@click.option(
    "--suite",
    "suite_spec",
    default="default",
    show_default=True,
    help="A built suite folder, or a named suite: 'default' (built into RUN_DIR/suite if "
    "absent) or 'smoke' (one scenario per family, built into RUN_DIR/suite-smoke).",
)
@click.option(
    "--models", default=None, help=f"Comma list of provider specs [default: {_PANEL_HELP}]."
)
@click.option(
    "--languages",
    default="r,python",
    show_default=True,
    callback=_languages,
    help="Comma list of languages.",
)
@click.option(
    "--samples",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Answers per scenario, model and language.",
)
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(min=1),
    help="Cells executing at once [default: number of CPUs].",
)
@click.option(
    "--model-concurrency",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="Model calls in flight at once.",
)
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(min=1),
    help="Use only N scenarios, spread evenly over the design families (reproducible; a larger "
    "N contains every smaller one).",
)
@click.option(
    "--out",
    "out_dir",
    default="runs/latest",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The run folder.",
)
@click.option(
    "--protocol",
    type=click.Choice(["paper", "default"]),
    default="default",
    show_default=True,
    help="Prompt protocol.",
)
@click.option(
    "--profile",
    type=click.Choice(["paper", "default"]),
    default="default",
    show_default=True,
    help="Scoring profile.",
)
@click.option(
    "--tolerance",
    default=DEFAULT_TOLERANCE,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Relative-error tolerance of L2b+.",
)
@click.option(
    "--extractor",
    type=click.Choice(["deterministic", "judge", "both"]),
    default="deterministic",
    show_default=True,
    help="Which extraction is scored; judge and both need --judge-model.",
)
@click.option(
    "--judge-model",
    default=None,
    help="Provider spec of the extraction judge. With the deterministic extractor it reads only "
    "the cells whose extraction is undecided; --extractor judge or both judges every cell.",
)
@click.option(
    "--declare/--no-declare",
    default=True,
    show_default=True,
    help="Ask a cell that printed no ESTIMATE: line, or whose extraction is undecided, which "
    "printed number is its estimate (default protocol only; never for replayed answers). "
    "Recorded in the run: a resumed run repeats it.",
)
@base_url_option()
@click.option("--temperature", default=None, type=float, help="Sampling temperature.")
@click.option(
    "--max-tokens",
    default=8192,
    show_default=True,
    type=click.IntRange(min=1),
    help="Maximum tokens per answer.",
)
@click.option("--reasoning-effort", default=None, help="Reasoning effort passed to the model.")
@click.option(
    "--seed",
    default=None,
    type=int,
    help="Sampling seed sent to providers that take one (OpenAI-compatible servers); sample k "
    "sends seed+k. Recorded in the run.",
)
@cache_option()
@prices_option()
@max_rpm_option()
@click.option(
    "--unsafe-no-sandbox",
    "unsafe",
    is_flag=True,
    help="Run model code WITHOUT the sandbox (development only; recorded in the run).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where scripts execute: this machine's sandbox, or Dask workers (each in its own "
    "sandbox; a local cluster of --workers processes unless --scheduler is given).",
)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --executor dask).")
@click.option(
    "--mode",
    type=click.Choice(["single", "repair"]),
    default="single",
    show_default=True,
    help="single: one answer per cell (the published protocol). repair: show the model what "
    "its code did (errors, missing output; never whether the number is right) and ask again.",
)
@click.option(
    "--max-turns",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Turns per cell in repair mode, the first included.",
)
@warm_option()
@click.option(
    "--json", "as_json", is_flag=True, help="Print the run's summary as JSON (no progress bar)."
)
@quiet_option
@friendly_errors
def run(
    suite_spec: str,
    models: str | None,
    languages: tuple[Language, ...],
    samples: int,
    workers: int | None,
    model_concurrency: int,
    limit: int | None,
    out_dir: Path,
    protocol: Any,
    profile: Any,
    tolerance: float,
    extractor: Any,
    judge_model: str | None,
    declare: bool,
    base_url: str | None,
    temperature: float | None,
    max_tokens: int,
    reasoning_effort: str | None,
    seed: int | None,
    cache_path: Path | None,
    prices_path: Path | None,
    max_rpm: float | None,
    unsafe: bool,
    executor: str,
    scheduler: str | None,
    mode: str,
    max_turns: int,
    warm: bool | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run models through a suite; rerunning the same command resumes where it stopped."""
    from rich.console import Console

    from causalverify.models import ModelOptions
    from causalverify.runner import REFERENCE_PANEL, RunConfig, default_workers, run_benchmark
    from causalverify.runner.suite import ensure_suite

    err = Console(stderr=True)
    if unsafe:
        err.print("[bold red]warning:[/] model code runs WITHOUT the sandbox")
    _check_models(_split(models), judge_model, base_url)  # a missing key before any building
    with err.status("preparing the suite", spinner="dots"):
        suite_dir = ensure_suite(suite_spec, out_dir)
    try:
        config = RunConfig(
            suite_dir=suite_dir,
            out_dir=out_dir,
            models=_split(models) or REFERENCE_PANEL,
            languages=languages,
            samples=samples,
            workers=workers or default_workers(),
            access=model_access(
                concurrency=model_concurrency,
                base_url=base_url,
                cache_path=cache_path,
                prices_path=prices_path,
                max_rpm=max_rpm,
                options=ModelOptions(
                    temperature=temperature,
                    max_tokens=max_tokens,
                    reasoning_effort=reasoning_effort,
                    seed=seed,
                ),
            ),
            limit=limit,
            protocol=protocol,
            profile=profile,
            tolerance=tolerance,
            extractor=extractor,
            judge_model=judge_model,
            declare=declare,
            unsafe=unsafe,
            warm=warm,
            executor=executor,  # type: ignore[arg-type]
            scheduler=scheduler,
            mode=mode,  # type: ignore[arg-type]
            max_turns=max_turns,
            command_line=tuple(["causalverify", *sys.argv[1:]]),
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        with engine_progress(err, quiet or as_json, "cells") as callback:
            summary = run_benchmark(config, progress=callback)
    except KeyboardInterrupt:
        err.print("interrupted: finished cells are stored; rerun the same command to resume")
        sys.exit(130)
    if summary.environment_changes:
        _print_environment_changes(summary.environment_changes, err)
    repair = _repair_results(summary) if mode == "repair" else None
    if as_json:
        extra = {"repair": repair} if repair is not None else {}
        echo_json({**plain(summary), "store": str(summary.run_dir / "run.sqlite"), **extra})
    else:
        _print_summary(summary, Console(), repair, config.access.prices)
    if summary.counts.get("api_error", 0):
        sys.exit(EXIT_INCOMPLETE)


def _check_models(specs: tuple[str, ...], judge: str | None, base_url: str | None) -> None:
    """Make (and close) each model once, so that an unknown spec or a missing API key stops the
    command before a suite is built or a folder made."""
    from causalverify.models import get_provider

    for spec in dict.fromkeys((*specs, *([judge] if judge else []))):
        model = get_provider(spec, base_url=base_url)
        closer = getattr(model, "close", None)
        if callable(closer):
            closer()


def _print_environment_changes(changes: tuple[str, ...], err: Any) -> None:
    shown = "; ".join(changes[:6]) + (f"; and {len(changes) - 6} more" if len(changes) > 6 else "")
    err.print(
        safe_text(
            f"note: the execution environment changed since this run started ({shown}). Its "
            "prompts still describe the environment it recorded, so its cells stay comparable; "
            "to ask with the current environment, run into a new --out folder.",
            style="yellow",
        ),
        soft_wrap=True,
    )


def _repair_results(summary: Any) -> dict[str, Any] | None:
    """The repair section of the report (L2b and L2b+ by turn, the gain with its interval) for
    the cells of this run."""
    from causalverify.report.repair import repair_entry
    from causalverify.store import RunStore

    wanted = {m.model for m in summary.models}
    with RunStore.open(summary.run_dir) as store:
        meta = store.run_meta()
        records = [r for r in store.iter_cells() if r.key.model in wanted]
    return repair_entry(records, meta)


def _print_repair(console: Any, repair: dict[str, Any], names: Any) -> None:
    from causalverify.cli._tables import pct, print_table

    def gain(entry: dict[str, Any], layer: str) -> str:
        value = entry["repair_gain"][layer]
        ci = (entry.get("repair_gain_ci") or {}).get(layer) or {}
        if value is None:
            return "–"
        text = f"{100 * value:+.1f} pts"
        if ci.get("lo") is not None and ci.get("hi") is not None:
            text += f" [{100 * ci['lo']:+.1f}, {100 * ci['hi']:+.1f}]"
        return text

    k = max(len(e["L2b_by_turn"]) for e in repair.values())
    rows = [
        (
            model,
            pct(e["L2b_by_turn"][0]),
            pct(e["L2b_by_turn"][-1]),
            pct(e["L2b_plus_by_turn"][0]),
            pct(e["L2b_plus_by_turn"][-1]),
            gain(e, "L2b_plus"),
            "–" if e["mean_turns"] is None else f"{e['mean_turns']:.2f}",
        )
        for model, e in repair.items()
    ]
    print_table(
        console,
        title=f"Repair mode (up to {k} turns)",
        header=(
            "model",
            "L2b turn 1",
            f"L2b turn {k}",
            "L2b+ turn 1",
            f"L2b+ turn {k}",
            "L2b+ gain [95% CI]",
            "mean turns",
        ),
        rows=rows,
        note="Turn-1 results are the single-shot ones; the gain's interval is paired over the "
        "same cells, clustered by scenario. Every turn: causalverify report or analyze.",
        names=names,
    )


def _print_summary(
    summary: Any, console: Any, repair: dict[str, Any] | None = None, prices: Any = None
) -> None:
    from causalverify.analysis import ordered_units
    from causalverify.cli._tables import pct, print_legend, print_table, short_names
    from causalverify.records.summary import Incomplete
    from causalverify.report import incomplete_banner

    order = ordered_units({m.model: m.L2b_plus for m in summary.models})
    by_name = {m.model: m for m in summary.models}
    statuses = sorted({status for m in summary.models for status in m.counts})
    rows = [
        (
            name,
            str(by_name[name].cells),
            *(pct(getattr(by_name[name], f)) for f in ("L1", "L2a", "L2b", "L2b_plus")),
            *(str(by_name[name].counts.get(status, 0)) for status in statuses),
        )
        for name in order
    ]
    names = short_names(order)
    print_legend(console, names)
    print_table(
        console,
        title=f"Run {summary.run_dir}",
        header=("model", "cells", "L1", "L2a", "L2b", "L2b+", *statuses),
        rows=rows,
        names=names,
    )
    if repair:
        _print_repair(console, repair, names)
    console.print(
        f"{summary.total} cells: {summary.computed} computed now, {summary.skipped} already "
        f"stored; {summary.requests} model requests answered"
        + (f", {summary.failed_requests} failed after retries" if summary.failed_requests else "")
        + f", {cost_text(summary.cost_usd, [m.model for m in summary.models], prices)}, "
        f"{summary.wall_seconds:.1f} s",
        soft_wrap=True,
    )
    by_model = {m.model: m.unanswered for m in summary.models if m.unanswered}
    banner = incomplete_banner(Incomplete(cells=sum(by_model.values()), by_model=by_model))
    if banner:
        console.print(safe_text(banner, style="bold red"))
    console.print(
        safe_text(f"store: {summary.run_dir / 'run.sqlite'}", style="dim"), soft_wrap=True
    )

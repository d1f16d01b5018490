"""``causalverify calibrate``: ask each model how confident it is in its stored answers."""

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
    safe_text,
)
from causalverify.cli._options import (
    base_url_option,
    cache_option,
    model_access,
    model_concurrency_option,
    prices_option,
    quiet_option,
)


def _split(value: str | None) -> tuple[str, ...] | None:
    parts = tuple(p.strip() for p in (value or "").split(",") if p.strip())
    return parts or None


@click.command("calibrate")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--models",
    default=None,
    help="Comma list of the run's models to ask [default: every model of the run except replay/…].",
)
@click.option(
    "--protocol",
    type=click.Choice(["default", "paper"]),
    default="default",
    show_default=True,
    help="Confidence prompt: 'default' states the run's real criterion, 'paper' the published "
    "'within 20% of the true effect'.",
)
@model_concurrency_option()
@base_url_option(help="Server URL for API models [default: the run's].")
@cache_option()
@prices_option()
@click.option(
    "--suite",
    "suite_dir",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="The run's suite folder, if it moved since the run.",
)
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(min=1),
    help="Only the answers to N scenarios, spread evenly over the design families (as run --limit).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print what was elicited as JSON (no progress bar)."
)
@quiet_option
@friendly_errors
def calibrate(
    run_dir: Path,
    models: str | None,
    protocol: Any,
    workers: int,
    base_url: str | None,
    cache_path: Path | None,
    prices_path: Path | None,
    suite_dir: Path | None,
    limit: int | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Elicit confidences for RUN_DIR's answers; rerunning resumes and makes no repeated calls."""
    from rich.console import Console

    from causalverify.calibration import CalibrationConfig, calibrate_run

    err = Console(stderr=True)
    try:
        config = CalibrationConfig(
            run_dir=run_dir,
            models=_split(models),
            protocol=protocol,
            access=model_access(
                concurrency=workers,
                base_url=base_url,
                cache_path=cache_path,
                prices_path=prices_path,
            ),
            suite_dir=suite_dir,
            limit=limit,
            command_line=tuple(["causalverify", *sys.argv[1:]]),
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    with engine_progress(err, quiet or as_json, "confidences") as callback:
        summary = calibrate_run(config, progress=callback)
    if as_json:
        echo_json(summary)
        return
    _print(summary, run_dir, protocol, Console())


def _print(summary: Any, run_dir: Path, protocol: str, console: Any) -> None:
    from rich.table import Table

    from causalverify.calibration import load_calibration, summarize_calibration

    frame = load_calibration(run_dir)
    if frame is not None:
        frame = frame[frame["model"].isin(summary.models)]
    if frame is not None and len(frame):
        result = summarize_calibration(frame, n_resamples=200, models=summary.models)
        block = result["protocols"].get(protocol, {"model_order": [], "models": {}})
        table = Table(title=f"Numerical confidence vs L2b+ ({protocol} prompt)")
        for column in ("model", "n", "missing", "accuracy", "mean conf.", "ECE", "gap", "AUROC"):
            table.add_column(column, justify="left" if column == "model" else "right")
        for model in block["model_order"]:
            t = block["models"][model]["types"]["numerical"]
            table.add_row(
                safe_text(model),
                str(t["n"]),
                str(t["n_missing"]),
                *(_fmt(t[k]) for k in ("accuracy", "mean_confidence", "ece")),
                *(_fmt(t[k]) for k in ("confidence_gap", "auroc")),
            )
        console.print(table)
    console.print(
        f"{summary.total} answers: {summary.computed} asked now, {summary.skipped} already stored, "
        f"{summary.not_eligible} without an answer to assess; {summary.requests} model requests, "
        f"{cost_text(summary.cost_usd, summary.models)}, {summary.wall_seconds:.1f} s. Statuses: "
        + ", ".join(f"{k} {v}" for k, v in summary.counts.items())
    )
    explained = {
        "partial": "partial: the reply stated some of the three confidences",
        "unparsable": "unparsable: the reply stated none of them in a readable form",
    }
    notes = [text for status, text in explained.items() if summary.counts.get(status)]
    if notes:
        console.print(
            "; ".join(notes) + " (a confidence not stated counts as missing: the 'missing' "
            "column, never as 0 or 1)",
            style="dim",
        )
    console.print(
        f"full metrics (ECE with 1000-resample intervals, Brier, missingness test): "
        f"causalverify report {run_dir}",
        style="dim",
    )


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"

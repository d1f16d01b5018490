"""``causalverify papers``: Experiment A (real-paper text agreement) and the RID ablation."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from causalverify.cli._common import (
    cost_text,
    echo,
    echo_json,
    engine_progress,
    friendly_errors,
    json_for_terminal,
    plain,
)
from causalverify.cli._options import (
    base_url_option,
    cache_option,
    max_rpm_option,
    model_access,
    model_concurrency_option,
    prices_option,
    quiet_option,
)

_RUN_DIR = click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
_CORPUS = click.option(
    "--corpus",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A JSONL paper corpus (default: the shipped one).",
)


def _models(value: str) -> list[str]:
    models = [m.strip() for m in value.split(",") if m.strip()]
    if not models:
        raise click.BadParameter("name at least one model")
    return models


def _access(func: Any) -> Any:
    """The model-access options of every asking command."""
    as_json = click.option(
        "--json", "as_json", is_flag=True, help="Print the result as JSON (no progress bar)."
    )
    options = (as_json, quiet_option, max_rpm_option(), prices_option(), cache_option())
    for option in (*options, base_url_option()):
        func = option(func)
    return model_concurrency_option()(func)


@contextmanager
def _settings(
    workers: int,
    base_url: str | None,
    cache_path: Path | None,
    max_rpm: float | None,
    quiet: bool,
    as_json: bool,
    prices_path: Path | None,
) -> Iterator[Any]:
    from rich.console import Console

    from causalverify.papers.run import AskSettings

    access = model_access(
        concurrency=workers,
        base_url=base_url,
        cache_path=cache_path,
        prices_path=prices_path,
        max_rpm=max_rpm,
    )
    with engine_progress(Console(stderr=True), quiet or as_json, "prompts") as callback:
        yield AskSettings(access=access, progress=callback)


def _echo_summary(
    summary: Any, as_json: bool = False, *, models: Sequence[str] = (), prices: Any = None
) -> None:
    """One line per task; its cost says ``unpriced`` for ``models`` without a known price (in
    the default table or the ``--prices`` file ``prices``)."""
    if as_json:
        echo_json(summary)
        return
    from causalverify.models import load_prices

    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items()) or "nothing"
    table = load_prices(prices) if prices is not None else None
    cost = cost_text(summary.cost_usd, models, table)
    click.echo(
        f"{summary.task}: {summary.total} prompts, {summary.skipped} already stored, "
        f"{summary.asked} asked ({summary.requests} API requests, {cost}); {counts}"
    )


@click.group("papers")
def papers() -> None:
    """Experiment A: ask models about real published papers and score L3 (method) and L4
    (direction) against consensus labels; the RID pre-commitment ablation."""


@papers.command("validate")
@_CORPUS
@friendly_errors
def validate(corpus: Path | None) -> None:
    """Check a paper corpus (schema, design names in the text, coverage)."""
    from collections import Counter

    from causalverify.papers.records import load_papers

    records = load_papers(corpus)
    counts = Counter(r.reference.method if r.reference else "unlabelled" for r in records)
    click.echo(
        f"{len(records)} papers OK: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )


_LIMIT = click.option(
    "--limit",
    default=None,
    type=click.IntRange(min=1),
    help="Only N papers, at even steps through the corpus.",
)


@papers.command("run")
@_RUN_DIR
@click.option("--models", required=True, help="Comma-separated provider specs.")
@_CORPUS
@_LIMIT
@_access
@friendly_errors
def run(run_dir: Path, models: str, corpus: Path | None, limit: int | None, **access: Any) -> None:
    """Ask each model for a seven-section analysis plan of every paper (resumable)."""
    from causalverify.papers.run import run_papers

    with _settings(**access) as settings:
        summary = run_papers(
            run_dir, models=_models(models), corpus=corpus, settings=settings, limit=limit
        )
    _echo_summary(summary, access["as_json"], models=_models(models), prices=access["prices_path"])


@papers.command("label")
@_RUN_DIR
@click.option("--labellers", required=True, help="Comma-separated labeller provider specs.")
@click.option(
    "--exclude-evaluated", is_flag=True, help="Leave models evaluated in this run out of the pool."
)
@_CORPUS
@_LIMIT
@_access
@friendly_errors
def label(
    run_dir: Path,
    labellers: str,
    exclude_evaluated: bool,
    corpus: Path | None,
    limit: int | None,
    **access: Any,
) -> None:
    """Consensus labels: each labeller gives a strict-JSON method family and direction."""
    from causalverify.papers.analysis import label_frame, level_counts, load_results
    from causalverify.papers.run import run_labels

    with _settings(**access) as settings:
        pool, summary = run_labels(
            run_dir,
            labellers=_models(labellers),
            exclude_evaluated=exclude_evaluated,
            corpus=corpus,
            settings=settings,
            limit=limit,
        )
    results = load_results(run_dir)
    levels = level_counts(label_frame(results)[0]) if results is not None else {}
    if access["as_json"]:
        echo_json({**plain(summary), "labeller_pool": pool, "levels": levels})
        return
    _echo_summary(summary, models=pool, prices=access["prices_path"])
    echo(f"labeller pool: {', '.join(pool)}")
    if results is not None:
        for layer, counts in levels.items():
            shown = ", ".join(
                f"{k} {v}" for k, v in counts.items() if k not in ("papers", "scoreable")
            )
            click.echo(f"{layer}: {counts['scoreable']}/{counts['papers']} scoreable ({shown})")


@papers.command("judge")
@_RUN_DIR
@click.option("--judge", "judge_model", required=True, help="Provider spec of the S3 judge.")
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(min=1),
    help="Only N stored answers, at even steps through them.",
)
@_access
@friendly_errors
def judge(run_dir: Path, judge_model: str, limit: int | None, **access: Any) -> None:
    """Scorer S3: ask a judge model for the one-word method and direction of every answer."""
    from causalverify.papers.run import run_judge

    with _settings(**access) as settings:
        summary = run_judge(run_dir, judge=judge_model, settings=settings, limit=limit)
    _echo_summary(summary, access["as_json"], models=[judge_model], prices=access["prices_path"])


@papers.command("rid")
@_RUN_DIR
@click.option("--models", required=True, help="Comma-separated provider specs.")
@click.option("--n", "n", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--seed", type=int, required=True, help="Seed of the paper subset.")
@_CORPUS
@_access
@friendly_errors
def rid(run_dir: Path, models: str, n: int, seed: int, corpus: Path | None, **access: Any) -> None:
    """RID ablation: rerun a seeded subset with the pre-commitment prompt; exact McNemar."""
    from causalverify.papers.run import run_rid
    from causalverify.papers.summary import experiment_a_summary

    with _settings(**access) as settings:
        subset, summaries = run_rid(
            run_dir, models=_models(models), n=n, seed=seed, corpus=corpus, settings=settings
        )
    result = experiment_a_summary(run_dir) or {}
    if access["as_json"]:
        echo_json({"papers": subset, "arms": summaries, "rid": result.get("rid")})
        return
    for summary in summaries:
        _echo_summary(summary, models=_models(models), prices=access["prices_path"])
    echo(f"papers: {', '.join(subset)}")
    for model, entry in (result.get("rid") or {}).get("models", {}).items():
        for layer, row in entry.items():
            echo(
                f"{model} {layer}: standard {row['standard']}/{row['n']}, RID {row['rid']}/{row['n']}"
                f" (b={row['b']}, c={row['c']}, exact McNemar p={row['p_mcnemar']:.3g})"
            )


@papers.command("show")
@_RUN_DIR
@click.option("--json", "as_json", is_flag=True, help="Print the whole summary as JSON.")
@friendly_errors
def show(run_dir: Path, as_json: bool) -> None:
    """Print L3/L4 per model and scorer, and how much L4 moves across scorers."""
    from causalverify.errors import StoreError
    from causalverify.papers.summary import experiment_a_summary

    summary = experiment_a_summary(run_dir)
    if summary is None:
        raise StoreError(f"no Experiment A answers in {run_dir}: run `causalverify papers run`")
    if as_json:
        from causalverify.analysis import dumps_summary

        click.echo(json_for_terminal(dumps_summary(summary)), nl=False)
        return
    click.echo(f"labels: {summary['label_source']}; headline scorer {summary['scorer']}")
    for model, by_scorer in summary["layers"].items():
        cells = "  ".join(
            f"{s}: L3 {_rate(v['L3'])} L4 {_rate(v['L4'])}" for s, v in by_scorer.items()
        )
        spread = summary["instability"].get(model, {}).get("range", math.nan)
        echo(f"{model}  {cells}  L4 range {spread:.2f}")


def _rate(entry: dict[str, Any]) -> str:
    return f"{entry['k']}/{entry['n']}"


@papers.group("audit")
def audit() -> None:
    """Human audit of the consensus labels."""


@audit.command("export")
@_RUN_DIR
@click.option("--n", "n", type=click.IntRange(min=1), default=30, show_default=True)
@click.option("--seed", type=int, required=True, help="Seed of the draw.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@friendly_errors
def audit_export(run_dir: Path, n: int, seed: int, out: Path) -> None:
    """Write a blinded labelling sheet (CSV), stratified by method agreement level."""
    from causalverify.papers.analysis import label_frame
    from causalverify.papers.audit import audit_sheet

    results = _results(run_dir)
    labels, _ = label_frame(results)
    sheet = audit_sheet(labels, results.papers, n=n, seed=seed)
    sheet.to_csv(out, index=False, lineterminator="\n")
    click.echo(f"wrote {len(sheet)} papers to {out}; fill in human_method and human_direction")


@audit.command("import")
@_RUN_DIR
@click.argument("sheet", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@friendly_errors
def audit_import(run_dir: Path, sheet: Path, as_json: bool) -> None:
    """Report agreement and Cohen's kappa of SHEET with the labels, overall and by level."""
    import pandas as pd

    from causalverify.papers.analysis import label_frame
    from causalverify.papers.audit import audit_agreement

    frame = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    labels, source = label_frame(_results(run_dir))
    result = audit_agreement(frame, labels)
    if as_json:
        echo_json(result)  # an undefined rate or kappa (nothing compared) is null, not NaN
        return
    click.echo(f"labels compared: {source}")
    for layer, entry in result.items():
        click.echo(f"{layer}: {_agree(entry['overall'])} ({entry['skipped']} rows left out)")
        for level, row in entry["by_level"].items():
            click.echo(f"  {level}: {_agree(row)}")


def _agree(row: dict[str, Any]) -> str:
    kappa = "-" if math.isnan(row["kappa"]) else f"{row['kappa']:.3f}"
    return f"agreement {row['agree']}/{row['n']}, Cohen's kappa {kappa}"


def _results(run_dir: Path) -> Any:
    from causalverify.errors import StoreError
    from causalverify.papers.analysis import load_results

    results = load_results(run_dir)
    if results is None:
        raise StoreError(f"no Experiment A results in {run_dir}: run `causalverify papers run`")
    return results

"""``causalverify exec``: run one script exactly as a benchmark cell is run."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from causalverify.cli._common import clean, friendly_errors, safe_text
from causalverify.cli._options import warm_option
from causalverify.families import FAMILIES, Family, Language
from causalverify.records import DEFAULT_TOLERANCE, CellKey, CellRecord, CodeRecord, ModelResponse
from causalverify.sandbox import ExecResult, Limits, get_sandbox, line_origins

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
        "output origins": _origins_line(result),
    }
    for key, value in rows.items():
        table.add_row(key, safe_text(value))  # fit names, detail: the script wrote them
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


def _origins_line(result: ExecResult) -> str:
    """``12 of 14 stdout lines`` (which code printed them; ``--json`` has the records)."""
    lines = len(result.stdout.splitlines())
    note = f" ({result.outputs_note})" if result.outputs_note else ""
    return f"{len(line_origins(result))} of {lines} stdout lines{note}"


@dataclass(frozen=True)
class Target:
    """What the script's output is scored against: a family, and a canonical if known."""

    family: Family
    canonical: float | None
    conversions: dict[str, int]
    data: Path | None = None
    data_path: str | None = None


def _target(
    suite: Path | None,
    scenario_id: str | None,
    canonical: float | None,
    family: str | None,
) -> Target | None:
    if (suite is None) != (scenario_id is None):
        raise click.UsageError("--suite and --scenario go together")
    if suite is not None and scenario_id is not None:
        if canonical is not None or family is not None:
            raise click.UsageError("give either --suite/--scenario or --canonical/--family")
        from causalverify.scenarios import load_suite

        loaded = load_suite(suite)
        scenario = loaded.get(scenario_id)
        return Target(
            family=scenario.family,
            canonical=scenario.canonical.estimate,
            conversions=dict(scenario.conversions),
            data=loaded.data_path(scenario),
            data_path=scenario.data_file,
        )
    if canonical is not None and family is None:
        raise click.UsageError("--canonical needs --family (which estimate is extracted)")
    if family is None:
        return None
    return Target(family=family, canonical=canonical, conversions={})  # type: ignore[arg-type]


def _scored(result: ExecResult, code: str, language: Language, target: Target) -> CellRecord:
    """The script's output extracted and scored exactly as a cell's (``rescore``)."""
    from causalverify.scoring import rescore

    record = CellRecord(
        key=CellKey(scenario_id="exec", model="exec", language=language),
        family=target.family,
        difficulty="easy",
        beta=math.nan,
        canonical=math.nan if target.canonical is None else target.canonical,
        conversions=target.conversions,
        protocol="default",
        prompt=[],
        prompt_sha256="",
        response=ModelResponse(content=code),
        code=CodeRecord(language=language, code=code, block_index=0, parses=True),
        execution=result,
        status="api_error",
    )
    return rescore(record, profile="default", tolerance=DEFAULT_TOLERANCE)  # the run defaults


def _verdict(record: CellRecord, target: Target) -> dict[str, Any]:
    extraction = record.extraction
    scores = record.scores
    out: dict[str, Any] = {
        "family": target.family,
        "extraction": None if extraction is None else extraction.model_dump(mode="json"),
    }
    if target.canonical is not None and scores is not None:
        rel = scores.rel_error
        out["score"] = {
            "canonical": target.canonical,
            "status": record.status,
            "L2b_plus": scores.L2b_plus,
            "rel_error": None if rel is None or math.isnan(rel) else rel,
            "tolerance": scores.tolerance,
            "profile": scores.profile,
            "conversion": scores.matched_conversion,
        }
    return out


def _verdict_rows(verdict: dict[str, Any]) -> dict[str, str]:
    e = verdict["extraction"]
    if e is None or e["value"] is None:
        rows = {"extracted estimate": "none" + (f" ({e['rationale']})" if e else "")}
    else:
        line = f", line {e['line']}" if e.get("line") else ""
        flag = (
            "; AMBIGUOUS: " + ", ".join(f"{c['value']:g}" for c in e["candidates"])
            if e["ambiguous"]
            else ""
        )
        rows = {"extracted estimate": f"{e['value']:.10g} (rule {e['rule']}{line}){flag}"}
    score = verdict.get("score")
    if score is not None:
        rel = "-" if score["rel_error"] is None else f"{score['rel_error']:.4f}"
        scale = f", scale {score['conversion']}" if score["conversion"] else ""
        rows["score"] = (
            f"{score['status']} against canonical {score['canonical']:.10g} "
            f"(relative error {rel}, tau {score['tolerance']}{scale})"
        )
    return rows


@click.command(name="exec")
@click.argument("script", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--data",
    "data",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="CSV given to the script [default with --suite: the scenario's CSV].",
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
    help="Print the ExecResult as JSON (the fit log as its `fits` list, which code printed "
    "each part of stdout as `outputs`).",
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
@click.option(
    "--suite",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A built suite: with --scenario, run on its CSV and score against its canonical.",
)
@click.option("--scenario", "scenario_id", default=None, help="Scenario id in --suite.")
@click.option(
    "--canonical",
    type=float,
    default=None,
    help="Score the extracted estimate against this value (needs --family).",
)
@click.option(
    "--family",
    type=click.Choice(FAMILIES),
    default=None,
    help="Design family, so the extractor knows which estimate it reads.",
)
@warm_option()
@friendly_errors
def exec_(
    script: Path,
    data: Path | None,
    data_path: str | None,
    as_json: bool,
    wall_seconds: float,
    unsafe_no_sandbox: bool,
    suite: Path | None,
    scenario_id: str | None,
    canonical: float | None,
    family: str | None,
    warm: bool | None,
) -> None:
    """Run SCRIPT (.R or .py) in the sandbox with the CSV at data/<name>, as a cell is run.

    With --suite/--scenario or --family (and --canonical), also print what the extractor takes
    from the output and its score, exactly as a benchmark cell is scored (default profile,
    tau 0.5). The exit status is 1 when the script fails. The script's output is shown without
    terminal control sequences; --json gives it exactly.
    """
    language = _SUFFIX.get(script.suffix.lower())
    if language is None:
        raise click.BadParameter("SCRIPT must end in .R or .py", param_hint="SCRIPT")
    target = _target(suite, scenario_id, canonical, family)
    data = data if data is not None else (target.data if target is not None else None)
    if data is None:
        raise click.UsageError("give --data CSV (or --suite S --scenario ID)")
    sandbox = get_sandbox(unsafe=unsafe_no_sandbox, warm=warm)
    code = script.read_text(encoding="utf-8")
    default_rel = target.data_path if target is not None and target.data_path else None
    rel = data_path or default_rel or f"data/{data.name}"
    limits = Limits(wall_seconds=wall_seconds)
    result = sandbox.run(code, language, {rel: data.resolve()}, limits=limits)
    verdict = _verdict(_scored(result, code, language, target), target) if target else None
    if as_json:
        payload = json.loads(result.model_dump_json())
        if verdict is not None:
            payload.update(verdict)
        click.echo(json.dumps(payload, indent=2))
    else:
        # without terminal control sequences; --json has both streams as they were
        click.echo(clean(result.stdout), nl=False)
        if result.stderr:
            click.echo(clean(result.stderr), nl=False, err=True)
        table = _summary(result)
        for key, value in (_verdict_rows(verdict) if verdict is not None else {}).items():
            table.add_row(key, safe_text(value))
        Console(stderr=True).print(table)
    sys.exit(0 if result.ok else 1)

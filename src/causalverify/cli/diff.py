"""``causalverify diff``: two runs (or two models of one run) compared cell by cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from causalverify.cli._common import echo_json, friendly_errors, safe_text
from causalverify.cli._options import ci_option, resamples_option
from causalverify.errors import CausalVerifyError
from causalverify.records import RunMeta

#: flipped scenarios listed per direction in the terminal (all of them are in --json)
SHOWN_FLIPS = 15


def _load(run_dir: Path) -> tuple[Any, RunMeta]:
    from causalverify.analysis import prepare_cells
    from causalverify.release import load_cells

    frame, meta = load_cells(run_dir)
    cells = prepare_cells(frame)
    return cells[cells["status"] != "api_error"].reset_index(drop=True), meta


def _models(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise click.UsageError("--models takes two model names: --models A,B")
    return parts[0], parts[1]


def _pick(cells: Any, model: str, where: Path) -> Any:
    chosen = cells[cells["model"] == model]
    if chosen.empty:
        have = ", ".join(sorted(cells["model"].unique()))
        raise CausalVerifyError(f"{where} has no cell of model {model!r} (it has: {have})")
    return chosen


def _labels(run_a: Path, run_b: Path) -> tuple[str, str]:
    a, b = run_a.name, run_b.name
    if a == b:
        a, b = str(run_a), str(run_b)
    return a, b


def _mode(meta: RunMeta) -> str:
    if meta.mode is not None and meta.mode.name == "repair":
        return f"repair (final of {meta.mode.max_turns} turns)"
    return "single"


def _describe(meta: RunMeta) -> str:
    settings = {"protocol": meta.protocol, "profile": meta.profile, "tolerance": meta.tolerance}
    return ", ".join([_mode(meta), *(f"{k} {v}" for k, v in settings.items() if meta.has(k))])


def _report_index(run_dir: Path) -> Path | None:
    index = run_dir / "report" / "index.html"
    return index.resolve() if index.is_file() else None


def _add_links(entry: dict[str, Any], index_a: Path | None, index_b: Path | None) -> None:
    from causalverify.report._explorer_page import cell_address

    for direction in ("a_only", "b_only"):
        for flip in entry["flips"][direction]:
            for side, index in (("a", index_a), ("b", index_b)):
                if index is None:
                    continue
                model = entry[f"model_{side}"]
                address = cell_address(flip["scenario_id"], model, flip["language"], flip["sample"])
                flip[f"link_{side}"] = index.as_uri() + address


def _print(result: dict[str, Any]) -> None:
    from rich.console import Console

    from causalverify.cli._tables import pct, print_table

    console = Console()
    for line in result["settings"]:
        console.print(safe_text(line))
    console.print()
    for e in result["comparisons"]:
        rows = []
        for layer, d in e["layers"].items():
            p, adjusted = d["p"], d["p_holm"]
            rows.append(
                (
                    {"L2b_plus": "L2b+"}.get(layer, layer),
                    f"{d['n']}",
                    pct(d["rate_a"]),
                    pct(d["rate_b"]),
                    _signed(d["difference"])
                    + (f" [{_signed(d['lo'])}, {_signed(d['hi'])}]" if d["n"] else ""),
                    f"{d['a_only']} / {d['b_only']}",
                    _p(p),
                    _p(adjusted),
                )
            )
        print_table(
            console,
            title=f"A = {e['a']}  vs  B = {e['b']}",
            header=("layer", "pairs", "A", "B", "B − A [95% CI]", "A only / B only", "p", "p Holm"),
            rows=rows,
            note=f"{e['pairs']} cells paired on scenario, language and sample over "
            f"{e['scenarios']} scenarios ({e['only_a']} of A and {e['only_b']} of B unpaired). "
            "Intervals clustered by scenario; p: exact scenario sign-flip test.",
        )
        for direction, label in (("b_only", "B right, A not"), ("a_only", "A right, B not")):
            flips = e["flips"][direction]
            if not flips:
                continue
            console.print(f"L2b+ flipped ({label}): {len(flips)}", style="bold", markup=False)
            for flip in flips[:SHOWN_FLIPS]:
                where = f"  {flip['scenario_id']} {flip['language']} sample {flip['sample']}"
                link = flip.get("link_b" if direction == "b_only" else "link_a")
                console.print(safe_text(where + (f"  {link}" if link else "")))
            if len(flips) > SHOWN_FLIPS:
                console.print(f"  ... and {len(flips) - SHOWN_FLIPS} more (--json lists all)")
        console.print(safe_text(e["verdict"], style="bold"))
        console.print()


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f} pp"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


@click.command("diff")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument(
    "run_b", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--models",
    default=None,
    help="A,B: model A (of RUN_A) against model B (of RUN_B, or of RUN_A when only one run is "
    "given). Without it, two runs are compared model by model (or their only models).",
)
@ci_option()
@click.option("--seed", type=int, default=None, help="Bootstrap seed (--ci bootstrap).")
@resamples_option()
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@friendly_errors
def diff(
    run_a: Path,
    run_b: Path | None,
    models: str | None,
    ci: str,
    seed: int | None,
    resamples: int,
    as_json: bool,
) -> None:
    """Compare RUN_A with RUN_B (or two models of RUN_A: --models A,B) cell by cell.

    Cells are paired on scenario, language and sample (a repair-mode cell by its final turn);
    each layer's difference B − A has a scenario-clustered 95% interval, an exact scenario
    sign-flip p-value and a Holm-adjusted one. Scenarios that flipped either way are listed
    (with links into the cell explorer when the run has a report), then a verdict on L2b+.
    Runs on different suites are refused. RUN_A and RUN_B may be frozen releases.
    """
    from causalverify.analysis import (
        DEFAULT_SEED,
        CiMethod,
        IntervalSettings,
        Side,
        check_same_suite,
        diff_sides,
    )

    chosen = _models(models)
    cells_a, meta_a = _load(run_a)
    if run_b is None:
        if chosen is None:
            raise click.UsageError("with one run, name the two models to compare: --models A,B")
        label = run_a.name
        sides = [
            (
                Side(
                    label=f"{label}:{chosen[0]}",
                    model=chosen[0],
                    cells=_pick(cells_a, chosen[0], run_a),
                ),
                Side(
                    label=f"{label}:{chosen[1]}",
                    model=chosen[1],
                    cells=_pick(cells_a, chosen[1], run_a),
                ),
            )
        ]
        run_b, meta_b = run_a, meta_a
    else:
        cells_b, meta_b = _load(run_b)
        check_same_suite(meta_a, meta_b, cells_a, cells_b)
        label_a, label_b = _labels(run_a, run_b)
        if chosen is not None:
            pairs = [chosen]
        else:
            common = sorted(set(cells_a["model"]) & set(cells_b["model"]))
            only = (cells_a["model"].nunique(), cells_b["model"].nunique()) == (1, 1)
            if common:
                pairs = [(m, m) for m in common]
            elif only:
                pairs = [(cells_a["model"].iloc[0], cells_b["model"].iloc[0])]
            else:
                raise click.UsageError(
                    "the runs share no model: name the two to compare with --models A,B"
                )
        sides = [
            (
                Side(label=f"{label_a}:{a}", model=a, cells=_pick(cells_a, a, run_a)),
                Side(label=f"{label_b}:{b}", model=b, cells=_pick(cells_b, b, run_b)),
            )
            for a, b in pairs
        ]
    method: CiMethod = (
        "bootstrap" if ci == "bootstrap" else "wilson" if ci == "wilson" else "cluster"
    )
    settings = IntervalSettings(
        method=method, seed=DEFAULT_SEED if seed is None else seed, n_resamples=resamples
    )
    comparisons = diff_sides(sides, settings=settings)
    index_a, index_b = _report_index(run_a), _report_index(run_b)
    for entry in comparisons:
        _add_links(entry, index_a, index_b)
    result = {
        "run_a": str(run_a),
        "run_b": str(run_b),
        "intervals": settings.as_dict(),
        "settings": [f"A: {run_a} ({_describe(meta_a)})", f"B: {run_b} ({_describe(meta_b)})"],
        "comparisons": comparisons,
    }
    if as_json:
        echo_json(result)
    else:
        _print(result)

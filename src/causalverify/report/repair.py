"""The repair section of the report: L2b and L2b+ by turn, the repair gain, the cost of a success.

Present only for repair-mode runs (``causalverify run --mode repair``); everything shown is read
from ``summary.json["repair"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from causalverify.analysis import IntervalSettings, repair_summary
from causalverify.models.pricing import format_cost
from causalverify.records import CellRecord, RunMeta, Summary
from causalverify.report._figures import _RC, _save, new_figure, wrap_name
from causalverify.report._tables import Table, num, pct

CAPTION: Final[str] = (
    "Repair mode: the share of cells that execute (L2b, left) and that compute the right "
    "number (L2b+, right) after each turn, one line per model, shaded by its "
    "scenario-clustered 95% interval. Turn 1 is the single-shot "
    "result; the feedback shows errors, never whether a number is right."
)


def repair_entry(
    records: Sequence[CellRecord],
    meta: RunMeta | None,
    *,
    settings: IntervalSettings | None = None,
) -> dict[str, Any] | None:
    """``summary.json["repair"]`` for a repair-mode run, None for a single-mode one."""
    if meta is None or meta.mode is None or meta.mode.name != "repair":
        return None
    models = meta.models if meta.has("models") else None
    return repair_summary(records, int(meta.mode.max_turns or 1), models=models, settings=settings)


def _by_turn(series: Sequence[float | None], intervals: Sequence[Any] | None = None) -> str:
    if not intervals:
        return " → ".join(pct(v) for v in series)
    return " → ".join(
        pct(v) if ci is None else f"{pct(v)} [{pct(ci[0])}, {pct(ci[1])}]"
        for v, ci in zip(series, intervals, strict=False)
    )


def _signed(value: float | None, interval: Mapping[str, Any] | None = None) -> str:
    if value is None:
        return "–"
    text = f"{100 * value:+.1f} pts"
    if interval and interval.get("lo") is not None and interval.get("hi") is not None:
        lo, hi = 100 * interval["lo"], 100 * interval["hi"]
        text += f" [{lo:+.1f}, {hi:+.1f}]"
    return text


def repair_tables(repair: Mapping[str, Any]) -> list[Table]:
    """The repair table: by-turn rates, gains, turns used, cost per success, pass@k."""
    rows = []
    for model, e in repair.items():
        pass_k = ", ".join(f"@{k} {pct(v)}" for k, v in e["pass_at_k"].items())
        cost = e["cost_per_success"]
        rows.append(
            (
                model,
                _by_turn(e["L2b_by_turn"], e.get("L2b_by_turn_ci")),
                _by_turn(e["L2b_plus_by_turn"], e.get("L2b_plus_by_turn_ci")),
                _signed(e["repair_gain"]["L2b"], (e.get("repair_gain_ci") or {}).get("L2b")),
                _signed(
                    e["repair_gain"]["L2b_plus"], (e.get("repair_gain_ci") or {}).get("L2b_plus")
                ),
                _signed(e["repair_gain"]["executed_wrong"]),
                num(e["mean_turns"], 2),
                "–" if e["tokens_per_success"] is None else f"{e['tokens_per_success']:.0f}",
                format_cost(cost, [model] if e.get("unpriced") else (), hint=False),
                pass_k or "–",
            )
        )
    header = (
        "model",
        "L2b by turn",
        "L2b+ by turn",
        "L2b gain",
        "L2b+ gain",
        "executed-wrong gain",
        "mean turns",
        "tokens / success",
        "cost / success",
        "pass@k",
    )
    note = (
        "After each turn, the share of scoreable cells that executed (L2b) and that computed the "
        "right number (L2b+), with its scenario-clustered 95% interval; a cell that ended earlier "
        "keeps its result. Gains are turn K minus "
        "turn 1, with the 95% interval of that paired difference (the same cells at both "
        "turns, clustered by scenario). Executed-wrong: executed with an estimate outside the tolerance. Tokens and cost "
        "count every turn; unpriced: a paid model with no known price (give --prices FILE). "
        "pass@k: unbiased, over the samples of each scenario and language."
    )
    return [
        Table(
            key="repair",
            title="Repair mode: turn by turn",
            header=header,
            rows=tuple(rows),
            note=note,
        )
    ]


def write_repair_figures(summary: Summary, folder: Path) -> dict[str, Path]:
    """Draw L2b and L2b+ by turn when the summary has a repair section."""
    repair = summary.repair
    if not repair:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    import matplotlib as mpl

    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        fig = new_figure((9.0, 4.0))
        panels = fig.subplots(1, 2, sharey=True)
        colours = mpl.colormaps["tab10"]
        for ax, key, label in (
            (panels[0], "L2b_by_turn", "executes (L2b)"),
            (panels[1], "L2b_plus_by_turn", "right number (L2b+)"),
        ):
            turns = 1
            for i, (model, entry) in enumerate(repair.items()):
                values = [float("nan") if v is None else v for v in entry[key]]
                xs = list(range(1, len(values) + 1))
                turns = max(turns, len(xs))
                ax.plot(xs, values, marker="o", color=colours(i % 10), label=wrap_name(model, 28))
                bands = entry.get(f"{key}_ci") or []
                if bands and all(b is not None for b in bands):
                    ax.fill_between(
                        xs,
                        [b[0] for b in bands],
                        [b[1] for b in bands],
                        color=colours(i % 10),
                        alpha=0.12,
                        linewidth=0,
                    )
            ax.set_xticks(range(1, turns + 1))
            ax.set_xlabel("turn")
            ax.set_title(label, fontsize=10)
            ax.set_ylim(-0.02, 1.02)
        panels[0].set_ylabel("share of cells")
        panels[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
        fig.tight_layout()
        path = folder / "repair_by_turn.png"
        _save(fig, path)
    return {"repair_by_turn": path}

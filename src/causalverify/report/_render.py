"""Render the report tables as Markdown (``leaderboard.md``) and self-contained HTML."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from causalverify.report._catalog import all_tables
from causalverify.report._tables import Table, num
from causalverify.report.calibration import CAPTION as CALIBRATION_CAPTION
from causalverify.report.repair import CAPTION as REPAIR_CAPTION

_CSS: Final[str] = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222;
       padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; }
.note { color: #555; font-size: 0.85rem; }
figure { margin: 1rem 0; } img { max-width: 100%; }
figcaption { color: #555; font-size: 0.85rem; }
"""

_CAPTIONS: Final[dict[str, str]] = {
    "cascade": "Execution cascade: L1 → L2a → L2b → L2b+ per unit.",
    "tolerance_sweep": "L2b+ rate at each relative-error tolerance.",
    "rel_error_cdf": "Empirical CDF of the relative error of executed estimates.",
    "family_heatmap": "L2b+ rate per unit and design family.",
    "rank_agreement": "Rank by execution (L2b) against rank by correct estimate (L2b+).",
    "repair_by_turn": REPAIR_CAPTION,
    "experiment_a_scorers": "Experiment A: L4 (direction agreement) per model under each scorer.",
    "experiment_a_rid": "Experiment A: L4 in the standard and the RID arm on the same papers.",
}


def incomplete_banner(s: Mapping[str, Any]) -> str | None:
    """``incomplete: N cells without an answer (...)`` when cells failed at the API, else None."""
    incomplete = s.get("incomplete") or {}
    n = int(incomplete.get("cells", 0))
    if not n:
        return None
    per = ", ".join(f"{m} {k}" for m, k in incomplete.get("by_model", {}).items())
    return (
        f"incomplete: {n} cells without an answer ({per}); they are left out of every rate. "
        "Rerun the same `causalverify run` command to retry them."
    )


def settings_line(s: Mapping[str, Any]) -> str | None:
    """The scoring settings the report shows (suite, protocol, profile, tolerance, extractor)."""
    run = dict(s.get("run") or {})
    if not run:
        return None
    run.update(run.get("rescored") or {})  # `causalverify score` rescored the cells
    names = ("suite_seed", "protocol", "profile", "tolerance", "extractor")
    labels = ("suite seed", "protocol", "profile", "tolerance", "extractor")
    parts = [f"{label} {run[k]}" for k, label in zip(names, labels, strict=True) if k in run]
    return "Settings: " + ", ".join(parts) + "." if parts else None


def _overview(s: Mapping[str, Any]) -> list[str]:
    ew = s["executed_wrong"]
    tau = s["rank_correlation"].get("L2b", {})
    lines = [line for line in (incomplete_banner(s), settings_line(s)) if line]
    return [
        *lines,
        f"{s['n_cells']} cells: {len(s['units'])} {s['unit']}(s) × {s['n_scenarios']} scenarios"
        f" ({', '.join(s['families'])}); languages: {', '.join(s['languages'])}.",
        f"Executed but wrong: {ew['count']} of {ew['denominator']} executed scoreable cells.",
        f"Kendall τ-b between the L2b and L2b+ rankings: {num(tau.get('kendall_tau'))}"
        f" (Spearman ρ {num(tau.get('spearman_rho'))}).",
    ]


def _md_table(table: Table) -> str:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [f"## {table.title}", "", line(table.header), line(tuple("---" for _ in table.header))]
    out += [line(row) for row in table.rows]
    if table.note:
        out += ["", f"_{table.note}_"]
    return "\n".join(out) + "\n"


def render_markdown(summary: Mapping[str, Any], title: str) -> str:
    """``leaderboard.md``: the overview and every table, from the summary only."""
    parts = [f"# {title}\n", "\n".join(f"- {line}" for line in _overview(summary)) + "\n"]
    parts += [_md_table(t) for t in all_tables(summary)]
    return "\n".join(parts)


def _html_table(table: Table) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(c)}</th>" for c in table.header)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in table.rows
    )
    note = f'<p class="note">{esc(table.note)}</p>' if table.note else ""
    return (
        f'<section id="{esc(table.key)}"><h2>{esc(table.title)}</h2>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}</section>"
    )


def _html_figure(name: str, path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = html.escape(
        _CAPTIONS.get(name, CALIBRATION_CAPTION if "calibration" in name else name)
    )
    return (
        f'<figure id="fig-{name}"><img alt="{caption}" src="data:image/png;base64,{data}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def render_html(summary: Mapping[str, Any], title: str, figures: Mapping[str, Path]) -> str:
    """``index.html``: one self-contained page (inline CSS, figures embedded as base64 PNG)."""
    esc = html.escape
    overview = "".join(f"<li>{esc(line)}</li>" for line in _overview(summary))
    tables = "\n".join(_html_table(t) for t in all_tables(summary))
    figs = "\n".join(_html_figure(name, path) for name, path in figures.items())
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{_CSS}</style></head>\n<body>\n<h1>{esc(title)}</h1>\n<ul>{overview}</ul>\n"
        f'{tables}\n<section id="figures"><h2>Figures</h2>\n{figs}\n</section>\n'
        "</body></html>\n"
    )

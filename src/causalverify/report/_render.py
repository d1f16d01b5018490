"""Render the report tables as Markdown (``leaderboard.md``) and self-contained HTML."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from causalverify.records import Summary
from causalverify.records.summary import Incomplete, RankCorrelation
from causalverify.report._catalog import MIN_RANKED, all_tables
from causalverify.report._explorer_page import CSS as EXPLORER_CSS
from causalverify.report._explorer_page import explorer_markup
from causalverify.report._tables import Table, num
from causalverify.report.calibration import CAPTION as CALIBRATION_CAPTION
from causalverify.report.repair import CAPTION as REPAIR_CAPTION

_CSS: Final[str] = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222;
       padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child, th.text, td.text { text-align: left; }
.grid { max-width: 100%; overflow-x: auto; }
th { background: #f2f2f2; }
tr.tied td { background: #e6f2e6; }
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


def incomplete_banner(s: Summary | Incomplete) -> str | None:
    """``incomplete: N cells without an answer (...)`` when cells failed at the API, else None
    (of a summary, or of the counts a command has at hand)."""
    incomplete = s.incomplete if isinstance(s, Summary) else s
    n = incomplete.cells
    if not n:
        return None
    per = ", ".join(f"{m} {k}" for m, k in incomplete.by_model.items())
    return (
        f"incomplete: {n} cells without an answer ({per}); they are left out of every rate. "
        "Rerun the same `causalverify run` command to retry them."
    )


def unfinished_banner(s: Summary) -> str | None:
    """``unfinished: N cells ...`` when the harness could not finish cells, else None."""
    overall = s.taxonomy.overall
    parts = [
        f"{int(overall[k])} {label}"
        for k, label in (
            ("extraction_limit", "hit the extraction and scoring budget (extraction_limit)"),
            ("harness_error", "met a harness error (harness_error)"),
        )
        if overall.get(k)
    ]
    if not parts:
        return None
    return (
        f"unfinished: {' and '.join(parts)}; they count as failing L2b+, and each cell's "
        "status_reason says why."
    )


def extraction_lines(s: Summary) -> list[str]:
    """Undecided cells (L2b+ shown as bounds), answers with several code blocks and declared
    estimates, per unit, when any."""
    lines = []
    undecided = s.undecided
    if undecided.cells:
        per = ", ".join(f"{u} {n}" for u, n in undecided.by_unit.items() if n)
        lines.append(
            f"Undecided: {undecided.cells} cells ({per}) printed candidates that neither all "
            "pass nor all fail; their L2b+ is shown as bounds (lower–upper)."
        )
    several = s.several_blocks
    if several.cells:
        per = ", ".join(f"{u} {n}" for u, n in several.by_unit.items() if n)
        lines.append(
            f"Several code blocks: {several.cells} cells ({per}) answered with more than one "
            "code block of the requested language, against the prompt's exactly one; the first "
            "ran and was scored (each cell's page says which block ran)."
        )
    declared = s.declared
    if declared.asked:
        per = ", ".join(
            f"{u} {d.accepted}/{d.asked}" for u, d in declared.by_unit.items() if d.asked
        )
        lines.append(
            f"Declared: {declared.asked} cells without an ESTIMATE line or undecided were "
            f"asked which printed number is their estimate; {declared.accepted} named a "
            f"number their output prints (accepted/asked: {per})."
        )
    return lines


def settings_line(s: Summary) -> str | None:
    """The settings the report shows (suite seed, protocol, profile, tolerance, extractor and
    mode: single, or repair with its turns)."""
    if s.run is None:
        return None
    run = s.run.model_dump(exclude_unset=True)
    if not run:
        return None
    if s.run.rescored is not None:  # `causalverify score` rescored the cells
        run.update(s.run.rescored.model_dump())
    names = ("suite_seed", "protocol", "profile", "tolerance", "extractor")
    labels = ("suite seed", "protocol", "profile", "tolerance", "extractor")
    parts = [f"{label} {run[k]}" for k, label in zip(names, labels, strict=True) if k in run]
    mode = s.run.mode
    if mode is not None and mode.name == "repair":
        parts.append(f"mode repair (up to {mode.max_turns} turns per cell)")
    elif mode is not None:
        parts.append(f"mode {mode.name}")
    return "Settings: " + ", ".join(parts) + "." if parts else None


def _overview(s: Summary) -> list[str]:
    ew = s.executed_wrong
    tau = s.rank_correlation.get("L2b", RankCorrelation())
    banners = (incomplete_banner(s), unfinished_banner(s), settings_line(s))
    lines = [line for line in banners if line]
    ranks = (
        [
            f"Kendall τ-b between the L2b and L2b+ rankings: {num(tau.kendall_tau)}"
            f" (Spearman ρ {num(tau.spearman_rho)})."
        ]
        if len(s.units) >= MIN_RANKED
        else []
    )
    return [
        *lines,
        f"{s.n_cells} cells: {len(s.units)} {s.unit}(s) × {s.n_scenarios} scenarios"
        f" ({', '.join(s.families)}); languages: {', '.join(s.languages)}.",
        f"Executed but wrong: {ew.count} of {ew.denominator} executed scoreable cells.",
        *extraction_lines(s),
        *ranks,
        *power_lines(s),
    ]


def power_lines(s: Summary) -> list[str]:
    """Who is tied with #1, and the smallest L2b+ difference this design detects."""
    lines = []
    tied = s.pairwise.tied_with_leader
    if len(tied) > 1:
        lines.append(
            f"Not distinguishable from #1 on L2b+ (Holm-adjusted exact test, 5%): "
            f"{', '.join(tied[1:])}."
        )
    mde = s.power.mde
    if mde is not None:
        lines.append(
            f"With {s.power.scenarios} scenarios the smallest L2b+ difference between two "
            f"models this design detects with 80% power is {100 * mde:.0f} pp."
        )
    return lines


def _md_table(table: Table) -> str:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [f"## {table.title}", "", line(table.header), line(tuple("---" for _ in table.header))]
    out += [line(row) for row in table.rows]
    if table.note:
        out += ["", f"_{table.note}_"]
    return "\n".join(out) + "\n"


def render_markdown(summary: Summary, title: str) -> str:
    """``leaderboard.md``: the overview and every table, from the summary only."""
    parts = [f"# {title}\n", "\n".join(f"- {line}" for line in _overview(summary)) + "\n"]
    parts += [_md_table(t) for t in all_tables(summary)]
    return "\n".join(parts)


def _html_cell(text: str, link: str, left: bool = False) -> str:
    esc = html.escape
    td = '<td class="text">' if left else "<td>"
    return f'{td}<a href="{esc(link)}">{esc(text)}</a></td>' if link else f"{td}{esc(text)}</td>"


#: a cell that reads as a number (or as no value): right-aligned
_NUMBERISH = re.compile(r"^\s*([-+−–]?\s*[\d.$\[(]|[-–]?\s*$|n/a$|yes$|no$)")


def _text_columns(table: Table) -> set[int]:
    """The columns of names and words (model names, families, layers), aligned left."""
    return {
        i
        for i in range(len(table.header))
        if table.rows and not any(_NUMBERISH.match(str(row[i])) for row in table.rows)
    }


def _html_table(table: Table, *, collapsed: bool = False) -> str:
    esc = html.escape
    left = _text_columns(table)
    head = "".join(
        f'<th class="text">{esc(c)}</th>' if i in left else f"<th>{esc(c)}</th>"
        for i, c in enumerate(table.header)
    )
    links = table.links or tuple(("",) * len(row) for row in table.rows)
    classes = table.row_classes or ("",) * len(table.rows)
    body = "".join(
        (f'<tr class="{esc(cls)}">' if cls else "<tr>")
        + "".join(
            _html_cell(c, a, i in left) for i, (c, a) in enumerate(zip(row, link, strict=True))
        )
        + "</tr>"
        for row, link, cls in zip(table.rows, links, classes, strict=True)
    )
    note = f'<p class="note">{esc(table.note)}</p>' if table.note else ""
    grid = (
        f'<div class="grid"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f"</div>{note}"
    )
    if collapsed:
        return (
            f'<section id="{esc(table.key)}"><details><summary>{esc(table.title)}</summary>'
            f"{grid}</details></section>"
        )
    return f'<section id="{esc(table.key)}"><h2>{esc(table.title)}</h2>{grid}</section>'


def _html_figure(name: str, path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = html.escape(
        _CAPTIONS.get(name, CALIBRATION_CAPTION if "calibration" in name else name)
    )
    return (
        f'<figure id="fig-{name}"><img alt="{caption}" src="data:image/png;base64,{data}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


#: the figure shown at the top of the report, beside the leaderboard
HEADLINE_FIGURE: Final[str] = "rank_agreement"
#: the tables shown open at the top: the leaderboard, then the inference layer L2c beside it,
#: and in a repair-mode run its turn-by-turn table
_SHOWN: Final[frozenset[str]] = frozenset({"leaderboard", "inference", "repair"})


def render_html(
    summary: Summary,
    title: str,
    figures: Mapping[str, Path],
    *,
    explorer: bool = False,
) -> str:
    """``index.html``: one self-contained page (inline CSS and script, figures embedded as base64
    PNG). It leads with the leaderboard and the headline figure; the cell explorer follows (its
    data in ``explorer/`` beside the page, when ``explorer``); the other tables and figures are
    collapsed below (the inference layer L2c, when the run has it, follows the leaderboard
    as its own table)."""
    esc = html.escape
    overview = "".join(f"<li>{esc(line)}</li>" for line in _overview(summary))
    tables = all_tables(summary)
    top = [t for t in tables if t.key in _SHOWN]
    rest = [t for t in tables if t.key not in _SHOWN]
    lead = "\n".join(_html_table(t) for t in top)
    headline = "".join(
        _html_figure(name, path) for name, path in figures.items() if name == HEADLINE_FIGURE
    )
    more = "\n".join(_html_table(t, collapsed=True) for t in rest)
    figs = "\n".join(
        _html_figure(name, path) for name, path in figures.items() if name != HEADLINE_FIGURE
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{_CSS}{EXPLORER_CSS}</style></head>\n<body>\n<h1>{esc(title)}</h1>\n"
        f"<ul>{overview}</ul>\n{lead}\n{headline}\n{explorer_markup(explorer)}\n"
        f'<section id="tables"><h2>All tables</h2>\n{more}\n</section>\n'
        f'<section id="figures"><details><summary>Figures</summary>\n{figs}\n</details>'
        "</section>\n</body></html>\n"
    )

"""The Experiment A tables of the report, built from ``summary.json["experiment_a"]`` alone.

Five tables: L3/L4 per model under the headline scorer, the labels by agreement level, L4 under
every scorer (instability), the RID ablation and the L4 against L2b+ rank contrast. A value that
is ``null`` in the summary is shown as ``n/a``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from causalverify.report._tables import Table, num, pct

NA: Final[str] = "n/a"
#: keys of an ``agreement_levels`` layer that are totals, not agreement levels
_TOTALS: Final[tuple[str, ...]] = ("scoreable", "papers")


def _pct(value: float | None) -> str:
    return NA if value is None else pct(value)


def _num(value: float | None) -> str:
    return NA if value is None else num(value)


def _rate(entry: Mapping[str, Any] | None) -> tuple[str, str]:
    """``("80.0% [49.0%, 94.3%]", "8/10")`` for one L3/L4 entry; ``n/a`` when absent."""
    if not entry:
        return NA, NA
    shown = _pct(entry["rate"])
    if entry["rate"] is not None and entry["lo"] is not None:
        shown += f" [{pct(entry['lo'])}, {pct(entry['hi'])}]"
    return shown, f"{entry['k']}/{entry['n']}"


def headline_rates(entry: Mapping[str, Any]) -> Table:
    """L3 and L4 per model under the headline scorer, with k / scoreable papers."""
    scorer = entry["scorer"]
    rows = []
    for model in entry["models"]:
        by_scorer = entry["layers"].get(model, {}).get(scorer, {})
        l3, l4 = _rate(by_scorer.get("L3")), _rate(by_scorer.get("L4"))
        rows.append((model, *l3, *l4))
    labellers = ", ".join(entry["labellers"]) or "none"
    return Table(
        key="experiment_a-rates",
        title=f"Experiment A: method (L3) and direction (L4) agreement, scorer {scorer}",
        header=("model", "L3 [95% Wilson]", "L3 k/n", "L4 [95% Wilson]", "L4 k/n"),
        rows=tuple(rows),
        note=(
            f"{entry['papers']} papers; labels: {entry['label_source']} (labellers: "
            f"{labellers}); n counts the scoreable papers (a label exists) the model answered."
        ),
    )


def _level_order(level: str) -> tuple[int, tuple[int, ...]]:
    """Majorities (``4/4``, ``3/4``) first, then plurality patterns, then patterns with no label."""
    if "/" in level:
        top = level.split("/")[0]
        return 0, (-int(top) if top.isdigit() else 0,)
    parts = [int(p) for p in level.split("-") if p.isdigit()]
    if not parts:
        return 3, ()
    labelled = len(parts) == 1 or parts[0] > parts[1]
    return (1 if labelled else 2), tuple(-p for p in parts)


def agreement_levels(entry: Mapping[str, Any]) -> Table:
    """Papers per labeller agreement level and layer, the totals and the hand-label agreement."""
    counts = entry["agreement_levels"]
    layers = sorted(counts)
    levels = sorted(
        {lvl for layer in layers for lvl in counts[layer] if lvl not in _TOTALS},
        key=lambda lvl: (_level_order(lvl), lvl),
    )
    rows = [(lvl, *(str(counts[layer].get(lvl, 0)) for layer in layers)) for lvl in levels]
    rows.append(("scoreable (labelled)", *(str(counts[layer]["scoreable"]) for layer in layers)))
    rows.append(("papers", *(str(counts[layer]["papers"]) for layer in layers)))
    agree = entry.get("reference_agreement", {})
    if agree:
        rows.append(
            (
                "agrees with the hand label",
                *(
                    f"{agree[layer]['agree']}/{agree[layer]['n']}" if layer in agree else NA
                    for layer in layers
                ),
            )
        )
    return Table(
        key="experiment_a-levels",
        title="Experiment A: labels by agreement level (papers)",
        header=("agreement level", *layers),
        rows=tuple(rows),
        note=(
            "k/n: k of n labellers agree; a pattern such as 2-1-1 lists the vote counts "
            "(abstentions count as single votes); a label needs a strict plurality."
        ),
    )


def instability(entry: Mapping[str, Any]) -> Table:
    """L4 per model under each scorer present, its range and the share of flipping answers."""
    scorers = list(entry["scorers"])
    rows = []
    for model, e in sorted(entry["instability"].items()):
        rates = [_pct(e["L4"].get(s)) for s in scorers]
        span = NA if e["range"] is None else f"{100 * e['range']:.1f} pp"
        rows.append((model, *rates, span, _pct(e["flip_share"]), str(e["n_papers"])))
    return Table(
        key="experiment_a-instability",
        title="Experiment A: L4 by scorer (scorer instability)",
        header=("model", *(f"L4 {s}" for s in scorers), "range", "answers that flip", "papers"),
        rows=tuple(rows),
        note=(
            "Range: highest minus lowest L4 across scorers (percentage points); answers that "
            "flip: share of scoreable papers whose L4 outcome differs between scorers."
        ),
    )


def _arm(layer: Mapping[str, Any], arm: str) -> str:
    n = layer["n"]
    return f"{layer[arm]}/{n}" + (f" ({pct(layer[arm] / n)})" if n else "")


def rid_ablation(entry: Mapping[str, Any]) -> Table | None:
    """Standard against RID arm per model and layer on the same papers; ``None`` without RID."""
    rid = entry.get("rid")
    if not rid or not rid.get("models"):
        return None
    rows = []
    for model, layers in sorted(rid["models"].items()):
        for layer, e in sorted(layers.items()):
            rows.append(
                (
                    model,
                    layer,
                    str(e["n"]),
                    _arm(e, "standard"),
                    _arm(e, "rid"),
                    str(e["b"]),
                    str(e["c"]),
                    _num(e["p_mcnemar"]),
                )
            )
    return Table(
        key="experiment_a-rid",
        title=f"Experiment A: RID pre-commitment ablation, scorer {entry['scorer']}",
        header=("model", "layer", "pairs", "standard", "RID", "b", "c", "McNemar p"),
        rows=tuple(rows),
        note=(
            f"{len(rid['papers'])} papers drawn with seed {rid['seed']}; b: right in the "
            "standard arm only, c: right under RID only; exact two-sided McNemar p."
        ),
    )


def rank_contrast(entry: Mapping[str, Any]) -> list[Table]:
    """Kendall τ-b and Spearman ρ between L4 (headline scorer) and Experiment B's L2b+ rankings.

    A second table lists both rates per model when the contrast is defined.
    """
    scorer = entry["scorer"]
    contrast = entry.get("rank_contrast") or {}
    if contrast:
        note = "Over the models present in both experiments (rates in the next table)."
    elif "rank_contrast" in entry:
        note = "n/a: fewer than three models have both an L4 and an L2b+ rate."
    else:
        note = "n/a: the run has no Experiment B cells."
    stats = Table(
        key="experiment_a-rank_contrast",
        title=f"Experiment A against B: rank agreement of L4 ({scorer}) with L2b+",
        header=("rankings", "models", "Kendall τ-b", "τ p", "Spearman ρ", "ρ p"),
        rows=(
            (
                f"L4 ({scorer}) vs L2b+",
                str(len(contrast.get("models", []))),
                _num(contrast.get("kendall_tau")),
                _num(contrast.get("kendall_p")),
                _num(contrast.get("spearman_rho")),
                _num(contrast.get("spearman_p")),
            ),
        ),
        note=note,
    )
    if not contrast:
        return [stats]
    rates = Table(
        key="experiment_a-rank_rates",
        title=f"Experiment A against B: L4 ({scorer}) and L2b+ per model",
        header=("model", f"L4 ({scorer})", "L2b+"),
        rows=tuple(
            (model, _pct(l4), _pct(l2b))
            for model, l4, l2b in zip(
                contrast["models"], contrast["L4"], contrast["L2b_plus"], strict=True
            )
        ),
    )
    return [stats, rates]


def experiment_a_tables(entry: Mapping[str, Any]) -> list[Table]:
    """Every Experiment A table, in display order (the RID table only when RID was run)."""
    tables = [headline_rates(entry), agreement_levels(entry), instability(entry)]
    rid = rid_ablation(entry)
    if rid is not None:
        tables.append(rid)
    return tables + rank_contrast(entry)

"""Report tables built from ``summary.json`` alone (so every shown number comes from it).

Each table is a title, a header row and body rows of strings; :mod:`._markdown` and :mod:`._html`
render the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

LAYERS = ("L1", "L2a", "L2b", "L2b_plus")
LABEL = {"L1": "L1", "L2a": "L2a", "L2b": "L2b", "L2b_plus": "L2b+"}


@dataclass(frozen=True, kw_only=True)
class Table:
    """A titled table of pre-formatted cells."""

    key: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""
    #: per cell, the cell explorer's address of the cells behind the number ("" for none)
    links: tuple[tuple[str, ...], ...] = ()


def cells_link(**filters: str) -> str:
    """The explorer address of the cells a table number counts: ``#cells?unit=...&family=...``."""
    return "#cells?" + urlencode(sorted(filters.items()), quote_via=quote)


def pct(value: float | None) -> str:
    """``0.8812 -> "88.1%"``; ``None -> "–"``."""
    return "–" if value is None else f"{100 * value:.1f}%"


def num(value: float | None, digits: int = 3) -> str:
    """Fixed-point number or ``"–"`` for ``None``."""
    return "–" if value is None else f"{value:.{digits}f}"


def flag(value: bool | None) -> str:
    """``yes`` / ``no`` / ``–`` (undefined)."""
    return "–" if value is None else ("yes" if value else "no")


def _ci(entry: Mapping[str, Any]) -> str:
    return f"{pct(entry['rate'])} [{pct(entry['lo'])}, {pct(entry['hi'])}]"


def leaderboard(s: Mapping[str, Any]) -> Table:
    """Units in L2b+ order with every layer's rate and the L2b+ Wilson interval."""
    rows = []
    links = []
    places = standing(s)
    for unit in s["rankings"]["L2b_plus"]["order"]:
        r, d = s["rates"][unit], s["rates_detail"][unit]
        link = cells_link(unit=unit)
        links.append(("", link, link, link, link, link, link, "", ""))
        rows.append(
            (
                places[unit],
                unit,
                *(pct(r[layer]) for layer in LAYERS[:3]),
                _ci(d["L2b_plus"]),
                f"{d['L2b_plus']['k']}/{d['L2b_plus']['n']}",
                pct(s["conditional_pass"][unit]),
                str(s["unscoreable"][unit]),
            )
        )
    return Table(
        key="leaderboard",
        title="Leaderboard",
        header=(
            "#",
            s["unit"],
            "L1",
            "L2a",
            "L2b",
            "L2b+ [95% Wilson]",
            "L2b+ k/n",
            "P(L2b+ | L2b)",
            "unscoreable",
        ),
        rows=tuple(rows),
        note="L1, L2a, L2b over all cells; L2b+ over scoreable cells; tied units share a place "
        "(marked =).",
        links=tuple(links),
    )


def standing(s: Mapping[str, Any]) -> dict[str, str]:
    """Each unit's place by L2b+: ``"1"``, ``"2="`` for units tied at 2, ``"4"``, ...

    Tied units share the best of their places (competition ranking); units without a scoreable
    cell come last, tied with each other.
    """
    rates = {u: s["rates"][u]["L2b_plus"] for u in s["rankings"]["L2b_plus"]["order"]}

    def key(u: str) -> float:
        rate = rates[u]
        return -1.0 if rate is None else float(rate)

    places: dict[str, str] = {}
    for unit in rates:
        better = sum(1 for other in rates if key(other) > key(unit))
        tied = sum(1 for other in rates if key(other) == key(unit)) > 1
        places[unit] = f"{better + 1}{'=' if tied else ''}"
    return places


def by_family(s: Mapping[str, Any]) -> Table:
    """L2b+ rate (k/n) per unit and design family."""
    families = list(s["families"])
    rows = []
    links = []
    for unit in s["rankings"]["L2b_plus"]["order"]:
        cells = []
        links.append(("", *(cells_link(unit=unit, family=f) for f in families)))
        for family in families:
            e = s["rates_by_family"].get(unit, {}).get(family, {}).get("L2b_plus")
            cells.append("–" if e is None else f"{pct(e['rate'])} ({e['k']}/{e['n']})")
        rows.append((unit, *cells))
    return Table(
        key="by_family",
        title="L2b+ by design family",
        header=(s["unit"], *families),
        rows=tuple(rows),
        links=tuple(links),
    )


def executed_wrong(s: Mapping[str, Any]) -> Table:
    """Executed-but-wrong counts per unit and pooled."""
    ew = s["executed_wrong"]
    order = [u for u in s["rankings"]["L2b_plus"]["order"] if u in ew["by_unit"]]
    rows = [
        (
            unit,
            f"{ew['by_unit'][unit]['k']}/{ew['by_unit'][unit]['n']}",
            pct(ew["by_unit"][unit]["rate"]),
        )
        for unit in order
    ]
    rows.append(("all", f"{ew['count']}/{ew['denominator']}", pct(ew["share"])))
    return Table(
        key="executed_wrong",
        title="Executed but wrong (L2b = 1, L2b+ = 0)",
        header=(s["unit"], "wrong / executed", "share"),
        rows=tuple(rows),
    )


def rank_agreement(s: Mapping[str, Any]) -> Table:
    """Kendall τ-b, Spearman ρ and order agreement of each layer's ranking with L2b+."""
    rows = []
    for layer, c in sorted(s["rank_correlation"].items()):
        boot = c["bootstrap_ci"]
        rows.append(
            (
                f"{LABEL[layer]} vs L2b+",
                num(c["kendall_tau"]),
                num(c["kendall_p"]),
                f"[{num(boot['kendall_tau'][0])}, {num(boot['kendall_tau'][1])}]",
                num(c["spearman_rho"]),
                f"[{num(boot['spearman_rho'][0])}, {num(boot['spearman_rho'][1])}]",
                num(c["pairwise_accuracy"]),
                flag(c["top1_match"]),
                flag(c["top2_match"]),
                flag(c["bottom2_match"]),
            )
        )
    boot_n = next(iter(s["rank_correlation"].values()))["bootstrap_ci"]["n_resamples"]
    return Table(
        key="rank_agreement",
        title="Rank agreement with L2b+",
        header=(
            "layer",
            "Kendall τ-b",
            "p",
            "τ 95% CI",
            "Spearman ρ",
            "ρ 95% CI",
            "pairwise order",
            "top-1",
            "top-2",
            "bottom-2",
        ),
        rows=tuple(rows),
        note=f"Scenario-clustered percentile bootstrap, {boot_n} resamples, seed {s['seed']}.",
    )


def stability(s: Mapping[str, Any]) -> Table:
    """Leave-one-out τ range and drop-one-family agreement."""
    rows = []
    for layer, by_unit in sorted(s["stability"]["leave_one_out"].items()):
        taus = [v for v in by_unit.values() if v is not None]
        span = f"{num(min(taus))} – {num(max(taus))}" if taus else "–"
        rows.append((f"leave one {s['unit']} out: τ({LABEL[layer]}, L2b+)", span, "", "", ""))
    for family, d in sorted(s["stability"]["drop_one_family"].items()):
        rows.append(
            (
                f"drop {family}: L2b+ vs full L2b+",
                num(d["kendall_tau"]),
                flag(d["ranking_identical"]),
                flag(d["top2_preserved"]),
                flag(d["bottom2_preserved"]),
            )
        )
    return Table(
        key="stability",
        title="Rank stability",
        header=("check", "Kendall τ", "same ranking", "top-2 kept", "bottom-2 kept"),
        rows=tuple(rows),
    )


def sweep(s: Mapping[str, Any]) -> Table:
    """Passes per unit at each tolerance, with the executed-but-wrong count."""
    tolerances = sorted(s["tolerance_sweep"], key=float)
    units = s["rankings"]["L2b_plus"]["order"]
    detail = s["tolerance_sweep_detail"]
    rows = [
        tuple([unit, *(str(s["tolerance_sweep"][t][unit]) for t in tolerances)]) for unit in units
    ]
    rows.append(
        tuple(["executed but wrong", *(str(detail[t]["executed_wrong"]) for t in tolerances)])
    )
    rows.append(
        tuple(["same ranking as 0.5", *(flag(detail[t]["ranking_identical"]) for t in tolerances)])
    )
    return Table(
        key="sweep",
        title="Tolerance sweep (L2b+ passes)",
        header=(s["unit"], *tolerances),
        rows=tuple(rows),
    )


def taxonomy(s: Mapping[str, Any]) -> Table:
    """Cells per failure category, per unit and overall."""
    tax = s["taxonomy"]
    categories = sorted(tax["overall"])
    units = s["rankings"]["L2b_plus"]["order"]
    rows = [
        tuple(
            [
                cat,
                *(str(tax["by_unit"].get(u, {}).get(cat, 0)) for u in units),
                str(tax["overall"][cat]),
            ]
        )
        for cat in categories
    ]
    missing = ", ".join(f"{k} ({v})" for k, v in tax["missing_packages"].items())
    return Table(
        key="taxonomy",
        title="Failure taxonomy (cells)",
        header=("category", *units, "all"),
        rows=tuple(rows),
        note=f"Missing packages: {missing}." if missing else "",
    )


def extraction(s: Mapping[str, Any]) -> Table:
    """Per unit: executed cells whose extraction was ambiguous or read through the fit log."""
    prof = s.get("extraction", {})
    rows = []
    for unit in s["rankings"]["L2b_plus"]["order"]:
        e = prof.get(unit, {})
        n = e.get("executed", 0)
        rows.append(
            (
                unit,
                str(n),
                str(e.get("ambiguous", 0)),
                pct(e.get("ambiguous", 0) / n if n else None),
                str(e.get("fit_match", 0)),
                str(e.get("fitted_right_reported_wrong", 0)),
            )
        )
    return Table(
        key="extraction",
        title="Extraction: how much rides on it (executed cells)",
        header=(
            s["unit"],
            "executed",
            "ambiguous",
            "share",
            "read via fit log",
            "fitted right, reported wrong",
        ),
        rows=tuple(rows),
        note=(
            "Ambiguous: plausible candidates printed different numbers; the rule's choice is "
            "scored. Fitted right, reported wrong: a model the code fitted has an effect "
            "coefficient within tolerance, the reported value is missing or outside it."
        ),
    )


def rel_error(s: Mapping[str, Any]) -> Table:
    """Relative-error quantiles per unit over executed cells with an estimate."""
    keys = ("q10", "q25", "q50", "q75", "q90")
    rows = [
        (unit, str(s["rel_error"][unit]["n"]), *(num(s["rel_error"][unit][k]) for k in keys))
        for unit in s["rankings"]["L2b_plus"]["order"]
    ]
    return Table(
        key="rel_error",
        title="Relative error of executed estimates",
        header=(s["unit"], "n", "10%", "25%", "median", "75%", "90%"),
        rows=tuple(rows),
    )


def language_table(inv: Mapping[str, Any]) -> Table:
    """R against Python per model, paired on the same scenarios (``language_invariance``)."""
    rows = []
    for model, e in inv.items():
        for layer in ("L2b", "L2b_plus"):
            d = e[layer]
            p = d["p_mcnemar"]
            rows.append(
                (
                    model,
                    "L2b+" if layer == "L2b_plus" else "L2b",
                    str(d["n"]),
                    pct(d["r"]),
                    pct(d["python"]),
                    "–" if d["difference"] is None else f"{100 * d['difference']:+.1f} pts",
                    f"{d['b_r_only']} / {d['c_python_only']}",
                    "–" if p is None else num(p),
                    pct(d["disagree"]),
                )
            )
    return Table(
        key="language_invariance",
        title="Language invariance: R against Python on the same scenarios",
        header=(
            "model",
            "layer",
            "pairs",
            "R",
            "Python",
            "Python − R",
            "R only / Python only",
            "McNemar p (exact)",
            "languages disagree",
        ),
        rows=tuple(rows),
        note="Each model's R and Python cells paired on scenario and sample (L2b+ over "
        "scoreable pairs); the exact McNemar test asks whether passing depends on the language.",
    )

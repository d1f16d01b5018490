"""Report tables built from ``summary.json`` alone (so every shown number comes from it).

Each table is a title, a header row and body rows of strings; :mod:`._markdown` and :mod:`._html`
render the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlencode

from causalverify.analysis._taxonomy import SELF_REPORTED
from causalverify.records import DEFAULT_TOLERANCE, Summary
from causalverify.records.summary import ExtractionProfile, RateDetail

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
    #: per row, an HTML class ("tied": not distinguishable from #1, shaded); "" for none
    row_classes: tuple[str, ...] = ()


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


def rate_detail(entry: RateDetail | Mapping[str, Any]) -> RateDetail:
    """A rate with its interval as the typed record (sections kept as JSON objects hold them
    as plain mappings)."""
    return entry if isinstance(entry, RateDetail) else RateDetail.model_validate(dict(entry))


def _ci(entry: RateDetail | Mapping[str, Any] | None) -> str:
    """``"88.1% [80.2%, 94.0%]"``; an undecided share shows its bounds (``"40.0–46.7% [...]"``)."""
    if entry is None:
        return "–"
    e = rate_detail(entry)
    rate = pct(e.rate)
    if e.undecided:
        rate = f"{pct(e.rate)}–{pct(e.rate_upper)}"
    if e.lo is None or e.hi is None:
        return rate
    return f"{rate} [{pct(e.lo)}, {pct(e.hi)}]"


def interval_label(s: Summary) -> str:
    """``"95% CI, scenario-clustered"`` (or bootstrap, or Wilson), from ``summary["intervals"]``."""
    iv = s.intervals
    level = f"{100 * iv.confidence:.0f}%"
    kind = {
        "cluster": "scenario-clustered",
        "bootstrap": "scenario bootstrap",
        "wilson": "Wilson",
    }[iv.method]
    return f"{level} CI, {kind}"


def interval_note(s: Summary) -> str:
    """One sentence on how the intervals were computed."""
    iv = s.intervals
    if iv.method == "cluster":
        return (
            "Intervals treat the scenario as the cluster (a scenario's languages, samples and "
            "turns are not independent): clustered standard error, t on C−1 degrees of freedom; "
            "Wilson on the scenarios when no scenario differs from another."
        )
    if iv.method == "bootstrap":
        return (
            f"Intervals: scenario-cluster percentile bootstrap, {iv.n_resamples} "
            f"resamples, seed {iv.seed}."
        )
    return "Intervals: Wilson, every cell counted as independent."


def _pvalue(p: float | None) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _pp(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f} pp"


def _vs_leader(s: Summary) -> dict[str, str]:
    """Each unit against #1: ``"#1"``, ``"tied with #1"`` or ``"−12.0 pp, p = 0.004"``."""
    pairwise = s.pairwise
    leader = pairwise.leader
    if leader is None:
        return {}
    out = {leader: "#1"}
    tied = set(pairwise.tied_with_leader)
    for e in pairwise.pairs:
        if e.a != leader:
            continue
        if e.b in tied:
            out[e.b] = "tied with #1"
        elif e.n:
            p = _pvalue(e.p_holm_leader)
            difference = None if e.difference is None else -e.difference
            out[e.b] = f"{_pp(difference)}, p {p if p.startswith('<') else '= ' + p}"
    return out


def _k_of_n(entry: RateDetail | Mapping[str, Any]) -> str:
    """``k/n``, or ``k–k_upper/n`` when undecided cells bound it."""
    e = rate_detail(entry)
    if e.undecided:
        return f"{e.k}–{e.k_upper}/{e.n}"
    return f"{e.k}/{e.n}"


def leaderboard(s: Summary) -> Table:
    """Units in L2b+ order with every layer's rate and interval, the rank interval and whether
    the unit is distinguishable from #1."""
    rows = []
    links = []
    classes = []
    places = standing(s)
    vs = _vs_leader(s)
    tied = set(s.pairwise.tied_with_leader)
    ranks = s.rank_intervals
    for unit in s.order:
        d = s.rates_detail[unit]
        link = cells_link(unit=unit)
        links.append(("", link, link, link, link, link, link, "", "", "", ""))
        classes.append("tied" if unit in tied else "")
        rank = ranks.get(unit)
        rows.append(
            (
                places[unit],
                unit,
                *(_ci(d[layer]) for layer in LAYERS[:3]),
                _ci(d["L2b_plus"]),
                _k_of_n(d["L2b_plus"]),
                _ci(s.conditional_pass_detail.get(unit)),
                "–"
                if not rank
                else (str(rank[0]) if rank[0] == rank[1] else f"{rank[0]}–{rank[1]}"),
                vs.get(unit, "–"),
                str(s.unscoreable[unit]),
            )
        )
    return Table(
        key="leaderboard",
        title="Leaderboard",
        header=(
            "#",
            s.unit,
            "L1",
            "L2a",
            "L2b",
            f"L2b+ [{interval_label(s)}]",
            "L2b+ k/n",
            "P(L2b+ | L2b)",
            "rank [95%]",
            "vs #1 (L2b+)",
            "unscoreable",
        ),
        rows=tuple(rows),
        note="L1, L2a, L2b over all cells; L2b+ over scoreable cells; tied rates share a place "
        "(marked =). " + interval_note(s) + " Rank: 95% interval of the place over scenario "
        "bootstrap resamples. vs #1: the paired L2b+ difference from the leader over shared "
        'scenarios, exact test, Holm-adjusted over the comparisons with #1; "tied with #1" '
        "(shaded) when it is not significant at 5%.",
        links=tuple(links),
        row_classes=tuple(classes),
    )


def pairwise(s: Summary) -> Table:
    """Every pair of units: the paired L2b+ difference, its interval, exact and Holm p-values."""
    rows = []
    for e in s.pairwise.pairs:
        rows.append(
            (
                e.a,
                e.b,
                f"{e.n} ({e.clusters})",
                "–" if not e.n else f"{_pp(e.difference)} [{_pp(e.lo)}, {_pp(e.hi)}]",
                f"{e.a_only} / {e.b_only}",
                _pvalue(e.p),
                _pvalue(e.p_holm),
            )
        )
    return Table(
        key="pairwise",
        title="Pairwise comparisons (L2b+, paired on scenario, language and sample)",
        header=(
            "A",
            "B",
            "pairs (scenarios)",
            f"A − B [{interval_label(s)}]",
            "A only / B only",
            "p (exact)",
            "p (Holm)",
        ),
        rows=tuple(rows),
        note="A is ranked above B. p (exact): scenario sign-flip permutation test on the paired "
        "outcomes (the exact McNemar test when each scenario holds one pair); Holm: adjusted "
        "over all pairs.",
    )


def power(s: Summary) -> Table:
    """The minimum detectable L2b+ difference of this design and at other suite sizes."""
    pw = s.power
    by = pw.mde_by_scenarios
    here = pw.scenarios
    rows = [(f"this run ({here} scenarios)", _pp(pw.mde).lstrip("+"))]
    rows += [
        (f"{n} scenarios", _pp(v).lstrip("+"))
        for n, v in sorted(by.items(), key=lambda item: int(item[0]))
        if str(n) != str(here)
    ]
    basis = (
        "the median null variance per pair over the models next to each other in the leaderboard"
        if pw.basis == "observed"
        else "an assumed 25% chance that two models disagree on a cell"
    )
    return Table(
        key="power",
        title="Minimum detectable difference (L2b+, two models, 80% power, 5% two-sided)",
        header=("design", "minimum detectable difference"),
        rows=tuple(rows),
        note=f"From {basis}, keeping {num(pw.pairs_per_scenario, 1)} pairs per scenario; "
        "a smaller true difference is likely to be missed. More scenarios "
        "(`causalverify build --scenarios N`) shrink it about as 1/√N.",
    )


def standing(s: Summary) -> dict[str, str]:
    """Each unit's place by L2b+: ``"1"``, ``"2="`` for units tied at 2, ``"4"``, ...

    Tied units share the best of their places (competition ranking); units without a scoreable
    cell come last, tied with each other.
    """
    rates = {u: s.rates[u]["L2b_plus"] for u in s.order}

    def key(u: str) -> float:
        rate = rates[u]
        return -1.0 if rate is None else float(rate)

    places: dict[str, str] = {}
    for unit in rates:
        better = sum(1 for other in rates if key(other) > key(unit))
        tied = sum(1 for other in rates if key(other) == key(unit)) > 1
        places[unit] = f"{better + 1}{'=' if tied else ''}"
    return places


def by_family(s: Summary) -> Table:
    """L2b+ rate (k/n) per unit and design family."""
    families = list(s.families)
    rows = []
    links = []
    for unit in s.order:
        cells = []
        links.append(("", *(cells_link(unit=unit, family=f) for f in families)))
        for family in families:
            e = s.rates_by_family.get(unit, {}).get(family, {}).get("L2b_plus")
            cells.append("–" if e is None else f"{_ci(e)} ({e.k}/{e.n})")
        rows.append((unit, *cells))
    return Table(
        key="by_family",
        title="L2b+ by design family",
        header=(s.unit, *families),
        rows=tuple(rows),
        note=f"Rate [{interval_label(s)}] (passes/scoreable cells).",
        links=tuple(links),
    )


def by_language(s: Summary) -> Table:
    """Every layer's rate and interval per unit and language (runs with several languages)."""
    rows = []
    for unit in s.order:
        for language, d in sorted((s.rates_by_language or {}).get(unit, {}).items()):
            rows.append((unit, language, *(_ci(d[layer]) for layer in LAYERS)))
    return Table(
        key="by_language",
        title="Rates by language",
        header=(s.unit, "language", *(LABEL[layer] for layer in LAYERS)),
        rows=tuple(rows),
        note=f"Rate [{interval_label(s)}].",
    )


def executed_wrong(s: Summary) -> Table:
    """Executed-but-wrong counts per unit and pooled."""
    ew = s.executed_wrong
    order = [u for u in s.order if u in ew.by_unit]
    rows = [
        (unit, f"{ew.by_unit[unit].k}/{ew.by_unit[unit].n}", _ci(ew.by_unit[unit]))
        for unit in order
    ]
    rows.append(("all", f"{ew.count}/{ew.denominator}", pct(ew.share)))
    return Table(
        key="executed_wrong",
        title="Executed but wrong (L2b = 1, L2b+ = 0)",
        header=(s.unit, "wrong / executed", "share"),
        rows=tuple(rows),
    )


def rank_agreement(s: Summary) -> Table:
    """Kendall τ-b, Spearman ρ and order agreement of each layer's ranking with L2b+."""
    rows = []
    for layer, c in sorted(s.rank_correlation.items()):
        boot = c.bootstrap_ci
        rows.append(
            (
                f"{LABEL[layer]} vs L2b+",
                num(c.kendall_tau),
                num(c.kendall_p),
                f"[{num(boot['kendall_tau'][0])}, {num(boot['kendall_tau'][1])}]",
                num(c.spearman_rho),
                f"[{num(boot['spearman_rho'][0])}, {num(boot['spearman_rho'][1])}]",
                num(c.pairwise_accuracy),
                flag(c.top1_match),
                flag(c.top2_match),
                flag(c.bottom2_match),
            )
        )
    boot_n = next(iter(s.rank_correlation.values())).bootstrap_ci["n_resamples"]
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
        note=f"Scenario-clustered percentile bootstrap, {boot_n} resamples, seed {s.seed}.",
    )


def stability(s: Summary) -> Table:
    """Leave-one-out τ range and drop-one-family agreement."""
    rows = []
    for layer, by_unit in sorted(s.stability["leave_one_out"].items()):
        taus = [v for v in by_unit.values() if v is not None]
        span = f"{num(min(taus))} – {num(max(taus))}" if taus else "–"
        rows.append((f"leave one {s.unit} out: τ({LABEL[layer]}, L2b+)", span, "", "", ""))
    for family, d in sorted(s.stability["drop_one_family"].items()):
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


def sweep(s: Summary) -> Table:
    """Passes per unit at each tolerance, with the executed-but-wrong count."""
    tolerances = sorted(s.tolerance_sweep, key=float)
    units = s.order
    detail = s.tolerance_sweep_detail
    rows = [tuple([unit, *(str(s.tolerance_sweep[t][unit]) for t in tolerances)]) for unit in units]
    rows.append(tuple(["executed but wrong", *(str(detail[t].executed_wrong) for t in tolerances)]))
    rows.append(
        tuple(
            [
                f"same ranking as {DEFAULT_TOLERANCE}",
                *(flag(detail[t].ranking_identical) for t in tolerances),
            ]
        )
    )
    return Table(
        key="sweep",
        title="Tolerance sweep (L2b+ passes)",
        header=(s.unit, *tolerances),
        rows=tuple(rows),
    )


#: taxonomy categories shown with a qualifier
_CATEGORY_LABELS: Final[dict[str, str]] = {
    "fitted_right_reported_wrong": f"fitted_right_reported_wrong ({SELF_REPORTED})",
}


def taxonomy(s: Summary) -> Table:
    """Cells per failure category, per unit and overall."""
    tax = s.taxonomy
    categories = sorted(tax.overall)
    units = s.order
    rows = [
        tuple(
            [
                _CATEGORY_LABELS.get(cat, cat),
                *(str(tax.by_unit.get(u, {}).get(cat, 0)) for u in units),
                str(tax.overall[cat]),
            ]
        )
        for cat in categories
    ]
    # each count opens its cells in the explorer
    links = [
        (
            "",
            *(
                cells_link(unit=u, category=cat) if tax.by_unit.get(u, {}).get(cat) else ""
                for u in units
            ),
            cells_link(category=cat),
        )
        for cat in categories
    ]
    missing = ", ".join(f"{k} ({v})" for k, v in tax.missing_packages.items())
    return Table(
        key="taxonomy",
        title="Failure taxonomy (cells)",
        header=("category", *units, "all"),
        rows=tuple(rows),
        note=f"Missing packages: {missing}." if missing else "",
        links=tuple(links),
    )


def extraction(s: Summary) -> Table:
    """Per unit: executed cells whose extraction was ambiguous or read through the fit log."""
    rows = []
    for unit in s.order:
        e = s.extraction.get(unit, ExtractionProfile())
        n = e.executed
        rows.append(
            (
                unit,
                str(n),
                str(e.ambiguous),
                pct(e.ambiguous / n if n else None),
                str(e.fit_match),
                str(e.fitted_right_reported_wrong),
            )
        )
    return Table(
        key="extraction",
        title="Extraction: how much rides on it (executed cells)",
        header=(
            s.unit,
            "executed",
            "ambiguous",
            "share",
            "read via fit log",
            "fitted right, reported wrong (self-reported)",
        ),
        rows=tuple(rows),
        note=(
            "Ambiguous: plausible candidates printed different numbers; the rule's choice is "
            f"scored. Fitted right, reported wrong, {SELF_REPORTED}: a model the code fitted has "
            "an effect coefficient within tolerance, the reported value is missing or outside "
            "it. The fit log is written by the script's own process, which could write to it "
            "too; the score never rests on it."
        ),
    )


def rel_error(s: Summary) -> Table:
    """Relative-error quantiles per unit over executed cells with an estimate."""
    keys = ("q10", "q25", "q50", "q75", "q90")
    rows = [
        (unit, str(s.rel_error[unit]["n"]), *(num(s.rel_error[unit][k]) for k in keys))
        for unit in s.order
    ]
    return Table(
        key="rel_error",
        title="Relative error of executed estimates",
        header=(s.unit, "n", "10%", "25%", "median", "75%", "90%"),
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

"""The report's inference tables: layer L2c beside L2b+ (never in place of it), from
``summary.json["inference"]`` alone (see :func:`causalverify.analysis.inference_summary`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from causalverify.records import Summary
from causalverify.report._tables import Table, _ci, _k_of_n, cells_link, interval_label, pct

TIERS: Final[tuple[str, ...]] = ("matches", "plausible", "wrong", "unread")

NOTE: Final[str] = (
    "A layer beside the headline L2b+, never in its place. L2c: the right point (L2b+) and an "
    "SE that matches a canonical variant (within 2%) or is plausible (0.8–1.25× the reference "
    "variant: clustered CR1 for DID and event studies, HC1 for IV and RDD). In DID and event "
    "studies only a clustered SE matches: one at an unclustered variant (HC1, classical) is "
    "wrong. L2b+ and L2c count the same cells (scoreable, with a canonical inference); "
    "P(L2c | L2b+) the cells with the right point. SE tiers: shares of the executed cells "
    "(unread: the script printed no SE that could be read; never wrong). CI covers β: the "
    "reported interval holds the DGP's effect (cells with an interval); significance agrees: "
    "the 5% call agrees with the canonical one under the reference variant."
)


def _tier(entry: Mapping[str, Any], tier: str) -> str:
    rate = entry["se_tier"][tier]
    return "–" if rate["n"] == 0 else f"{pct(rate['rate'])} ({rate['k']})"


def _order(s: Summary, units: Mapping[str, Any]) -> list[str]:
    order = [u for u in s.order if u in units]
    return order + sorted(u for u in units if u not in order)


def inference_table(s: Summary) -> Table:
    """Per unit: L2b+ and L2c on the same cells, P(L2c | L2b+), the SE tier shares, interval
    coverage and significance agreement."""
    inf = s.inference or {}
    rows, links = [], []
    for unit in _order(s, inf["by_unit"]):
        e = inf["by_unit"][unit]
        link = cells_link(unit=unit)
        tier_links = tuple(cells_link(unit=unit, se_tier=t) for t in TIERS)
        links.append(("", link, link, link, link, *tier_links, "", ""))
        rows.append(
            (
                unit,
                _ci(e["L2b_plus"]),
                _ci(e["L2c"]),
                _k_of_n(e["L2c"]),
                _ci(e["L2c_given_L2b_plus"]),
                *(_tier(e, t) for t in TIERS),
                _ci(e["ci_covers"]),
                _ci(e["significance_agrees"]),
            )
        )
    return Table(
        key="inference",
        title="Inference: layer L2c, beside L2b+",
        header=(
            s.unit,
            "L2b+ (same cells)",
            f"L2c [{interval_label(s)}]",
            "L2c k/n",
            "P(L2c | L2b+)",
            "SE matches",
            "plausible",
            "wrong",
            "unread",
            "CI covers β",
            "significance agrees",
        ),
        rows=tuple(rows),
        note=NOTE,
        links=tuple(links),
    )


def inference_by_family(s: Summary) -> Table:
    """Per unit and design family: the number of executed cells in each SE tier, and L2c."""
    inf = s.inference or {}
    families = sorted({f for by in inf["by_family"].values() for f in by})
    rows, links = [], []
    for unit in _order(s, inf["by_family"]):
        cells = []
        for family in families:
            e = inf["by_family"][unit].get(family)
            if e is None:
                cells.append("–")
                continue
            counts = "/".join(str(e["se_tier"][t]["k"]) for t in TIERS)
            cells.append(f"{counts}; L2c {_k_of_n(e['L2c'])}")
        rows.append((unit, *cells))
        links.append(("", *(cells_link(unit=unit, family=f) for f in families)))
    return Table(
        key="inference_by_family",
        title="SE tiers by design family",
        header=(s.unit, *families),
        rows=tuple(rows),
        note="Executed cells whose SE matches / is plausible / is wrong / was not read; then L2c "
        "(passes/cells).",
        links=tuple(links),
    )


def inference_tables(s: Summary) -> list[Table]:
    """The inference tables when the summary has layer L2c, else none."""
    if not s.inference:
        return []
    return [inference_table(s), inference_by_family(s)]

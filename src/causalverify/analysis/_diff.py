"""Two sets of cells compared cell by cell: ``causalverify diff``.

Side A and side B are the cells of one model each (two runs of the same suite, or two models of
one run). Cells are paired on (scenario, language, sample) — a repair-mode cell enters with its
final turn — and every layer's difference B − A is reported with its scenario-clustered interval
and the exact scenario sign-flip p-value; each layer's p-values are Holm-adjusted over the
comparisons made at once (one per pair of sides: with two runs of seven models, over seven). The
verdict reads the L2b+ line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pandas as pd

from causalverify.analysis._clustered import (
    IntervalSettings,
    holm,
    minimum_detectable_difference,
    paired_difference,
)
from causalverify.analysis._frame import LAYERS
from causalverify.analysis._paired import ALPHA, ASSUMED_VARIANCE, PAIR_KEYS, paired_outcomes
from causalverify.errors import SuiteMismatchError as SuiteMismatchError
from causalverify.records import RunMeta

LABEL: Final[dict[str, str]] = {"L1": "L1", "L2a": "L2a", "L2b": "L2b", "L2b_plus": "L2b+"}


def check_same_suite(meta_a: RunMeta, meta_b: RunMeta, a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Refuse to pair two runs unless they ran the same suite.

    The suites' fingerprints (every scenario's text, data hash and canonical) must be equal when
    both runs recorded one; in any case the runs must share scenarios, and each shared scenario
    must have the same design and true effect in both.

    Raises
    ------
    SuiteMismatchError
        Naming what differs.
    """
    fa, fb = meta_a.suite_fingerprint, meta_b.suite_fingerprint
    if fa and fb and fa != fb:
        name_a = meta_a.suite or meta_a.suite_path or "?"
        name_b = meta_b.suite or meta_b.suite_path or "?"
        raise SuiteMismatchError(
            f"the two runs used different suites ({name_a}, fingerprint {fa[:12]}; {name_b}, "
            f"fingerprint {fb[:12]}): cells can only be paired on the same scenarios and data. "
            "Run both on the same `causalverify build` output."
        )
    facts = ["scenario_id", "method", "dgp_effect"]
    left = a[facts].drop_duplicates("scenario_id")
    right = b[facts].drop_duplicates("scenario_id")
    both = left.merge(right, on="scenario_id", suffixes=("_a", "_b"))
    if both.empty:
        raise SuiteMismatchError("the two runs share no scenario: nothing can be paired")
    differs = both[
        (both["method_a"] != both["method_b"])
        | ~((both["dgp_effect_a"] - both["dgp_effect_b"]).abs() <= 1e-12)
        & ~(both["dgp_effect_a"].isna() & both["dgp_effect_b"].isna())
    ]
    if len(differs):
        names = ", ".join(differs["scenario_id"].head(5))
        raise SuiteMismatchError(
            f"the two runs used different suites: scenario(s) {names} differ in design or true "
            "effect. Run both on the same `causalverify build` output."
        )


@dataclass(frozen=True, kw_only=True)
class Side:
    """One side of a comparison: a label (``run:model``), its model and its prepared cells."""

    label: str
    model: str
    cells: pd.DataFrame


def _pp(value: float) -> str:
    return f"{100 * value:.0f}"


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _mde(null_se: float, n: int, clusters: int) -> tuple[float, str]:
    """The minimum detectable difference of this pairing, and whether its variance was observed."""
    if n and null_se > 0:
        return minimum_detectable_difference(null_se, clusters), "observed"
    se = math.sqrt(ASSUMED_VARIANCE / n) if n else math.nan
    return minimum_detectable_difference(se, clusters), "assumed"


def verdict(a: str, b: str, entry: dict[str, Any], alpha: float = ALPHA) -> str:
    """The sentence a reader takes away, from the L2b+ entry of a comparison."""
    if not entry["n"]:
        return f"{a} and {b} share no scoreable cell: nothing to compare."
    diff, lo, hi, p = entry["difference"], entry["lo"], entry["hi"], entry["p_holm"]
    if p < alpha:
        better, sign = (b, 1.0) if diff > 0 else (a, -1.0)
        bounds = sorted((sign * lo, sign * hi))
        return (
            f"{better} is better on L2b+ by {_pp(abs(diff))} pp [{_pp(bounds[0])}, "
            f"{_pp(bounds[1])}], {_p_text(p)}, Holm-adjusted."
        )
    mde = entry["mde"]
    if math.isnan(mde):
        detect = "too few scenarios to say what difference this design could detect"
    elif mde > 1:
        detect = (
            f"with {entry['clusters']} scenarios this design cannot detect even a 100 pp "
            "difference at 80% power"
        )
    else:
        detect = f"the smallest difference this design could detect at 80% power is {_pp(mde)} pp"
        if entry.get("mde_basis") == "assumed":
            detect += (
                " (the two never disagree here; assuming they would on a quarter of the cells)"
            )
    return (
        f"No detectable difference on L2b+ ({b} − {a}: {100 * diff:+.0f} pp [{_pp(lo)}, "
        f"{_pp(hi)}], {_p_text(p)}, Holm-adjusted); {detect}."
    )


def _flips(pairs: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    def rows(mask: pd.Series) -> list[dict[str, Any]]:
        chosen = pairs[mask]
        return [
            {"scenario_id": str(s), "language": str(lang), "sample": int(n)}
            for s, lang, n in zip(
                chosen["scenario_id"], chosen["language"], chosen["sample"], strict=True
            )
        ]

    return {
        "a_only": rows((pairs["a"] == 1) & (pairs["b"] == 0)),
        "b_only": rows((pairs["a"] == 0) & (pairs["b"] == 1)),
    }


def diff_sides(
    comparisons: Sequence[tuple[Side, Side]],
    *,
    settings: IntervalSettings | None = None,
    alpha: float = ALPHA,
) -> list[dict[str, Any]]:
    """Compare each (A, B) pair of sides layer by layer.

    Returns
    -------
    list of dict
        Per comparison: ``a``, ``b`` (labels), ``model_a``, ``model_b``, ``pairs`` and
        ``scenarios`` (shared cells and their scenarios), ``only_a``/``only_b`` (cells without a
        partner), ``layers`` (``layer -> {"rate_a", "rate_b", "difference" (B − A), "lo", "hi",
        "p", "p_holm", "n", "clusters", "a_only", "b_only", "mde", "mde_basis"}``), ``flips``
        (the L2b+ pairs that pass for one side only: ``a_only`` and ``b_only`` lists of
        scenario, language, sample) and ``verdict``.
    """
    out: list[dict[str, Any]] = []
    keys = list(PAIR_KEYS)
    for a, b in comparisons:
        shared = a.cells[keys].merge(b.cells[keys], on=keys)
        entry: dict[str, Any] = {
            "a": a.label,
            "b": b.label,
            "model_a": a.model,
            "model_b": b.model,
            "pairs": len(shared),
            "scenarios": int(shared["scenario_id"].nunique()),
            "only_a": len(a.cells) - len(shared),
            "only_b": len(b.cells) - len(shared),
            "layers": {},
        }
        for layer in LAYERS:
            pairs = paired_outcomes(a.cells, b.cells, layer)
            d = paired_difference(
                pairs["a"],
                pairs["b"],
                pairs["scenario_id"],
                settings=settings,
                salt=f"{a.label}|{b.label}|{layer}",
            )
            mde, basis = _mde(d.null_se, d.n, d.clusters)
            entry["layers"][layer] = {
                **{k: v for k, v in d.as_dict().items() if k != "null_se"},
                "mde": mde,
                "mde_basis": basis,
            }
            if layer == "L2b_plus":
                entry["flips"] = _flips(pairs)
        out.append(entry)
    for layer in LAYERS:  # each layer's family: its comparisons (one per pair of sides)
        adjusted = holm([e["layers"][layer]["p"] for e in out])
        for e, p in zip(out, adjusted, strict=True):
            e["layers"][layer]["p_holm"] = p
    for e in out:
        e["verdict"] = verdict(e["a"], e["b"], e["layers"]["L2b_plus"], alpha)
    return out

"""All analyses of a per-cell frame gathered into one JSON-ready summary."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import pandas as pd

from causalverify.analysis._clustered import (
    DEFAULT_SEED,
    N_RESAMPLES,
    CiMethod,
    IntervalSettings,
)
from causalverify.analysis._frame import (
    COMPARED_LAYERS,
    LAYERS,
    CellsFormatError,
    Unit,
    add_unit,
    prepare_cells,
)
from causalverify.analysis._inference import inference_summary
from causalverify.analysis._invariance import language_invariance
from causalverify.analysis._paired import design_power, pairwise_comparisons, rank_intervals
from causalverify.analysis._ranking import (
    bootstrap_rank_ci,
    compare_rankings,
    ordered_units,
    rank_units,
)
from causalverify.analysis._rates import (
    conditional_pass,
    executed_wrong,
    rates_by_unit,
    rates_by_unit_family,
    rates_by_unit_language,
    unscoreable_counts,
)
from causalverify.analysis._robustness import (
    TOLERANCES,
    drop_one_family,
    leave_one_unit_out,
    tolerance_sweep,
)
from causalverify.analysis._taxonomy import extraction_profile, rel_error_profile, taxonomy
from causalverify.records import SUMMARY_SCHEMA

SCHEMA: Final[str] = SUMMARY_SCHEMA
#: decimals kept for every float in ``summary.json``
DECIMALS: Final[int] = 6


def analyze_cells(
    cells: pd.DataFrame,
    *,
    seed: int = DEFAULT_SEED,
    unit: Unit = "model",
    n_resamples: int = N_RESAMPLES,
    ci: CiMethod = "cluster",
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Run every analysis on a per-cell frame.

    Parameters
    ----------
    cells
        A per-cell frame (store ``cells_frame`` layout or anything :func:`prepare_cells` accepts).
    seed
        Seed of the scenario-clustered bootstrap (``numpy.random.default_rng(seed)``).
    unit
        What is ranked: ``"model"`` pools languages and samples of a model; ``"model_language"``
        ranks each (model, language) pair.
    n_resamples
        Bootstrap resamples (rank correlations, rank intervals, and ``ci="bootstrap"``).
    ci
        Interval of every rate: ``"cluster"`` (clustered standard error, t on C−1 df),
        ``"bootstrap"`` (scenario-cluster percentile bootstrap, seeded by ``seed``) or
        ``"wilson"`` (cells as independent); see :mod:`causalverify.analysis._clustered`.
    confidence
        Coverage of every interval.

    Returns
    -------
    dict
        JSON-ready (floats rounded to :data:`DECIMALS` places, ``nan`` as ``None``); the keys
        are documented in ``docs/REPORT.md``.

    Raises
    ------
    CellsFormatError
        If the table is malformed or has no rows.
    """
    df = add_unit(prepare_cells(cells), unit)
    if df.empty:
        raise CellsFormatError("the per-cell table has no rows (nothing to analyse)")
    # A cell whose provider failed has no answer: it says nothing about the model, so it is left
    # out of every rate, ranking and taxonomy and reported as incomplete instead.
    unanswered = df[df["status"] == "api_error"]
    df = df[df["status"] != "api_error"].reset_index(drop=True)
    if df.empty:
        raise CellsFormatError(
            f"no cell has an answer ({len(unanswered)} failed at the API); rerun the run to "
            "retry them"
        )
    rng = np.random.default_rng(seed)
    settings = IntervalSettings(
        method=ci, confidence=confidence, seed=seed, n_resamples=n_resamples
    )
    rates = rates_by_unit(df, settings=settings)
    plus = {u: rates[u]["L2b_plus"].rate for u in rates}
    comparisons = {
        layer: compare_rankings({u: rates[u][layer].rate for u in rates}, plus)
        for layer in COMPARED_LAYERS
    }
    boot = bootstrap_rank_ci(df, rng=rng, n_resamples=n_resamples)
    wrong = executed_wrong(df, settings=settings)
    conditional = conditional_pass(df, settings=settings)
    order = ordered_units(plus)
    pairwise = pairwise_comparisons(df, order, settings=settings)
    pooled = wrong.pop("__all__")
    summary: dict[str, Any] = {
        "schema": SCHEMA,
        "seed": seed,
        "unit": unit,
        "units": sorted(rates),
        "models": sorted(df["model"].unique()),
        "languages": sorted(df["language"].unique()),
        "families": sorted(df["method"].unique()),
        "n_cells": len(df),
        "incomplete": incomplete_counts(unanswered),
        "n_scenarios": int(df["scenario_id"].nunique()),
        "n_scoreable": int((df["unscoreable"] == 0).sum()),
        "rates": {u: {lay: p.rate for lay, p in r.items()} for u, r in rates.items()},
        "rates_detail": {u: {lay: p.as_dict() for lay, p in r.items()} for u, r in rates.items()},
        "intervals": settings.as_dict(),
        "rates_by_family": _nested(rates_by_unit_family(df, settings=settings)),
        "conditional_pass": {u: p.rate for u, p in conditional.items()},
        "conditional_pass_detail": {u: p.as_dict() for u, p in conditional.items()},
        "pairwise": pairwise,
        "rank_intervals": rank_intervals(df, settings=settings),
        "power": design_power(df, pairwise["pairs"]),
        "executed_wrong": {
            "count": pooled.k,
            "denominator": pooled.n,
            "share": pooled.rate,
            "by_unit": {u: p.as_dict() for u, p in wrong.items()},
        },
        "unscoreable": unscoreable_counts(df),
        "undecided": undecided_counts(df),
        "declared": declared_counts(df),
        "several_blocks": several_blocks_counts(df),
        "rankings": _rankings(rates),
        "rank_correlation": _correlations(comparisons, boot, seed),
        "stability": {
            "leave_one_out": leave_one_unit_out(df),
            "drop_one_family": drop_one_family(df),
        },
        "tolerance_sweep": {},
        "tolerance_sweep_detail": {},
        "taxonomy": taxonomy(df),
        "extraction": extraction_profile(df),
        "rel_error": rel_error_profile(df),
    }
    for label, entry in tolerance_sweep(df, tolerances=TOLERANCES).items():
        summary["tolerance_sweep"][label] = entry.pop("passes")
        summary["tolerance_sweep_detail"][label] = entry
    inference = inference_summary(df, settings=settings)
    if inference is not None:  # cells scored for layer L2c (docs/SCORING.md)
        summary["inference"] = inference
    if df["language"].nunique() > 1:
        summary["rates_by_language"] = _nested(rates_by_unit_language(df, settings=settings))
    invariance = language_invariance(df)
    if invariance is not None:  # runs with both languages
        summary["language_invariance"] = invariance
    return json_ready(summary)


def incomplete_counts(unanswered: pd.DataFrame) -> dict[str, Any]:
    """Cells without an answer (``api_error``), in all and per model."""
    by_model = unanswered.groupby("model").size() if len(unanswered) else pd.Series(dtype=int)
    return {
        "cells": len(unanswered),
        "by_model": {str(m): int(n) for m, n in sorted(by_model.items())},
    }


def undecided_counts(df: pd.DataFrame) -> dict[str, Any]:
    """Cells left ``undecided`` (their L2b+ is only bounded), in all and per unit."""
    flags = df["undecided"] if "undecided" in df.columns else pd.Series(0, index=df.index)
    by_unit = flags.groupby(df["unit"]).sum()
    return {"cells": int(flags.sum()), "by_unit": {str(u): int(n) for u, n in by_unit.items()}}


def several_blocks_counts(df: pd.DataFrame) -> dict[str, Any]:
    """Cells whose answer had more than one code block of its language, against the prompt's
    "exactly one" (the first ran and was scored), in all and per unit."""
    flags = df["several_blocks"] if "several_blocks" in df.columns else pd.Series(0, index=df.index)
    by_unit = flags.groupby(df["unit"]).sum()
    return {"cells": int(flags.sum()), "by_unit": {str(u): int(n) for u, n in by_unit.items()}}


def declared_counts(df: pd.DataFrame) -> dict[str, Any]:
    """Cells asked to declare their estimate, and those whose declared number stdout prints,
    in all and per unit."""
    cols = ("declare_asked", "declare_accepted")
    flags = pd.DataFrame(
        {c: df[c] if c in df.columns else pd.Series(0, index=df.index) for c in cols}
    )
    by_unit = flags.groupby(df["unit"]).sum()
    return {
        "asked": int(flags["declare_asked"].sum()),
        "accepted": int(flags["declare_accepted"].sum()),
        "by_unit": {
            str(u): {"asked": int(row["declare_asked"]), "accepted": int(row["declare_accepted"])}
            for u, row in by_unit.iterrows()
        },
    }


def _nested(rates: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """``unit -> group -> layer -> Rate`` as plain dicts."""
    return {
        u: {g: {lay: p.as_dict() for lay, p in by_layer.items()} for g, by_layer in groups.items()}
        for u, groups in rates.items()
    }


def _rankings(rates: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for layer in LAYERS:
        layer_rates = {u: rates[u][layer].rate for u in rates}
        out[layer] = {"order": ordered_units(layer_rates), "ranks": rank_units(layer_rates)}
    return out


def _correlations(
    comparisons: Mapping[str, Any], boot: Mapping[str, Mapping[str, Any]], seed: int
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for layer, cmp in comparisons.items():
        b = boot[layer]
        out[layer] = {
            "kendall_tau": cmp.kendall_tau,
            "kendall_p": cmp.kendall_p,
            "spearman_rho": cmp.spearman_rho,
            "spearman_p": cmp.spearman_p,
            "pairwise_accuracy": cmp.pairwise_accuracy,
            "top1_match": cmp.top1_match,
            "top2_match": cmp.top2_match,
            "bottom2_match": cmp.bottom2_match,
            "bootstrap_ci": {
                "kendall_tau": list(b["kendall_tau"]),
                "spearman_rho": list(b["spearman_rho"]),
                "n_valid": b["n_valid"],
                "n_resamples": b["n_resamples"],
                "seed": seed,
                "confidence": 0.95,
            },
        }
    return out


def json_ready(obj: Any) -> Any:
    """Recursively convert to plain JSON types: round floats, ``nan``/``inf`` to ``None``.

    Tuples become lists, numpy scalars become Python scalars, ``-0.0`` becomes ``0.0``, and
    mapping keys become strings.
    """
    if isinstance(obj, Mapping):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_ready(v) for v in obj]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        value = float(obj)
        if math.isnan(value) or math.isinf(value):
            return None
        return round(value, DECIMALS) + 0.0
    return obj


def dumps_summary(summary: Mapping[str, Any]) -> str:
    """The canonical text of ``summary.json``: sorted keys, indent 2, trailing newline."""
    return json.dumps(json_ready(summary), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

"""Experiment A analyses: labels, L3/L4 per scorer, scorer instability, RID, the rank contrast.

Everything is a pure function of the stored exchanges (:class:`~causalverify.papers.store.
PaperStore`) and the corpus; no model is called.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from causalverify.analysis import kendall_spearman, proportion
from causalverify.papers.labels import consensus, parse_vote
from causalverify.papers.records import PaperRecord
from causalverify.papers.run import corpus_for
from causalverify.papers.scorers import SCORERS, TEXT_SCORERS, Scorer, parse_judge_word, score_text
from causalverify.papers.stats import mcnemar_exact
from causalverify.papers.store import FILENAME, Exchange, PaperStore

DEFAULT_SCORER: Final[Scorer] = "S2"
LAYERS: Final[dict[str, str]] = {"L3": "method", "L4": "direction"}


@dataclass(frozen=True)
class Results:
    """Everything stored for Experiment A in one run folder."""

    meta: dict[str, Any]
    papers: tuple[PaperRecord, ...]
    answers: list[tuple[tuple[str, ...], Exchange]]
    votes: list[tuple[tuple[str, ...], Exchange]]
    judgements: list[tuple[tuple[str, ...], Exchange]]


def load_results(run_dir: Path) -> Results | None:
    """The stored Experiment A results of ``run_dir``, or ``None`` if it has none."""
    if not (Path(run_dir) / FILENAME).is_file():
        return None
    with PaperStore.open(run_dir) as store:
        papers = corpus_for(store)
        return Results(
            store.meta(),
            papers,
            store.rows("answers"),
            store.rows("votes"),
            store.rows("judgements"),
        )


def label_frame(results: Results) -> tuple[pd.DataFrame, str]:
    """Per-paper labels and agreement levels, and their source.

    With labeller votes the labels are the consensus of the recorded labeller pool (source
    ``"consensus"``); without, the corpus' hand-assigned reference labels (``"reference"``,
    level ``"hand"``).
    """
    pool = list(results.meta.get("labellers") or [])
    votes = {key: parse_vote(ex.text) for key, ex in results.votes if key[1] in pool}
    rows = []
    for paper in results.papers:
        row: dict[str, Any] = {"paper_id": paper.id}
        ref = paper.reference
        row["reference_method"] = ref.method if ref else None
        row["reference_direction"] = ref.direction if ref else None
        for layer in ("method", "direction"):
            if pool:
                cast = [getattr(votes.get((paper.id, m)), layer, None) for m in pool]
                result = consensus(cast)
                row[f"{layer}_label"], row[f"{layer}_level"] = result.label, result.level
            else:
                row[f"{layer}_label"] = row[f"reference_{layer}"]
                row[f"{layer}_level"] = "hand"
        rows.append(row)
    return pd.DataFrame(rows), ("consensus" if pool else "reference")


def prediction_frame(results: Results) -> pd.DataFrame:
    """One row per (paper, model, arm, scorer) with the predicted method and direction.

    S3 rows appear only for answers the recorded judge has graded.
    """
    judge = results.meta.get("judge")
    words = {
        key[:4]: parse_judge_word(ex.text, key[3])  # type: ignore[arg-type]
        for key, ex in results.judgements
        if key[4] == judge and ex.status == "ok"
    }
    rows = []
    for (paper_id, model, arm), ex in results.answers:
        if ex.status == "api_error":
            continue
        base = {"paper_id": paper_id, "model": model, "arm": arm}
        for scorer in TEXT_SCORERS:
            pred = score_text(ex.text, scorer)
            rows.append(
                {**base, "scorer": scorer, "method": pred.method, "direction": pred.direction}
            )
        if (paper_id, model, arm, "method") in words:
            rows.append(
                {
                    **base,
                    "scorer": "S3",
                    "method": words[(paper_id, model, arm, "method")],
                    "direction": words.get((paper_id, model, arm, "direction")),
                }
            )
    columns = ["paper_id", "model", "arm", "scorer", "method", "direction"]
    return pd.DataFrame(rows, columns=columns)


def score_frame(predictions: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Predictions with ``L3`` and ``L4``: 1.0 match, 0.0 no match, NaN where no label."""
    frame = predictions.merge(
        labels[["paper_id", "method_label", "direction_label"]], on="paper_id", how="left"
    )
    for layer, field in LAYERS.items():
        label = frame[f"{field}_label"]
        hit = (frame[field] == label).astype(float)
        frame[layer] = hit.where(label.notna(), np.nan)
    return frame


def _prop(values: pd.Series) -> dict[str, Any]:
    done = values.dropna()
    p = proportion(int(done.sum()), len(done))
    return {"k": p.k, "n": p.n, "rate": p.rate, "lo": p.lo, "hi": p.hi}


def layer_rates(scored: pd.DataFrame, *, arm: str = "standard") -> dict[str, dict[str, Any]]:
    """``model -> scorer -> {"L3": rate, "L4": rate}`` (k, n scoreable, rate, Wilson CI)."""
    part = scored[scored["arm"] == arm]
    out: dict[str, dict[str, Any]] = {}
    for (model, scorer), group in part.groupby(["model", "scorer"], sort=True):
        out.setdefault(str(model), {})[str(scorer)] = {
            layer: _prop(group[layer]) for layer in LAYERS
        }
    return out


def instability(scored: pd.DataFrame, *, arm: str = "standard") -> dict[str, dict[str, Any]]:
    """How much L4 moves across scorers, per model.

    Returns ``model -> {"L4": {scorer: rate}, "range": max - min, "flip_share": share of
    scoreable answers whose L4 outcome differs between at least two scorers}``.
    """
    part = scored[(scored["arm"] == arm) & scored["L4"].notna()]
    out: dict[str, dict[str, Any]] = {}
    for model, group in part.groupby("model", sort=True):
        rates = {str(s): float(g["L4"].mean()) for s, g in group.groupby("scorer", sort=True)}
        wide = group.pivot_table(index="paper_id", columns="scorer", values="L4")
        flips = (wide.nunique(axis=1) > 1).mean() if len(wide) else math.nan
        out[str(model)] = {
            "L4": rates,
            "range": max(rates.values()) - min(rates.values()) if rates else math.nan,
            "flip_share": float(flips),
            "n_papers": len(wide),
        }
    return out


def rid_comparison(
    scored: pd.DataFrame, papers: Sequence[str], *, scorer: Scorer
) -> dict[str, dict[str, Any]]:
    """Per model and layer: paired standard vs RID outcomes on the subset, exact McNemar.

    ``b`` counts pairs right in the standard arm only, ``c`` right in the RID arm only.
    """
    part = scored[(scored["scorer"] == scorer) & scored["paper_id"].isin(list(papers))]
    out: dict[str, dict[str, Any]] = {}
    for model, group in part.groupby("model", sort=True):
        entry: dict[str, Any] = {}
        for layer in LAYERS:
            wide = group.pivot_table(index="paper_id", columns="arm", values=layer).dropna()
            if not {"standard", "rid"} <= set(wide.columns):
                continue
            std, rid = wide["standard"] == 1, wide["rid"] == 1
            b, c = int((std & ~rid).sum()), int((~std & rid).sum())
            entry[layer] = {
                "n": len(wide),
                "standard": int(std.sum()),
                "rid": int(rid.sum()),
                "b": b,
                "c": c,
                "p_mcnemar": mcnemar_exact(b, c),
            }
        if entry:
            out[str(model)] = entry
    return out


def rank_contrast(l4: Mapping[str, float], l2b_plus: Mapping[str, float]) -> dict[str, Any] | None:
    """Kendall τ and Spearman ρ between the L4 and the Experiment B L2b+ model rankings.

    Only models present in both (with defined rates) count; ``None`` with fewer than 3.
    """
    models = sorted(
        m for m in set(l4) & set(l2b_plus) if not (math.isnan(l4[m]) or math.isnan(l2b_plus[m]))
    )
    if len(models) < 3:
        return None
    tau, tau_p, rho, rho_p = kendall_spearman(
        np.array([l4[m] for m in models]), np.array([l2b_plus[m] for m in models])
    )
    return {
        "models": models,
        "L4": [l4[m] for m in models],
        "L2b_plus": [l2b_plus[m] for m in models],
        "kendall_tau": tau,
        "kendall_p": tau_p,
        "spearman_rho": rho,
        "spearman_p": rho_p,
    }


def level_counts(labels: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Papers per agreement level, per layer, and how many of them are scoreable."""
    out: dict[str, dict[str, int]] = {}
    for layer, field in LAYERS.items():
        counts = labels[f"{field}_level"].value_counts().sort_index()
        out[layer] = {str(k): int(v) for k, v in counts.items()}
        out[layer]["scoreable"] = int(labels[f"{field}_label"].notna().sum())
        out[layer]["papers"] = len(labels)
    return out


def reference_agreement(labels: pd.DataFrame) -> dict[str, dict[str, int]]:
    """How often the labels used agree with the hand-assigned reference labels."""
    out = {}
    for layer, field in LAYERS.items():
        both = labels[labels[f"{field}_label"].notna() & labels[f"reference_{field}"].notna()]
        agree = int((both[f"{field}_label"] == both[f"reference_{field}"]).sum())
        out[layer] = {"agree": agree, "n": len(both)}
    return out


def scorers_present(scored: pd.DataFrame) -> list[str]:
    """Scorers with at least one prediction, in :data:`SCORERS` order."""
    present = set(scored["scorer"])
    return [s for s in SCORERS if s in present]

"""Repair-mode metrics: how execution and the right number move as a model is shown its errors.

For every cell the state *after t turns* is the turn ``min(t, turns taken)``: a cell that ended
at turn 2 keeps its turn-2 result at turns 3..K. So each by-turn rate is cumulative in the sense
that it counts every cell that has reached its result by then; index 0 is turn 1, which is
exactly the single-shot result.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from math import comb
from typing import Any

from causalverify.analysis._clustered import IntervalSettings, clustered_rate, paired_difference
from causalverify.models.pricing import is_paid
from causalverify.records import CellRecord, ModelResponse, TurnRecord


def _rate(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _state(turns: list[TurnRecord], t: int) -> TurnRecord:
    return turns[min(t, len(turns)) - 1]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of ``c`` successes in ``n`` samples: ``1 - C(n-c, k) / C(n, k)``."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def unpriced(model: str, responses: Iterable[ModelResponse]) -> bool:
    """A paid model whose answers carry no cost: no price was known when they were asked (an
    answer served from the cache costs nothing either way, so only new ones tell)."""
    return is_paid(model) and any(
        not r.cached and r.error is None and r.output_tokens > 0 and r.cost_usd == 0
        for r in responses
    )


def _interval(
    values: list[bool], scenarios: list[str], settings: IntervalSettings, salt: str
) -> list[float] | None:
    if not values:
        return None
    rate = clustered_rate([float(v) for v in values], scenarios, settings=settings, salt=salt)
    return [rate.lo, rate.hi]


def _model_entry(
    model: str, cells: list[CellRecord], max_turns: int, settings: IntervalSettings
) -> dict[str, Any]:
    scored = [c for c in cells if c.status != "unscoreable"]
    states = [c.turn_states() for c in scored]
    scenarios = [c.key.scenario_id for c in scored]
    by_turn: dict[str, list[float | None]] = {"L2b": [], "L2b_plus": [], "executed_wrong": []}
    intervals: dict[str, list[list[float] | None]] = {"L2b": [], "L2b_plus": []}
    outcomes: dict[str, list[list[bool]]] = {"L2b": [], "L2b_plus": []}
    for t in range(1, max_turns + 1):
        at = [_state(turns, t) for turns in states]
        executed = [bool(s.scores and s.scores.L2b) for s in at]
        right = [bool(s.scores and s.scores.L2b_plus) for s in at]
        outcomes["L2b"].append(executed)
        outcomes["L2b_plus"].append(right)
        by_turn["L2b"].append(_rate(executed))
        by_turn["L2b_plus"].append(_rate(right))
        by_turn["executed_wrong"].append(_rate([s.status == "wrong" for s in at]))
        intervals["L2b"].append(_interval(executed, scenarios, settings, f"{model}|L2b|{t}"))
        intervals["L2b_plus"].append(_interval(right, scenarios, settings, f"{model}|L2b+|{t}"))
    successes = sum(bool(c.scores and c.scores.L2b_plus) for c in scored)
    every_turn = [turn for c in cells for turn in c.turn_states()]
    responses = [t.response for t in every_turn if t.response is not None]
    tokens = sum(r.input_tokens + r.output_tokens for r in responses)
    cost = sum(r.cost_usd for r in responses)
    used = Counter(len(c.turn_states()) for c in cells)

    def gain(series: list[float | None]) -> float | None:
        first, last = series[0], series[-1]
        return None if first is None or last is None else last - first

    def gain_interval(layer: str) -> dict[str, Any] | None:
        """Turn K against turn 1, cell by cell: the paired difference's scenario-clustered
        interval and its exact scenario sign-flip p."""
        first, last = outcomes[layer][0], outcomes[layer][-1]
        if not first:
            return None
        d = paired_difference(
            [float(v) for v in first],
            [float(v) for v in last],
            scenarios,
            settings=settings,
            salt=f"{model}|{layer}|gain",
        )
        return {"lo": d.lo, "hi": d.hi, "p": d.p, "method": d.method}

    return {
        "cells": len(cells),
        "scoreable": len(scored),
        "turns": max_turns,
        "turns_used": {str(k): used[k] for k in sorted(used)},
        "mean_turns": sum(len(c.turn_states()) for c in cells) / len(cells) if cells else None,
        "L2b_by_turn": by_turn["L2b"],
        "L2b_plus_by_turn": by_turn["L2b_plus"],
        "L2b_by_turn_ci": intervals["L2b"],
        "L2b_plus_by_turn_ci": intervals["L2b_plus"],
        "executed_wrong_by_turn": by_turn["executed_wrong"],
        "repair_gain": {
            "L2b": gain(by_turn["L2b"]),
            "L2b_plus": gain(by_turn["L2b_plus"]),
            "executed_wrong": gain(by_turn["executed_wrong"]),
        },
        "repair_gain_ci": {
            "L2b": gain_interval("L2b"),
            "L2b_plus": gain_interval("L2b_plus"),
        },
        "successes": successes,
        "tokens": tokens,
        "cost_usd": cost,
        "tokens_per_success": tokens / successes if successes else None,
        "cost_per_success": cost / successes if successes else None,
        "unpriced": unpriced(model, responses),
        "pass_at_k": _pass_at_k(scored),
    }


def _pass_at_k(cells: list[CellRecord]) -> dict[str, float]:
    """pass@k of the final results over the samples of each (scenario, language)."""
    groups: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for c in cells:
        groups[(c.key.scenario_id, c.key.language)].append(bool(c.scores and c.scores.L2b_plus))
    if not groups:
        return {}
    n = min(len(v) for v in groups.values())
    out = {}
    for k in range(1, n + 1):
        values = [pass_at_k(len(v), sum(v), k) for v in groups.values()]
        out[str(k)] = sum(values) / len(values)
    return out


def repair_summary(
    records: Iterable[CellRecord],
    max_turns: int,
    models: Sequence[str] | None = None,
    *,
    settings: IntervalSettings | None = None,
) -> dict[str, Any]:
    """``summary.json["repair"]``: per model (in ``models`` order, then the rest sorted), the
    by-turn rates (lists, index 0 = turn 1) with their scenario-clustered intervals
    (``*_by_turn_ci``: ``[lo, hi]`` per turn), the repair gain (turn K minus turn 1) and, in
    ``repair_gain_ci``, its paired interval and exact scenario sign-flip p (turn 1 and turn K of
    the same cells, as :func:`~causalverify.analysis.paired_difference`), turns used,
    tokens and cost per L2b+ success (``unpriced``: a paid model whose answers had no known
    price, so its cost is not known) and pass@k over samples."""
    settings = settings or IntervalSettings()
    by_model: dict[str, list[CellRecord]] = defaultdict(list)
    for record in records:
        by_model[record.key.model].append(record)
    order = [m for m in (models or ()) if m in by_model]
    order += sorted(set(by_model) - set(order))
    return {model: _model_entry(model, by_model[model], max_turns, settings) for model in order}

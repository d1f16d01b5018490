"""The per-cell table: one row per stored cell, with the published column names where they apply."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Final

import pandas as pd

from causalverify.families import PUBLISHED_NAME
from causalverify.records import CellRecord

#: the columns of :func:`cells_frame`, in order
COLUMNS: Final[tuple[str, ...]] = (
    "scenario_id",
    "method",
    "difficulty",
    "model",
    "language",
    "sample",
    "dgp_effect",
    "baseline_effect",
    "L1",
    "L2a",
    "L2b",
    "estimated",
    "rel_error",
    "L2b_plus",
    "unscoreable",
    "status",
    "exec_status",
    "missing_package",
    "extraction_rule",
    "judge_effect",
    "extraction_disagree",
    "extraction_ambiguous",
    "undecided",
    "declare_asked",
    "declare_accepted",
    "several_blocks",
    "matched_conversion",
    "fitted_effect",
    "fitted_right",
    "truncated",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)

#: the columns of :func:`cells_frame` that hold integers (0/1 flags and counts)
INT_COLUMNS: Final[tuple[str, ...]] = (
    "sample",
    "L1",
    "L2a",
    "L2b",
    "unscoreable",
    "extraction_disagree",
    "extraction_ambiguous",
    "undecided",
    "declare_asked",
    "declare_accepted",
    "several_blocks",
    "fitted_right",
    "truncated",
    "input_tokens",
    "output_tokens",
)
#: after :data:`COLUMNS`: the L2b+ bounds of a cell left ``undecided`` (0 and 1 when some of its
#: candidates pass and some fail, the lower bound being ``L2b_plus``), NaN for every other cell;
#: the analyses read such a cell's L2b+ as these bounds
BOUND_COLUMNS: Final[tuple[str, ...]] = ("L2b_plus_lower", "L2b_plus_upper")
#: after :data:`BOUND_COLUMNS`: layer L2c (docs/SCORING.md), the reported inference against the
#: canonical one; NaN / None where the cell has no canonical inference or did not run
INFERENCE_COLUMNS: Final[tuple[str, ...]] = (
    "reported_se",
    "canonical_se",
    "se_tier",
    "se_variant",
    "se_ratio",
    "ci_covers",
    "significance_agrees",
    "L2c",
)
_FLOAT_COLUMNS: Final = (
    "dgp_effect",
    "baseline_effect",
    "estimated",
    "rel_error",
    "L2b_plus",
    "judge_effect",
    "fitted_effect",
    "cost_usd",
    *BOUND_COLUMNS,
    "reported_se",
    "canonical_se",
    "se_ratio",
    "ci_covers",
    "significance_agrees",
    "L2c",
)


def cells_frame(records: Iterable[CellRecord]) -> pd.DataFrame:
    """Flatten cell records into one row per cell.

    Parameters
    ----------
    records
        Cell records, e.g. ``RunStore.iter_cells()``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`, :data:`BOUND_COLUMNS` then :data:`INFERENCE_COLUMNS` (flags
        1.0/0.0, NaN when not assessed; ``canonical_se`` the reference variant's), rows sorted by (scenario_id, model,
        language, sample). Layer flags are 0/1 integers; ``L2b_plus`` is 1/0 and NaN only for
        unscoreable cells (an undecided cell has 0, its lower bound); ``estimated``,
        ``rel_error`` and ``judge_effect`` are NaN when absent. ``undecided`` flags a cell whose
        status is ``undecided``; ``declare_asked`` / ``declare_accepted`` a cell that was asked
        to declare its estimate / whose declared number stdout prints; ``several_blocks`` a
        cell whose answer had more than one code block of its language (the first ran).
    """
    rows = [_row(record) for record in records]
    frame = pd.DataFrame(rows, columns=[*COLUMNS, *BOUND_COLUMNS, *INFERENCE_COLUMNS])
    for column in INT_COLUMNS:
        frame[column] = frame[column].astype("int64")
    for column in _FLOAT_COLUMNS:
        frame[column] = frame[column].astype("float64")
    frame = frame.sort_values(["scenario_id", "model", "language", "sample"], kind="stable")
    return frame.reset_index(drop=True)


def _row(record: CellRecord) -> dict[str, Any]:
    response, code, execution, scores = (
        record.response,
        record.code,
        record.execution,
        record.scores,
    )
    unscoreable = scores.unscoreable if scores is not None else record.status == "unscoreable"
    if scores is not None:
        layers = (scores.L1, scores.L2a, scores.L2b)
    else:
        layers = (
            bool(response is not None and response.content and response.content.strip()),
            bool(code is not None and code.code is not None and code.parses),
            bool(execution is not None and execution.ok),
        )
    passed = scores is not None and bool(scores.L2b_plus)
    l2b_plus = math.nan if unscoreable else float(passed)
    undecided = record.status == "undecided"
    upper = scores.L2b_plus_upper if scores is not None else None
    estimate = scores.estimate if scores is not None else None
    if estimate is None and record.extraction is not None:
        estimate = record.extraction.value
    return {
        "scenario_id": record.key.scenario_id,
        "method": PUBLISHED_NAME[record.family],
        "difficulty": record.difficulty,
        "model": record.key.model,
        "language": record.key.language,
        "sample": record.key.sample,
        "dgp_effect": record.beta,
        "baseline_effect": record.canonical,
        "L1": int(layers[0]),
        "L2a": int(layers[1]),
        "L2b": int(layers[2]),
        "estimated": _num(estimate),
        "rel_error": _num(scores.rel_error if scores is not None else None),
        "L2b_plus": l2b_plus,
        "unscoreable": int(unscoreable),
        "status": record.status,
        "exec_status": execution.status if execution is not None else None,
        "missing_package": execution.missing_package if execution is not None else None,
        "extraction_rule": record.extraction.rule if record.extraction is not None else None,
        "judge_effect": _num(record.judge.value if record.judge is not None else None),
        "extraction_disagree": int(record.extraction_disagree),
        "extraction_ambiguous": int(record.extraction is not None and record.extraction.ambiguous),
        "undecided": int(undecided),
        "declare_asked": int(record.declaration is not None),
        "declare_accepted": int(record.declaration is not None and record.declaration.accepted),
        "several_blocks": int(code is not None and code.several_blocks),
        "matched_conversion": scores.matched_conversion if scores is not None else None,
        "fitted_effect": _num(scores.fitted_effect if scores is not None else None),
        "fitted_right": int(scores is not None and bool(scores.fitted_right)),
        "truncated": int(response.truncated) if response is not None else 0,
        "input_tokens": response.input_tokens if response is not None else 0,
        "output_tokens": response.output_tokens if response is not None else 0,
        "cost_usd": response.cost_usd if response is not None else 0.0,
        "L2b_plus_lower": 0.0 if undecided and not unscoreable else math.nan,
        "L2b_plus_upper": float(bool(upper)) if undecided and not unscoreable else math.nan,
        **_inference_row(record),
    }


def _inference_row(record: CellRecord) -> dict[str, Any]:
    scores, inference = record.scores, record.inference
    reported = record.extraction.se if record.extraction is not None else None
    if scores is not None and scores.extractor == "judge" and record.judge is not None:
        reported = record.judge.se
    return {
        "reported_se": _num(reported),
        "canonical_se": _num(inference.ses[inference.reference] if inference else None),
        "se_tier": scores.se_tier if scores is not None else None,
        "se_variant": scores.se_variant if scores is not None else None,
        "se_ratio": _num(scores.se_ratio if scores is not None else None),
        "ci_covers": _flag(scores.ci_covers if scores is not None else None),
        "significance_agrees": _flag(scores.significance_agrees if scores is not None else None),
        "L2c": _flag(scores.L2c if scores is not None else None),
    }


def _flag(value: bool | None) -> float:
    return math.nan if value is None else float(value)


def _num(value: float | None) -> float:
    return math.nan if value is None else float(value)

"""What a run reports: progress events while it runs and a summary when it ends."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from causalverify.records import CellRecord
from causalverify.runner.engine import ProgressCallback, ProgressEvent
from causalverify.store.table import cells_frame

# the one progress report of everything the engine runs
__all__ = ["ModelSummary", "ProgressCallback", "ProgressEvent", "RunSummary", "summarize_models"]


@dataclass(frozen=True, kw_only=True)
class ModelSummary:
    """Layer pass rates of one model over the cells of a run.

    ``L1``, ``L2a`` and ``L2b`` are shares of the answered cells; ``L2b_plus`` is the share of
    scoreable answered cells (unscoreable cells are excluded, never failed). Cells whose provider
    failed (``api_error``) are counted in ``unanswered`` and in no rate.
    """

    model: str
    cells: int
    scoreable: int
    L1: float
    L2a: float
    L2b: float
    L2b_plus: float
    counts: Mapping[str, int]
    unanswered: int = 0


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """The outcome of :func:`~causalverify.runner.run_benchmark`.

    ``computed`` cells were finished by this invocation, ``skipped`` ones were already stored;
    ``requests`` counts answers that were not served from the cache, and ``cost_usd`` and the
    token counts add up those new answers; ``failed_requests`` counts the calls that still failed
    after their retries (their cells are ``api_error``). ``environment_changes`` lists what the execution
    environment gained, lost or upgraded since the run recorded it (its prompts keep describing
    the recorded one).
    """

    run_dir: Path
    total: int
    skipped: int
    computed: int
    counts: Mapping[str, int]
    models: tuple[ModelSummary, ...]
    wall_seconds: float
    requests: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    environment_changes: tuple[str, ...] = ()
    failed_requests: int = 0


def summarize_models(
    records: Iterable[CellRecord], models: Iterable[str]
) -> tuple[ModelSummary, ...]:
    """Per-model layer rates over ``records``, in the order of ``models``."""
    frame = cells_frame(records)
    summaries = []
    for model in models:
        everything = frame[frame["model"] == model]
        rows = everything[everything["status"] != "api_error"]
        n = len(rows)
        scoreable = rows[rows["unscoreable"] == 0]
        summaries.append(
            ModelSummary(
                model=model,
                cells=len(everything),
                scoreable=len(scoreable),
                L1=_rate(rows["L1"].sum(), n),
                L2a=_rate(rows["L2a"].sum(), n),
                L2b=_rate(rows["L2b"].sum(), n),
                L2b_plus=_rate(scoreable["L2b_plus"].sum(), len(scoreable)),
                counts=dict(sorted(Counter(everything["status"]).items())),
                unanswered=len(everything) - n,
            )
        )
    return tuple(summaries)


def _rate(passed: float, n: int) -> float:
    return float(passed) / n if n else float("nan")

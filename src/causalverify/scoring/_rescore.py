"""``rescore``: re-derive a stored cell's extraction, layers and status without a model or sandbox."""

from __future__ import annotations

from causalverify.extraction import disagree, extract_estimate, fitted_effects
from causalverify.records import CellRecord, CellStatus, ExtractionRecord, ScoreRecord, TurnRecord
from causalverify.scoring._layers import (
    Extractor,
    Match,
    Profile,
    is_unscoreable,
    match_estimate,
)
from causalverify.scoring._status import pre_scoring_status


def rescore(
    record: CellRecord,
    *,
    profile: Profile = "default",
    tolerance: float = 0.5,
    extractor: Extractor = "deterministic",
) -> CellRecord:
    """Re-extract, score and set the status of a cell; pure and deterministic.

    Parameters
    ----------
    record
        A stored cell (response, code, execution and optionally a judge extraction).
    profile
        ``"paper"``: event studies pass on the best k·canonical, k = 1..11; ``"default"``: only
        the conversions the scenario declares (``record.conversions``).
    tolerance
        τ in ``|β̂ - β̂c| / |β̂c| <= τ`` (inclusive).
    extractor
        Which estimate is scored: ``"deterministic"`` (re-extracted from ``record.code`` and
        stdout), ``"judge"`` (the stored ``record.judge`` value; no model is called) or
        ``"both"`` (deterministic, falling back to the judge when it finds nothing).

    Returns
    -------
    CellRecord
        A new record with ``extraction``, ``extraction_disagree``, ``scores`` and ``status`` set.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    scored = _rescore_one(record, profile=profile, tolerance=tolerance, extractor=extractor)
    if not record.turns:
        return scored
    # a repair-mode cell: every turn is rescored alike; the cell's own fields are its last turn's
    turns = [
        TurnRecord.of(
            _rescore_one(
                turn.as_cell(record), profile=profile, tolerance=tolerance, extractor=extractor
            ),
            turn=turn.turn,
            feedback=turn.feedback,
            request_sha256=turn.request_sha256,
        )
        for turn in record.turns
    ]
    return scored.model_copy(update={"turns": turns})


def _rescore_one(
    record: CellRecord, *, profile: Profile, tolerance: float, extractor: Extractor
) -> CellRecord:
    failure = pre_scoring_status(record)
    extraction = _extract(record)
    estimate = _chosen_estimate(extraction, record.judge, extractor)
    l1 = failure not in {"api_error", "no_response"}
    l2a = l1 and failure not in {"no_code", "parse_error"}
    l2b = failure is None
    unscoreable = is_unscoreable(record.canonical)
    scores = ScoreRecord(
        profile=profile,
        tolerance=tolerance,
        extractor=extractor,
        L1=l1,
        L2a=l2a,
        L2b=l2b,
        L2b_plus=None if unscoreable else False,
        unscoreable=unscoreable,
        estimate=estimate,
    )
    if l2b and not unscoreable and record.execution is not None and record.execution.fits:
        scores = scores.model_copy(update=_closest_fit(record, profile, tolerance))
    status: CellStatus = failure or ("unscoreable" if unscoreable else "no_estimate")
    if l2b and not unscoreable and estimate is not None:
        match = match_cell(record, estimate, profile=profile, tolerance=tolerance)
        scores = scores.model_copy(
            update={
                "L2b_plus": match.passed,
                "rel_error": match.rel_error,
                "matched_conversion": match.conversion,
            }
        )
        status = "correct" if match.passed else "wrong"
    return record.model_copy(
        update={
            "extraction": extraction,
            "extraction_disagree": record.judge is not None and disagree(extraction, record.judge),
            "scores": scores,
            "status": status,
        }
    )


def _extract(record: CellRecord) -> ExtractionRecord | None:
    if record.execution is None or record.code is None or record.code.code is None:
        return None
    return extract_estimate(
        code=record.code.code,
        stdout=record.execution.stdout,
        family=record.family,
        fits=record.execution.fits,
    )


def match_cell(record: CellRecord, value: float, *, profile: Profile, tolerance: float) -> Match:
    """``value`` against the cell's canonical, on the scales its family and profile accept."""
    return match_estimate(
        value,
        record.canonical,
        family=record.family,
        profile=profile,
        tolerance=tolerance,
        declared=dict(record.conversions),
    )


def _closest_fit(record: CellRecord, profile: Profile, tolerance: float) -> dict[str, object]:
    """The fitted effect coefficient closest to the canonical (on the profile's scales)."""
    assert record.execution is not None
    code = record.code.code if record.code is not None else None
    best: tuple[float, float, bool] | None = None
    for coef in fitted_effects(code=code or "", family=record.family, fits=record.execution.fits):
        match = match_cell(record, coef, profile=profile, tolerance=tolerance)
        if best is None or match.rel_error < best[1]:
            best = (coef, match.rel_error, match.passed)
    if best is None:
        return {}
    return {"fitted_effect": best[0], "fitted_rel_error": best[1], "fitted_right": best[2]}


def _chosen_estimate(
    extraction: ExtractionRecord | None, judge: ExtractionRecord | None, extractor: Extractor
) -> float | None:
    det = extraction.value if extraction is not None else None
    jud = judge.value if judge is not None else None
    if extractor == "deterministic":
        return det
    if extractor == "judge":
        return jud
    return det if det is not None else jud

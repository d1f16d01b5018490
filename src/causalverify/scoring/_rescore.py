"""``rescore``: re-derive a stored cell's extraction, layers and status without a model or sandbox."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from causalverify.extraction import disagree, extract_estimate, fitted_effects
from causalverify.records import (
    DEFAULT_TOLERANCE,
    CellRecord,
    CellStatus,
    ExtractionRecord,
    FitEntry,
    ScoreRecord,
    TurnRecord,
    pre_scoring_status,
    scored_status,
    storable,
)
from causalverify.scoring._conversions import conversion_notes, is_labelled, needs_label, scale_of
from causalverify.scoring._declared import declared_token
from causalverify.scoring._inference import l2c, score_inference
from causalverify.scoring._layers import (
    Extractor,
    Match,
    Profile,
    is_unscoreable,
    match_estimate,
)

#: coefficients of the fit log that extraction and the fitted-effect diagnosis read at most (the
#: sandbox keeps up to 2,000 entries of 200 terms; no analysis fits anywhere near this many)
MAX_FIT_TERMS: Final = 5000
#: ``status_reason`` of a harness failure in scoring itself starts with this (rescoring may
#: clear it); a harness failure at an earlier stage is kept by a rescoring, which cannot redo it
SCORING_STAGE: Final = "scoring"
_WORD: Final = re.compile(r"[A-Za-z0-9_]+")


def rescore(
    record: CellRecord,
    *,
    profile: Profile = "default",
    tolerance: float = DEFAULT_TOLERANCE,
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
        stdout; a stored judge value resolves a cell the extraction leaves undecided),
        ``"judge"`` (the stored ``record.judge`` value; no model is called) or ``"both"``
        (deterministic, falling back to the judge when it finds nothing).

    Returns
    -------
    CellRecord
        A new record with ``extraction``, ``extraction_disagree``, ``scores`` and ``status`` set.

    Notes
    -----
    An accepted declaration (``record.declaration``) is passed to the extractor as
    ``declared``; it belongs to the last turn. An extraction left ``undecided`` (and not
    resolved by the judge) is scored when its candidates all pass (``correct``) or all fail
    (``wrong``), with the first candidate as the estimate; otherwise the cell is ``undecided``:
    ``L2b_plus`` False (the lower bound) and ``L2b_plus_upper`` True (some candidate passes).
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    declared = declared_token(record)
    scored = _rescore_one(
        record, profile=profile, tolerance=tolerance, extractor=extractor, declared=declared
    )
    if not record.turns:
        return scored
    # a repair-mode cell: every turn is rescored alike; the cell's own fields are its last turn's
    last = record.turns[-1].turn
    turns = [
        TurnRecord.of(
            _rescore_one(
                turn.as_cell(record),
                profile=profile,
                tolerance=tolerance,
                extractor=extractor,
                declared=declared if turn.turn == last else None,
            ),
            turn=turn.turn,
            feedback=turn.feedback,
            request_sha256=turn.request_sha256,
        )
        for turn in record.turns
    ]
    return scored.model_copy(update={"turns": turns})


def _layers(
    record: CellRecord,
    *,
    profile: Profile,
    tolerance: float,
    extractor: Extractor,
    estimate: float | None,
) -> tuple[CellStatus | None, ScoreRecord]:
    """The failure status before scoring and the layers that do not need an estimate."""
    failure = pre_scoring_status(record)
    l1 = failure not in {"api_error", "no_response"}
    l2a = l1 and failure not in {"no_code", "parse_error"}
    unscoreable = is_unscoreable(record.canonical)
    scores = ScoreRecord(
        profile=profile,
        tolerance=tolerance,
        extractor=extractor,
        L1=l1,
        L2a=l2a,
        L2b=failure is None,
        L2b_plus=None if unscoreable else False,
        unscoreable=unscoreable,
        estimate=estimate,
    )
    return failure, scores


def score_unread(
    record: CellRecord,
    *,
    status: CellStatus,
    reason: str,
    profile: Profile = "default",
    tolerance: float = DEFAULT_TOLERANCE,
    extractor: Extractor = "deterministic",
) -> CellRecord:
    """The cell scored without reading an estimate, when reading it failed or hit its bound.

    The layers up to L2b are derived as :func:`rescore` derives them (cheaply: no text of the
    cell is searched); L2b+ fails (unless the cell is unscoreable). The status is the first
    failing stage's, or ``status`` (``extraction_limit`` or ``harness_error``) when the cell
    executed; ``reason`` is stored in ``status_reason`` either way.
    """
    failure, scores = _layers(
        record, profile=profile, tolerance=tolerance, extractor=extractor, estimate=None
    )
    return record.model_copy(
        update={
            "extraction": None,
            "extraction_disagree": False,
            "scores": scores,
            "status": failure or status,
            "status_reason": storable(reason),
        }
    )


def _rescore_one(
    record: CellRecord,
    *,
    profile: Profile,
    tolerance: float,
    extractor: Extractor,
    declared: str | None = None,
) -> CellRecord:
    kept = record.status == "harness_error" and not record.status_reason.startswith(SCORING_STAGE)
    extraction = _extract(record, declared)
    estimate = _chosen_estimate(extraction, record.judge, extractor)
    failure, scores = _layers(
        record, profile=profile, tolerance=tolerance, extractor=extractor, estimate=estimate
    )
    l2b, unscoreable = scores.L2b, scores.unscoreable
    if l2b and not unscoreable and record.execution is not None and record.execution.fits:
        scores = scores.model_copy(update=_closest_fit(record, profile, tolerance))
    status = scored_status(failure, unscoreable=unscoreable, passed=None)
    if kept:
        # a harness failure before scoring (the parse check, the sandbox, the judge): what it
        # stopped cannot be redone here, so the cell keeps that status and its reason
        return record.model_copy(
            update={"extraction": extraction, "scores": scores, "status": "harness_error"}
        )
    reported = record.judge if extractor == "judge" else extraction
    if l2b and not unscoreable and estimate is not None:
        line = _line_of(estimate, extraction, record.judge)
        match = match_cell(record, estimate, profile=profile, tolerance=tolerance, line=line)
        scores = scores.model_copy(
            update={
                "L2b_plus": match.passed,
                "rel_error": match.rel_error,
                "matched_conversion": match.conversion,
                "conversions": _notes(record, estimate, line, match, reported),
            }
        )
        status = scored_status(failure, unscoreable=unscoreable, passed=match.passed)
        if extractor == "deterministic" and extraction is not None and extraction.undecided:
            note = f"undecided; resolved by the judge's reading {estimate!r}"
            extraction = extraction.model_copy(
                update={"rationale": f"{extraction.rationale}; {note}".lstrip("; ")}
            )
    elif (
        l2b
        and not unscoreable
        and extractor != "judge"
        and extraction is not None
        and extraction.undecided
    ):
        extraction, scores, status = _score_undecided(
            record, extraction, scores, profile=profile, tolerance=tolerance
        )
    scores = with_inference(record, reported, scores)
    return record.model_copy(
        update={
            "extraction": extraction,
            "extraction_disagree": record.judge is not None and disagree(extraction, record.judge),
            "scores": scores,
            "status": status,
            "status_reason": "",
        }
    )


def with_inference(
    record: CellRecord, reported: ExtractionRecord | None, scores: ScoreRecord
) -> ScoreRecord:
    """``scores`` with layer L2c (:mod:`causalverify.scoring._inference`) when the cell has a
    canonical inference: the SE tier and the rest when it executed, L2c either way."""
    if record.inference is None:
        return scores
    update: dict[str, object] = {"L2c": l2c(scores.L2b_plus, None)}
    if scores.L2b:
        result = score_inference(
            estimate=scores.estimate,
            se=reported.se if reported is not None else None,
            ci=reported.ci if reported is not None else None,
            canonical=record.canonical,
            inference=record.inference,
            target=record.beta,
            scale=scale_of(scores.matched_conversion, record.conversions),
        )
        update.update(
            se_tier=result.tier,
            se_variant=result.variant,
            se_ratio=result.ratio,
            ci_covers=result.ci_covers,
            significance_agrees=result.significance_agrees,
            L2c=l2c(scores.L2b_plus, result.tier),
        )
    return scores.model_copy(update=update)


def _line_of(
    estimate: float, extraction: ExtractionRecord | None, judge: ExtractionRecord | None
) -> int | None:
    """The stdout line the scored estimate was read from (None: not known)."""
    for read in (extraction, judge):
        if read is not None and read.value == estimate:
            return read.line
    return None


def _notes(
    record: CellRecord,
    estimate: float,
    line: int | None,
    match: Match,
    reported: ExtractionRecord | None,
) -> list[str]:
    return conversion_notes(
        record,
        estimate=estimate,
        line=line,
        conversion=match.conversion,
        refused=match.refused,
        reported=reported,
    )


def capped_fits(fits: Sequence[FitEntry], max_terms: int = MAX_FIT_TERMS) -> list[FitEntry]:
    """The first entries of a fit log, up to ``max_terms`` coefficients in all (what extraction
    reads: the cost of matching printed numbers to coefficients grows with both)."""
    out: list[FitEntry] = []
    total = 0
    for entry in fits:
        total += len(entry.terms)
        if total > max_terms:
            break
        out.append(entry)
    return out


def _score_undecided(
    record: CellRecord,
    extraction: ExtractionRecord,
    scores: ScoreRecord,
    *,
    profile: Profile,
    tolerance: float,
) -> tuple[ExtractionRecord, ScoreRecord, CellStatus]:
    """Score an undecided extraction: decided when its candidates all pass or all fail (the
    first, best-ranked candidate is the estimate), else ``undecided`` with L2b+ bounds."""
    if not extraction.candidates:
        return extraction, scores, "no_estimate"
    matches = [
        match_cell(record, c.value, profile=profile, tolerance=tolerance, line=c.line)
        for c in extraction.candidates
    ]
    passed = [m.passed for m in matches]
    n = len(matches)
    if all(passed) or not any(passed):
        first = matches[0]
        verdict = "pass" if first.passed else "fail"
        note = f"undecided between {n} candidates, which all {verdict}: scored on the first"
        scores = scores.model_copy(
            update={
                "L2b_plus": first.passed,
                "rel_error": first.rel_error,
                "matched_conversion": first.conversion,
                "estimate": extraction.candidates[0].value,
                "conversions": _notes(
                    record,
                    extraction.candidates[0].value,
                    extraction.candidates[0].line,
                    first,
                    extraction,
                ),
            }
        )
        status = scored_status(None, unscoreable=False, passed=first.passed)
    else:
        note = f"undecided: {sum(passed)} of {n} candidates pass, so L2b+ is only bounded"
        scores = scores.model_copy(update={"L2b_plus": False, "L2b_plus_upper": True})
        status = "undecided"
    rationale = f"{extraction.rationale}; {note}" if extraction.rationale else note
    return extraction.model_copy(update={"rationale": rationale}), scores, status


def _extract(record: CellRecord, declared: str | None = None) -> ExtractionRecord | None:
    if record.execution is None or record.code is None or record.code.code is None:
        return None
    return extract_estimate(
        code=record.code.code,
        stdout=record.execution.stdout,
        family=record.family,
        fits=capped_fits(record.execution.fits),
        declared=declared,
        outputs=record.execution.outputs,
    )


def match_cell(
    record: CellRecord,
    value: float,
    *,
    profile: Profile,
    tolerance: float,
    line: int | None = None,
    labelled: bool | None = None,
) -> Match:
    """``value`` against the cell's canonical, on the scales its family and profile accept.

    A declared cumulative scale applies only when the output labels ``value`` (printed on
    stdout ``line``, when known) as cumulative; ``labelled`` says so without reading stdout.
    """
    if labelled is None:
        labelled = profile == "paper" or not needs_label(record) or is_labelled(record, value, line)
    return match_estimate(
        value,
        record.canonical,
        family=record.family,
        profile=profile,
        tolerance=tolerance,
        declared=dict(record.conversions),
        labelled=labelled,
    )


def corroborated_fits(code: str, fits: Sequence[FitEntry]) -> list[FitEntry]:
    """The fit-log entries whose estimation function the code names.

    The fit log is written by the script's own process, which can write to its descriptor too:
    an entry is only a *claim* that a model was fitted. An entry whose function (``stats::lm`` → ``lm``, ``statsmodels.OLS`` → ``ols``, any
    case) is not a word of the code cannot have come from a call the code makes, so it is not
    used for the diagnosis. An entry that passes is still self-reported: the report says so.
    """
    words = {w.lower() for w in _WORD.findall(_without_strings_and_comments(code))}
    out = []
    for entry in fits:
        name = re.split(r"::|\.", entry.function)[-1].lower()
        if name and name in words:
            out.append(entry)
    return out


def _without_strings_and_comments(code: str) -> str:
    """``code`` with the string literals and ``#`` comments of R and Python blanked (one pass)."""
    out: list[str] = []
    quote = ""
    escaped = comment = False
    for char in code:
        if char == "\n":
            quote, escaped, comment = "", False, False
            out.append(char)
        elif comment:
            continue
        elif quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            comment = True
        else:
            out.append(char)
            continue
        out.append(" ")
    return "".join(out)


def _closest_fit(record: CellRecord, profile: Profile, tolerance: float) -> dict[str, object]:
    """The fitted effect coefficient closest to the canonical (on the profile's scales), among
    the fit-log entries the code corroborates (:func:`corroborated_fits`)."""
    assert record.execution is not None
    code = (record.code.code if record.code is not None else None) or ""
    fits = corroborated_fits(code, capped_fits(record.execution.fits))
    if not fits:
        return {}
    best: tuple[float, float, bool] | None = None
    for coef in fitted_effects(code=code, family=record.family, fits=fits):
        # a fitted coefficient is a diagnosis, never a reported figure: any declared scale
        match = match_cell(record, coef, profile=profile, tolerance=tolerance, labelled=True)
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
        # the judge reads the cells the extraction leaves undecided, and resolves them
        undecided = extraction is not None and extraction.undecided
        return jud if det is None and undecided else det
    if extractor == "judge":
        return jud
    return det if det is not None else jud

"""Scoring layers, profiles (incl. event-study conversions), unscoreable rule, status derivation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalverify.records import (
    CellKey,
    CellRecord,
    CodeRecord,
    ExtractionRecord,
    Message,
    ModelResponse,
)
from causalverify.sandbox.base import ExecResult
from causalverify.scoring import conversions_for, match_estimate, rescore


def _exec(status: str = "ok", stdout: str = "", missing: str | None = None) -> ExecResult:
    return ExecResult(
        status=status,  # type: ignore[arg-type]
        exit_code=0 if status == "ok" else 1,
        stdout=stdout,
        stderr="",
        wall_seconds=1.0,
        cpu_seconds=1.0,
        missing_package=missing,
    )


def cell(
    *,
    canonical: float = -0.25,
    family: str = "did",
    stdout: str = "ESTIMATE: -0.3\n",
    conversions: dict[str, int] | None = None,
    **overrides: Any,
) -> CellRecord:
    fields: dict[str, Any] = {
        "key": CellKey(scenario_id="s001", model="m", language="r"),
        "family": family,
        "difficulty": "easy",
        "beta": -0.3,
        "canonical": canonical,
        "conversions": conversions or {},
        "protocol": "default",
        "prompt": [Message(role="user", content="q")],
        "prompt_sha256": "0" * 64,
        "response": ModelResponse(content="```r\ncat('x')\n```"),
        "code": CodeRecord(language="r", code="cat('x')", block_index=0, parses=True),
        "execution": _exec(stdout=stdout),
        "status": "api_error",
    }
    fields.update(overrides)
    return CellRecord(**fields)


def test_correct_and_wrong_with_inclusive_tolerance() -> None:
    ok = rescore(cell(canonical=-0.2, stdout="ESTIMATE: -0.3\n"))  # rel error exactly 0.5
    assert ok.status == "correct" and ok.scores is not None
    assert ok.scores.L2b_plus is True and ok.scores.rel_error == pytest.approx(0.5)
    assert (ok.scores.L1, ok.scores.L2a, ok.scores.L2b) == (True, True, True)
    bad = rescore(cell(canonical=-0.2, stdout="ESTIMATE: -0.31\n"))
    assert bad.status == "wrong" and bad.scores is not None and bad.scores.L2b_plus is False
    strict = rescore(cell(canonical=-0.2, stdout="ESTIMATE: -0.3\n"), tolerance=0.25)
    assert strict.status == "wrong"


def test_extraction_is_rederived_and_recorded() -> None:
    rec = rescore(cell(stdout="DiD estimate: -0.26\n"))
    assert rec.extraction is not None and rec.extraction.value == -0.26
    assert rec.extraction.rule == "labelled_line"
    assert rec.scores is not None and rec.scores.estimate == -0.26


def test_unscoreable_is_excluded_not_failed() -> None:
    rec = rescore(cell(canonical=5e-10))
    assert rec.status == "unscoreable" and rec.scores is not None
    assert rec.scores.unscoreable is True and rec.scores.L2b_plus is None
    assert rec.scores.rel_error is None
    assert rescore(cell(canonical=2e-9)).scores.unscoreable is False  # type: ignore[union-attr]


def test_event_study_default_profile_accepts_only_declared_scales() -> None:
    declared = {"per_day": 1, "cumulative_0_10": 11}
    labelled = "CAR over days 0 to +10: 0.022\nESTIMATE: 0.022\n"
    cumulative = cell(family="event_study", canonical=0.002, stdout=labelled, conversions=declared)
    rec = rescore(cumulative, profile="default")
    assert rec.status == "correct" and rec.scores is not None
    assert rec.scores.matched_conversion == "cumulative_0_10"
    assert rec.scores.rel_error == pytest.approx(0.0, abs=1e-12)
    [note] = rec.scores.conversions
    assert note.startswith("scale cumulative_0_10: 0.022 is read as a cumulative figure over 11")
    assert "0.002 per day" in note and "'CAR over days 0 to +10: 0.022'" in note
    five_days = cell(
        family="event_study", canonical=0.002, stdout="ESTIMATE: 0.010\n", conversions=declared
    )
    assert rescore(five_days, profile="default").status == "wrong"
    paper = rescore(five_days, profile="paper")
    assert paper.status == "correct" and paper.scores is not None
    assert paper.scores.matched_conversion == "k=5"


@pytest.mark.parametrize(
    "stdout",
    [
        "ESTIMATE: 0.022\n",
        "Abnormal return over the event window: 0.022\nESTIMATE: 0.022\n",
        "Event study\nEffect: 0.022\nESTIMATE: 0.022\n",
    ],
)
def test_an_unlabelled_cumulative_figure_is_not_converted(stdout: str) -> None:
    """The prompt accepts a cumulative figure only if it is labelled as cumulative: eleven
    times the per-day effect, printed without such a label, is a wrong per-day figure (the
    conversion it would pass on is named as refused), under the default profile; the paper
    profile keeps the published rule (any k = 1..11, labelled or not)."""
    declared = {"per_day": 1, "cumulative_0_10": 11}
    record = cell(family="event_study", canonical=0.002, stdout=stdout, conversions=declared)
    rec = rescore(record, profile="default")
    assert rec.status == "wrong" and rec.scores is not None
    assert rec.scores.matched_conversion == "per_day"
    assert rec.scores.rel_error == pytest.approx(10.0)
    [note] = rec.scores.conversions
    assert note.startswith("not converted: 0.022 is within the tolerance of cumulative_0_10")
    paper = rescore(record, profile="paper")
    assert paper.status == "correct" and paper.scores is not None
    assert paper.scores.matched_conversion == "k=11"
    assert "the paper profile accepts any k = 1..11" in paper.scores.conversions[0]


def test_a_labelled_cumulative_figure_is_converted_with_its_inference() -> None:
    """A heading that says cumulative labels the figures under it, and the ESTIMATE line
    restating one; the SE and interval are divided by the same k (said in the note)."""
    declared = {"per_day": 1, "cumulative_0_10": 11}
    stdout = (
        "Cumulative abnormal return over event days 0 to +10:\nEstimated effect: 0.0231\n"
        "SE: 0.0044\nCI: [0.0145, 0.0317]\nVCOV: clustered by stock\nESTIMATE: 0.0231\n"
    )
    record = cell(family="event_study", canonical=0.002, stdout=stdout, conversions=declared)
    rec = rescore(record, profile="default")
    assert rec.status == "correct" and rec.scores is not None
    assert rec.scores.matched_conversion == "cumulative_0_10"
    [note] = rec.scores.conversions
    assert "'cumulative abnormal return over event days 0 to +10:'" in note
    assert note.endswith("its SE and interval are divided by 11 too")
    per_day = rescore(cell(family="event_study", canonical=0.002, stdout="ESTIMATE: 0.0021\n",
                           conversions=declared))  # fmt: skip
    assert per_day.status == "correct" and per_day.scores is not None
    assert per_day.scores.conversions == []


def test_a_percent_is_a_recorded_conversion() -> None:
    rec = rescore(cell(canonical=-0.25, stdout="DiD estimate (%): -26.0\n"))
    assert rec.status == "correct" and rec.scores is not None
    assert rec.scores.conversions == [
        "unit: printed as -26.0 (a percent, by its label: × 0.01), read as -0.26"
    ]


@pytest.mark.parametrize("k", range(1, 12))
def test_paper_profile_matches_every_multiple(k: int) -> None:
    match = match_estimate(
        0.003 * k, 0.003, family="event_study", profile="paper", tolerance=0.5, declared={}
    )
    assert match.passed and match.conversion == f"k={k}"
    assert match.rel_error == pytest.approx(0.0, abs=1e-12)


def test_paper_profile_rejects_beyond_sixteen_and_a_half_and_wrong_sign() -> None:
    kw: dict[str, Any] = {"family": "event_study", "profile": "paper", "tolerance": 0.5}
    assert match_estimate(16.5, 1.0, declared={}, **kw).passed
    assert not match_estimate(16.6, 1.0, declared={}, **kw).passed
    assert not match_estimate(-1.0, 1.0, declared={}, **kw).passed


def test_non_event_study_families_use_k_equal_one_only() -> None:
    assert conversions_for("did", "paper", {"per_day": 1, "x": 11}) == [(None, 1)]
    assert not match_estimate(
        2.2, 1.0, family="iv", profile="paper", tolerance=0.5, declared={}
    ).passed
    assert conversions_for("event_study", "default", {}) == [("per_day", 1)]


@pytest.mark.parametrize(
    ("overrides", "status", "layers"),
    [
        ({"response": ModelResponse(content=None, error="rate limited")}, "api_error", (0, 0, 0)),
        ({"response": ModelResponse(content="  ")}, "no_response", (0, 0, 0)),
        ({"response": None}, "no_response", (0, 0, 0)),
        ({"code": None}, "no_code", (1, 0, 0)),
        ({"code": CodeRecord(language="r", code="f(", parses=False)}, "parse_error", (1, 0, 0)),
        ({"execution": _exec("error", missing="fixest")}, "missing_package", (1, 1, 0)),
        ({"execution": _exec("timeout")}, "timeout", (1, 1, 0)),
        ({"execution": _exec("cpu_limit")}, "timeout", (1, 1, 0)),
        ({"execution": _exec("memory_limit")}, "resource_limit", (1, 1, 0)),
        ({"execution": _exec("output_limit")}, "resource_limit", (1, 1, 0)),
        ({"execution": _exec("killed")}, "resource_limit", (1, 1, 0)),
        ({"execution": _exec("error")}, "exec_error", (1, 1, 0)),
        ({"execution": _exec("ok", stdout="nothing here\n")}, "no_estimate", (1, 1, 1)),
    ],
)
def test_status_derivation(overrides: dict[str, Any], status: str, layers: tuple[int, ...]) -> None:
    rec = rescore(cell(**overrides))
    assert rec.status == status
    assert rec.scores is not None
    assert (rec.scores.L1, rec.scores.L2a, rec.scores.L2b) == tuple(bool(x) for x in layers)
    assert rec.scores.L2b_plus is False


def test_judge_extractor_uses_the_stored_judge_and_flags_disagreement() -> None:
    judge = ExtractionRecord(method="judge", value=-0.25, rule="judge:fake", rationale="r")
    base = cell(stdout="nothing\n", judge=judge)
    det = rescore(base, extractor="deterministic")
    assert det.status == "no_estimate" and det.extraction_disagree
    assert rescore(base, extractor="judge").status == "correct"
    assert rescore(base, extractor="both").status == "correct"
    same = rescore(cell(stdout="ESTIMATE: -0.25\n", judge=judge), extractor="both")
    assert not same.extraction_disagree
    assert rescore(cell(), extractor="judge").status == "no_estimate"  # no judge stored


def test_rescore_is_pure_and_idempotent() -> None:
    base = cell(stdout="DiD estimate: -0.26\n")
    once = rescore(base, profile="paper", tolerance=0.1)
    assert once == rescore(base, profile="paper", tolerance=0.1)
    assert rescore(once, profile="paper", tolerance=0.1) == once
    assert base.scores is None  # input untouched
    with pytest.raises(ValueError, match="tolerance"):
        rescore(base, tolerance=-0.1)


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda v: abs(v) > 1e-6)


@settings(max_examples=200, deadline=None)
@given(
    est=finite,
    canonical=finite,
    t1=st.floats(0, 3),
    t2=st.floats(0, 3),
    family=st.sampled_from(["did", "event_study", "iv", "rdd"]),
    profile=st.sampled_from(["paper", "default"]),
)
def test_tolerance_monotonicity(
    est: float, canonical: float, t1: float, t2: float, family: Any, profile: Any
) -> None:
    lo, hi = sorted((t1, t2))
    declared = {"per_day": 1, "cumulative_0_10": 11}
    kw: dict[str, Any] = {"family": family, "profile": profile, "declared": declared}
    a = match_estimate(est, canonical, tolerance=lo, **kw)
    b = match_estimate(est, canonical, tolerance=hi, **kw)
    assert a.rel_error == b.rel_error >= 0
    assert (not a.passed) or b.passed
    if family == "event_study" and profile == "paper":  # paper accepts a superset of default
        d = match_estimate(
            est, canonical, tolerance=lo, family=family, profile="default", declared=declared
        )
        assert (not d.passed) or a.passed


def test_the_fitted_effect_closest_to_the_canonical_is_recorded() -> None:
    from causalverify.sandbox.base import FitEntry, FitTerm

    fits = [
        FitEntry(function="stats::lm", terms=[FitTerm(term="treated:post", estimate=-0.9)]),
        FitEntry(
            function="stats::lm",
            terms=[
                FitTerm(term="treated:post", estimate=-0.26),
                FitTerm(term="post", estimate=0.5),
            ],
        ),
    ]
    execution = _exec(stdout="ESTIMATE: 0.5\n").model_copy(update={"fits": fits})
    code = CodeRecord(language="r", code="m <- lm(y ~ treated * post, d)\ncat('x')", parses=True)
    rec = rescore(cell(canonical=-0.25, execution=execution, code=code))
    assert rec.status == "wrong" and rec.scores is not None
    assert rec.scores.fitted_effect == -0.26  # the reported 0.5 is the post main effect
    assert rec.scores.fitted_rel_error == pytest.approx(0.04)
    assert rec.scores.fitted_right is True
    strict = rescore(cell(canonical=-0.25, execution=execution, code=code), tolerance=0.01)
    assert strict.scores is not None and strict.scores.fitted_right is False
    without = rescore(cell(canonical=-0.25))
    assert without.scores is not None and without.scores.fitted_effect is None


def test_fit_log_entries_the_code_does_not_call_set_no_diagnosis() -> None:
    """A script that fits nothing can write fit-log lines itself: they claim a fit the code
    never makes, so they set neither the fitted effect nor "fitted right"."""
    from causalverify.sandbox.base import FitEntry, FitTerm

    forged = [
        FitEntry(function="stats::lm", terms=[FitTerm(term="treated:post", estimate=-0.25)]),
        FitEntry(function="statsmodels.OLS", terms=[FitTerm(term="treated:post", estimate=-0.25)]),
    ]
    execution = _exec(stdout="ESTIMATE: 0.5\n").model_copy(update={"fits": forged})
    code = "cat('ESTIMATE: 0.5')  # lm_robust, llm and tools: words, not the fitted names\n"
    for text in (code, "x <- 1\ncat('ESTIMATE: 0.5')\n"):
        record = cell(execution=execution, code=CodeRecord(language="r", code=text, parses=True))
        rec = rescore(record)
        assert rec.status == "wrong" and rec.scores is not None
        assert rec.scores.fitted_effect is None and rec.scores.fitted_right is None

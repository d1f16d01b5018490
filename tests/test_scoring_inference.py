"""Layer L2c: the reported SE's tier, interval coverage and significance call against the
canonical inference; wired into rescoring."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from causalverify.records import CanonicalInference, ExtractionRecord
from causalverify.scoring import rescore
from causalverify.scoring._inference import l2c, score_inference, se_tier, significant
from test_scoring import cell

CLUSTERED = CanonicalInference(
    ses={"cr1": 0.05, "cr1_dummies": 0.053, "hc1": 0.03, "classical": 0.03}, reference="cr1"
)


@pytest.mark.parametrize(
    ("se", "tier", "variant"),
    [
        (0.0505, "matches", "cr1"),  # within 2% of the clustered SE
        (0.0536, "matches", "cr1_dummies"),  # the closest variant is named
        (0.0302, "wrong", "classical"),  # an unclustered SE of a clustered design: named
        # (hc1 and classical coincide here: the tie goes to the first name)
        (0.045, "plausible", None),  # 0.9x the reference
        (0.0625, "plausible", None),  # 1.25x: inclusive
        (0.0399, "wrong", None),  # below 0.8x, not near any variant
        (0.2, "wrong", None),
        (None, "unread", None),
        (math.nan, "unread", None),
        (0.0, "unread", None),
    ],
)
def test_se_tiers(se: float | None, tier: str, variant: str | None) -> None:
    assert se_tier(se, CLUSTERED) == (tier, variant)


def test_scale_interval_and_significance() -> None:
    # a cumulative effect over 11 days: estimate, SE and interval are divided by 11
    result = score_inference(
        estimate=-0.22,
        se=0.55,
        ci=(-1.3, 0.86),
        canonical=-0.02,
        inference=CLUSTERED,
        target=-0.03,
        scale=11,
    )
    assert (result.tier, result.variant) == ("matches", "cr1")
    assert result.ratio == pytest.approx(1.0)
    assert result.ci_covers is True  # [-0.118, 0.078] covers -0.03
    # reported |-0.02/0.05| < 1.96 and canonical |-0.02/0.05| < 1.96: agree
    assert result.significance_agrees is True


def test_an_interval_alone_decides_significance_and_nothing_is_guessed() -> None:
    assert significant(0.3, None, (0.1, 0.5)) is True
    assert significant(0.3, None, (-0.1, 0.5)) is False
    assert significant(None, None, None) is None
    result = score_inference(
        estimate=0.3, se=None, ci=None, canonical=0.3, inference=CLUSTERED, target=0.25
    )
    assert (result.tier, result.ratio, result.ci_covers, result.significance_agrees) == (
        "unread",
        None,
        None,
        None,
    )


def test_an_unclustered_se_flips_the_significance_call() -> None:
    # canonical 0.08 / 0.05 = 1.6 (not significant); reported 0.08 / 0.03 = 2.67
    result = score_inference(
        estimate=0.08, se=0.03, ci=(0.02, 0.14), canonical=0.08, inference=CLUSTERED, target=0.0
    )
    assert result.tier == "wrong" and result.variant == "classical"
    assert result.significance_agrees is False and result.ci_covers is False


# a clustered design whose errors are nearly independent: the unclustered SEs are within the
# plausible band of the clustered one (as on the default suite, 0.9-1.15x)
NEAR = CanonicalInference(
    ses={"cr1": 0.050, "cr1_dummies": 0.0535, "hc1": 0.047, "classical": 0.0465}, reference="cr1"
)


@pytest.mark.parametrize(
    ("se", "tier", "variant"),
    [
        (0.0465, "wrong", "classical"),  # 0.93x the clustered SE, but it is the classical one
        (0.0471, "wrong", "hc1"),
        (0.0495, "matches", "cr1"),  # closer to the clustered SE than to hc1
        (0.0536, "matches", "cr1_dummies"),
        (0.044, "plausible", None),  # near no variant, 0.88x the clustered SE
        (0.039, "wrong", None),
    ],
)
def test_clustered_designs_match_only_clustered_variants(
    se: float, tier: str, variant: str | None
) -> None:
    assert se_tier(se, NEAR) == (tier, variant)


def test_a_tie_between_variants_does_not_depend_on_their_order() -> None:
    # on a balanced panel HC1 and classical can coincide; a release stores the variants sorted
    ses = {"cr1": 0.056, "hc1": 0.051, "classical": 0.051}
    for order in (ses, dict(sorted(ses.items())), dict(reversed(list(ses.items())))):
        inference = CanonicalInference(ses=order, reference="cr1")
        assert se_tier(0.051, inference) == ("wrong", "classical")
    tied = CanonicalInference(ses={"hc1": 0.1, "cr1": 0.1}, reference="cr1")
    assert se_tier(0.1, tied) == ("matches", "cr1")  # the reference wins a tie


def test_unclustered_variants_match_in_designs_without_clusters() -> None:
    iv = CanonicalInference(ses={"hc1": 0.10, "hc0": 0.099, "classical": 0.08}, reference="hc1")
    assert se_tier(0.0801, iv) == ("matches", "classical")
    assert se_tier(0.0989, iv) == ("matches", "hc0")
    assert se_tier(0.121, iv) == ("plausible", None)


@given(st.floats(min_value=1e-6, max_value=1e3), st.floats(min_value=0.1, max_value=10.0))
def test_tiers_are_scale_free(reference: float, factor: float) -> None:
    inference = CanonicalInference(ses={"hc1": reference}, reference="hc1")
    tier, _ = se_tier(reference * factor, inference)
    if abs(factor - 1) <= 0.0199:
        assert tier == "matches"
    elif 0.801 <= factor <= 1.249:
        assert tier == "plausible"
    elif factor < 0.799 or factor > 1.251:
        assert tier == "wrong"


def test_l2c_needs_the_point_and_the_inference() -> None:
    assert l2c(True, "matches") is True and l2c(True, "plausible") is True
    assert l2c(True, "wrong") is False and l2c(True, "unread") is False
    assert l2c(False, "matches") is False and l2c(None, "matches") is None


def _judged(se: float | None, ci: tuple[float, float] | None = None) -> ExtractionRecord:
    return ExtractionRecord(method="judge", value=-0.3, rule="judge", se=se, ci=ci)


def test_rescore_sets_l2c_from_the_reported_se() -> None:
    inference = CanonicalInference(ses={"cr1": 0.2, "hc1": 0.12}, reference="cr1")
    right = rescore(cell(inference=inference, judge=_judged(0.2, (-0.7, 0.1))), extractor="judge")
    assert right.scores is not None and right.scores.L2b_plus is True
    assert (right.scores.se_tier, right.scores.se_variant, right.scores.L2c) == (
        "matches",
        "cr1",
        True,
    )
    assert right.scores.ci_covers is True and right.scores.significance_agrees is True
    naive = rescore(cell(inference=inference, judge=_judged(0.02)), extractor="judge")
    assert naive.scores is not None and naive.scores.L2b_plus is True
    assert (naive.scores.se_tier, naive.scores.L2c) == ("wrong", False)
    assert naive.scores.significance_agrees is False  # -0.3/0.02 significant, -0.25/0.2 not
    # the deterministic extraction read no SE: unread, never wrong
    unread = rescore(cell(inference=inference))
    assert unread.scores is not None and unread.scores.L2b_plus is True
    assert (unread.scores.se_tier, unread.scores.L2c) == ("unread", False)


def test_rescore_without_canonical_inference_leaves_l2c_out() -> None:
    scored = rescore(cell())
    assert scored.scores is not None
    assert scored.scores.se_tier is None and scored.scores.L2c is None


def test_a_cell_that_did_not_run_fails_l2c_without_a_tier() -> None:
    inference = CanonicalInference(ses={"cr1": 0.1}, reference="cr1")
    scored = rescore(cell(inference=inference, execution=None))
    assert scored.scores is not None and scored.scores.L2b is False
    assert scored.scores.L2c is False and scored.scores.se_tier is None

"""Reading printed numbers against the fit log (rule ``fit_match``), in print styles the text rules
were never tuned on."""

from __future__ import annotations

import pytest

from causalverify.extraction import extract_estimate, fitted_effects
from causalverify.families import Family
from causalverify.sandbox.base import FitEntry, FitTerm

EFFECT = -0.366386750000001


def fit(function: str, terms: dict[str, float], **kw: object) -> FitEntry:
    return FitEntry(
        function=function,
        terms=[FitTerm(term=t, estimate=v, std_error=0.05) for t, v in terms.items()],
        nobs=1600,
        **kw,  # type: ignore[arg-type]
    )


DID = [fit("stats::lm", {"(Intercept)": 2.1, "treated:post": EFFECT, "post": 0.41})]
IV = [
    fit("stats::lm", {"(Intercept)": 0.2, "x": 0.9123, "controls": 0.31}),
    fit(
        "AER::ivreg", {"(Intercept)": 0.1, "x": 0.5071, "controls": 0.29}, iv=True, endogenous=["x"]
    ),
]
RD = [
    fit(
        "rdrobust.rdrobust",
        {"Conventional": 1.02510, "Bias-Corrected": 1.02431, "Robust": 1.02431},
        rd=True,
    )
]


@pytest.mark.parametrize(
    ("stdout", "family", "fits", "expected"),
    [
        # prose with no label the text rules know
        ("The policy moved outcomes by -0.3664 (s.e. 0.0510) on average.\n", "did", DID, -0.3664),
        # a dict / JSON print
        (
            "{'att': np.float64(-0.36638675000000004), 'se': 0.0509}\n",
            "did",
            DID,
            -0.36638675000000004,
        ),
        ('{"result": {"value": -0.36639, "n": 1600}}\n', "did", DID, -0.36639),
        # scientific notation and a unicode minus
        ("result -3.6639e-01\n", "did", DID, -0.36639),
        ("β = \u22120.366\n", "did", DID, -0.366),
        # a percentage
        ("Change: -36.64%\n", "did", DID, -0.3664),
        # Python rdrobust's result table
        (
            "Method             Coef.     S.E.   t-stat    P>|t|       95% CI\n"
            "-------------------------------------------------------------------------\n"
            "Conventional       1.025    0.067   15.229   0.000   [0.893 , 1.157]\n"
            "Robust                 -        -   12.585   0.000   [0.865 , 1.184]\n",
            "rdd",
            RD,
            1.025,
        ),
        # OLS printed after IV: the IV fit's coefficient is the estimate
        ("iv 0.5071\nols 0.9123\n", "iv", IV, 0.5071),
        ("0.5071 0.9123\n", "iv", IV, 0.5071),
    ],
)
def test_a_printed_fitted_effect_is_found_in_any_style(
    stdout: str, family: Family, fits: list[FitEntry], expected: float
) -> None:
    rec = extract_estimate(code="", stdout=stdout, family=family, fits=fits)
    assert rec.rule == "fit_match", rec
    assert rec.value == pytest.approx(expected, rel=1e-12)
    assert "fit " in rec.rationale and f"line {rec.line}" in rec.rationale


def test_a_robustness_print_loses_to_the_main_one() -> None:
    fits = [
        fit("stats::lm", {"treated:post": EFFECT}),
        fit("stats::lm", {"treated:post": -0.2011}),  # the last fit is a robustness check
    ]
    stdout = "Main\n  -0.3664\n=== Robustness (h = 0.15) ===\n  -0.2011\n"
    rec = extract_estimate(code="", stdout=stdout, family="did", fits=fits)
    assert rec.rule == "fit_match" and rec.value == pytest.approx(-0.3664)


def test_two_fits_of_the_design_and_nothing_else_are_undecided_not_the_last() -> None:
    fits = [fit("stats::lm", {"treated:post": -0.1234}), fit("stats::lm", {"treated:post": EFFECT})]
    rec = extract_estimate(code="", stdout="-0.1234\n-0.3664\n", family="did", fits=fits)
    assert rec.undecided and rec.value is None and rec.rule == "undecided"
    assert sorted(c.value for c in rec.candidates) == pytest.approx([-0.3664, -0.1234])


def test_the_printed_value_is_returned_never_the_logged_one() -> None:
    rec = extract_estimate(code="", stdout="v -0.37\n", family="did", fits=DID)
    assert rec.rule == "fit_match" and rec.value == -0.37


@pytest.mark.parametrize(
    "stdout",
    [
        "the answer is 0.4\n",  # one significant digit: a coincidence, not a match
        "nothing printed that equals a fit\n-0.5\n",
    ],
)
def test_no_match_falls_back_to_the_text_rules(stdout: str) -> None:
    fits = [fit("stats::lm", {"treated:post": 0.41})]
    rec = extract_estimate(code="", stdout=stdout, family="did", fits=fits)
    assert rec.rule != "fit_match"


def test_a_forged_entry_cannot_make_an_unprinted_number_the_estimate() -> None:
    forged = [fit("stats::lm", {"treated:post": 123.456})]
    stdout = "DiD estimate: -0.3664\n"
    with_log = extract_estimate(code="", stdout=stdout, family="did", fits=forged)
    without = extract_estimate(code="", stdout=stdout, family="did")
    assert with_log == without


def test_standard_errors_and_other_terms_are_never_matched() -> None:
    fits = [fit("stats::lm", {"(Intercept)": 2.1234, "post": 0.4123, "treated:post": EFFECT})]
    rec = extract_estimate(code="", stdout="2.1234\n0.4123\n", family="did", fits=fits)
    assert rec.rule != "fit_match"


def test_fixest_names_the_instrumented_regressor_fit_x() -> None:
    fits = [fit("fixest::feols", {"(Intercept)": 0.1, "fit_x": 0.4321}, iv=True, endogenous=["x"])]
    rec = extract_estimate(code="", stdout="fit_x 0.4321\n", family="iv", fits=fits)
    assert rec.rule == "fit_match" and rec.value == pytest.approx(0.4321)


def test_iv_fit_names_its_endogenous_regressor() -> None:
    fits = [
        fit("linearmodels.IV2SLS", {"const": 0.1, "d": 0.4321, "w": 0.2}, iv=True, endogenous=["d"])
    ]
    rec = extract_estimate(code="", stdout="0.1000 0.4321 0.2000\n", family="iv", fits=fits)
    assert rec.value == pytest.approx(0.4321)
    assert fitted_effects(code="", family="iv", fits=fits) == [0.4321]


def test_two_fits_printed_alike_are_undecided_with_both_candidates() -> None:
    fits = [fit("stats::lm", {"treated:post": -0.1234}), fit("stats::lm", {"treated:post": EFFECT})]
    stdout = "model A\n  -0.1234\nmodel B\n  -0.3664\n"
    rec = extract_estimate(code="", stdout=stdout, family="did", fits=fits)
    assert rec.value is None and rec.undecided and rec.ambiguous
    assert {c.value for c in rec.candidates} == {-0.3664, -0.1234}
    assert {c.line for c in rec.candidates} == {2, 4}
    assert all(c.evidence and c.score is not None for c in rec.candidates)
    assert "undecided" in rec.rationale


def test_the_same_number_printed_twice_at_different_precision_is_not_ambiguous() -> None:
    stdout = "DiD estimate: -0.37\n" + "treated:post  -0.366387  0.0510  -7.19  0.000\n"
    rec = extract_estimate(code="", stdout=stdout, family="did", fits=DID)
    assert not rec.ambiguous and rec.candidates == []


TABLE_THEN_STATEMENT = (
    "             Estimate Std. Error t value Pr(>|t|)\n"
    "treated:post -0.36639   0.05099   -7.19   <2e-16\n"
    "Estimated effect: {}\n"
)


def test_a_labelled_statement_that_contradicts_the_table_is_undecided() -> None:
    stdout = TABLE_THEN_STATEMENT.format("0.5200")  # hand-computed? a typo? nothing tells
    rec = extract_estimate(code="", stdout=stdout, family="did", fits=DID)
    assert rec.undecided and rec.value is None
    assert {c.value for c in rec.candidates} == {-0.36639, 0.52}
    assert "labelled_line" in {c.rule for c in rec.candidates}


def test_a_labelled_statement_of_another_fitted_coefficient_loses_to_the_effect_row() -> None:
    stdout = TABLE_THEN_STATEMENT.format("0.4100")  # the fit's coefficient on `post`
    rec = extract_estimate(code="", stdout=stdout, family="did", fits=DID)
    assert rec.value == pytest.approx(-0.36639) and not rec.undecided


def test_a_fuzzy_rd_fit_is_the_estimate_of_a_fuzzy_design_only() -> None:
    fuzzy = [
        fit(
            "rdrobust::rdrobust",
            {"Conventional": 1.20341, "Bias-Corrected": 1.19502, "Robust": 1.19502},
            rd=True,
            fuzzy=True,
        )
    ]
    stdout = "                Coef.    Std. Err.\nConventional   1.2034     0.2110\n"
    rec = extract_estimate(code="", stdout=stdout, family="fuzzy_rdd", fits=fuzzy)
    assert rec.value == pytest.approx(1.2034)
    assert "rdrobust" in rec.rationale
    # a sharp design does not take a fuzzy estimator's ratio as its jump
    sharp = extract_estimate(code="", stdout=stdout, family="rdd", fits=fuzzy)
    assert "rdrobust" not in sharp.rationale


def test_an_lfe_felm_iv_fit_names_its_instrumented_regressor_x_fit() -> None:
    fits = [
        fit(
            "lfe::felm",
            {"(Intercept)": 0.1, "`x(fit)`": 0.4321, "w": 0.2},
            iv=True,
            endogenous=["x"],
        )
    ]
    rec = extract_estimate(code="", stdout="Estimate of x: 0.4321\n", family="iv", fits=fits)
    assert rec.value == pytest.approx(0.4321)
    assert fitted_effects(code="", family="iv", fits=fits) == [0.4321]

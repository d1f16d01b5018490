"""The kinds of misreading a first-match ruler made, each as evidence the new one weighs.

Each case is a general failure kind (a setup constant read as the estimate, a unit outside the
number, the wrong quantity under an effect-like label, an operand of printed arithmetic, the last
fit winning over the script's own main line, a label rejected for one word): the extractor must
read the reported number or say it is undecided, never confidently pick another.
"""

from __future__ import annotations

import pytest

from causalverify.extraction import extract_estimate
from causalverify.extraction._printed import read_line
from causalverify.families import Family
from causalverify.records import ExtractionRecord
from causalverify.sandbox.base import FitEntry, FitTerm


def fit(function: str, terms: dict[str, float], **kw: object) -> FitEntry:
    return FitEntry(
        function=function,
        terms=[FitTerm(term=t, estimate=v) for t, v in terms.items()],
        **kw,  # type: ignore[arg-type]
    )


def read(
    stdout: str, family: Family, code: str = "", fits: list[FitEntry] | None = None
) -> ExtractionRecord:
    return extract_estimate(code=code, stdout=stdout, family=family, fits=fits or [])


def test_a_count_in_r_singularities_note_is_not_the_estimate() -> None:
    stdout = (
        "Coefficients: (1 not defined because of singularities)\n"
        "             Estimate Std. Error t value Pr(>|t|)\n"
        "(Intercept)   0.1200     0.0500   2.400   0.0170\n"
        "x             0.4169     1.3666   0.305   0.7600\n"
        "z                 NA         NA      NA       NA\n"
    )
    rec = read(stdout, "iv", code="fit <- lm(y ~ x + z, data = df)")
    assert rec.value == pytest.approx(0.4169)


def test_a_bandwidth_in_a_label_is_a_constant_even_when_a_coefficient_rounds_to_it() -> None:
    code = "h <- 0.3\nfit <- lm(y ~ treated * rc, data = df[abs(df$rc) <= h, ])\n"
    stdout = "Local linear estimate with bandwidth used: 0.30\nRD estimate: NA\n"
    fits = [fit("stats::lm", {"(Intercept)": 0.1, "treated": 0.2987, "rc": 0.3})]
    rec = read(stdout, "rdd", code=code, fits=fits)
    assert rec.value is None


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        ("Effect on employment (%): 4.21\n", 0.0421),
        ("  effect_pct se_pct\n1       4.21   1.10\n", 0.0421),
        ("Estimated effect, in percent: 4.21\n", 0.0421),
        ("DiD effect: 42.1 bp\n", 0.00421),
        ("Effect (basis points): 42.1\n", 0.00421),
        ("DiD effect: 4.21%\n", 0.0421),
    ],
)
def test_units_outside_the_number_convert_it(stdout: str, expected: float) -> None:
    rec = read(stdout, "did")
    assert rec.value == pytest.approx(expected)


def test_a_day0_abnormal_return_is_not_the_main_cumulative_result() -> None:
    stdout = (
        "Market model beta (average): 1.0412\n"
        "Abnormal return on event day 0: 0.0112\n"
        "=== MAIN RESULT ===\n"
        "Mean CAR [-1,+1]: 0.0307\n"
    )
    rec = read(stdout, "event_study")
    assert rec.value == pytest.approx(0.0307)


@pytest.mark.parametrize(
    ("stdout", "family", "expected"),
    [
        ("DiD = (0.5210 - 0.3120) - (0.4050 - 0.4420) = 0.2460\n", "did", 0.246),
        ("Wald estimate = 0.1234 / 0.3086 = 0.3999\n", "iv", 0.3999),
        ("Reduced form / first stage: 0.1234 / 0.3086 -> LATE = 0.3999\n", "iv", 0.3999),
    ],
)
def test_hand_computed_results_read_the_result_not_an_operand(
    stdout: str, family: Family, expected: float
) -> None:
    rec = read(stdout, family)
    assert rec.value == pytest.approx(expected)


def test_the_main_line_wins_over_a_later_fit_that_only_rounds_to_it() -> None:
    fits = [
        fit("AER::ivreg", {"(Intercept)": 0.1, "x": 0.21752}, iv=True, endogenous=["x"]),
        fit("AER::ivreg", {"(Intercept)": 0.1, "x": 0.21101}, iv=True, endogenous=["x"]),
    ]
    stdout = (
        "Main 2SLS elasticity (y wrt x): 0.218   Robust SE: 0.12\n"
        "Robustness: without controls\n"
        "  2SLS coefficient: 0.211\n"
    )
    rec = read(stdout, "iv", fits=fits)
    assert rec.value == pytest.approx(0.218)


def test_a_robustness_column_printed_last_does_not_win() -> None:
    stdout = "                 Main   Robust1  Robust2\ntreat_x_post   -0.2387  -0.2311  -0.1902\n"
    rec = read(stdout, "did")
    assert rec.value in (None, pytest.approx(-0.2387))


@pytest.mark.parametrize(
    "label",
    ["Two-way fixed effects estimate", "TWFE estimate", "Within (fixed effects) estimator"],
)
def test_a_fixed_effects_label_names_an_estimate(label: str) -> None:
    rec = read(f"{label}: -0.2387\n", "did")
    assert rec.value == pytest.approx(-0.2387)


def test_a_naive_model_printed_after_the_main_one_does_not_win() -> None:
    stdout = (
        "TWFE estimate of the policy: -0.2387 (SE 0.051)\n"
        "Naive pooled OLS estimate: -0.1520 (SE 0.044)\n"
    )
    assert read(stdout, "did").value == pytest.approx(-0.2387)


def test_a_first_stage_with_an_effect_like_label_does_not_win() -> None:
    fits = [
        fit("stats::lm", {"(Intercept)": 0.1, "z": 0.6021}),
        fit("AER::ivreg", {"(Intercept)": 0.1, "x": 0.4123}, iv=True, endogenous=["x"]),
    ]
    stdout = "Effect of z on x: 0.6021\nEffect of x on y: 0.4123\n"
    assert read(stdout, "iv", fits=fits).value == pytest.approx(0.4123)


def test_a_placebo_cutoff_does_not_win() -> None:
    stdout = "Jump at the cutoff: 0.2512\nPlacebo cutoff at 0.3 -- jump: 0.0131\n"
    assert read(stdout, "rdd", code="c <- 0.5\nplacebo <- 0.3").value == pytest.approx(0.2512)


def test_three_bandwidths_with_one_preferred() -> None:
    stdout = (
        "h = 0.15: estimate 0.2301\n"
        "h = 0.30: estimate 0.2512  <- preferred\n"
        "h = 0.45: estimate 0.2640\n"
    )
    rec = read(stdout, "rdd", code="for (h in c(0.15, 0.3, 0.45)) {}")
    assert rec.value in (None, pytest.approx(0.2512))


def test_undecided_lists_ranked_candidates_with_evidence() -> None:
    rec = read("Model A estimate: 0.2301\nModel B estimate: 0.4402\n", "did")
    assert rec.undecided and rec.value is None and rec.rule == "undecided"
    assert len(rec.candidates) == 2
    assert all(c.evidence and c.score is not None and c.token for c in rec.candidates)


def test_a_line_is_read_in_time_whatever_it_holds() -> None:
    for line in ("a" * 9000, "est: " * 2000, "x = 0.1 " * 1200, "(" * 9000, "- " * 4500):
        assert len(read_line(line, 1)) <= 9000
        read(line + "\n", "did")

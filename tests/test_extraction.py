"""Unit tests of the deterministic extractor on realistic printed snippets."""

from __future__ import annotations

import pytest

from causalverify.extraction import extract_estimate
from causalverify.extraction._numbers import decimals_of, normalize_line, parse_number
from causalverify.extraction._terms import code_hints, term_score

R_LM_DID = """
Call:
lm(formula = y ~ treated * post, data = df)

Coefficients:
             Estimate Std. Error t value Pr(>|t|)
(Intercept)   0.01234    0.04561   0.271    0.787
treated       0.12340    0.06450   1.913    0.056 .
post          0.05000    0.06450   0.775    0.438
treated:post -0.23866    0.09122  -2.616    0.009 **
---
Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1
"""

TIBBLE = """# A tibble: 3 × 5
  term        estimate std.error statistic  p.value
  <chr>          <dbl>     <dbl>     <dbl>    <dbl>
1 (Intercept) 0.000512  0.000301      1.70 8.93e- 2
2 mkt_ret     0.981     0.0123       79.8  0
3 post_event  0.00213   0.000412      5.17 2.51e- 7
"""

SM_IV_TABLE = """
==============================================================================
                 coef    std err          t      P>|t|      [0.025      0.975]
------------------------------------------------------------------------------
Intercept      0.0123      0.046      0.270      0.787      -0.077       0.102
x_hat          0.4921      0.081      6.075      0.000       0.333       0.651
controls       0.2100      0.040      5.250      0.000       0.131       0.289
==============================================================================
"""

PYFIXEST = """###

Estimation:  IV
Dep. var.: y, Fixed effects: 0
Inference:  hetero
Observations:  500

| Coefficient   |   Estimate |   Std. Error |   t value |   Pr(>|t|) |   2.5% |   97.5% |
|:--------------|-----------:|-------------:|----------:|-----------:|-------:|--------:|
| Intercept     |      0.012 |        0.046 |     0.270 |      0.787 | -0.077 |   0.102 |
| x             |      0.492 |        0.081 |     6.075 |      0.000 |  0.333 |   0.651 |
| controls      |      0.210 |        0.040 |     5.250 |      0.000 |  0.131 |   0.289 |
---
"""


def test_r_lm_summary_picks_the_interaction_not_main_effects() -> None:
    rec = extract_estimate(code="", stdout=R_LM_DID, family="did")
    assert rec.value == -0.23866
    assert rec.rule == "coef_table"
    assert rec.line == 10
    assert "treated:post" in rec.rationale


def test_tibble_with_spaced_exponents() -> None:
    rec = extract_estimate(code="", stdout=TIBBLE, family="event_study")
    assert rec.value == 0.00213


def test_statsmodels_second_stage_term() -> None:
    rec = extract_estimate(code="", stdout=SM_IV_TABLE, family="iv")
    assert rec.value == 0.4921


def test_pyfixest_markdown_table() -> None:
    rec = extract_estimate(code="", stdout=PYFIXEST, family="iv")
    assert rec.value == 0.492


def test_rdd_treated_not_slope_or_interaction() -> None:
    out = """
                              Estimate Std. Error t value Pr(>|t|)
(Intercept)                    0.10234    0.04012   2.551 0.011090
treated                        0.25288    0.05871   4.307 2.1e-05
I(running_var - 0.5)           0.81200    0.21000   3.867 0.000130
treated:I(running_var - 0.5)  -0.10300    0.30100  -0.342 0.732000
"""
    assert extract_estimate(code="", stdout=out, family="rdd").value == 0.25288


def test_event_study_indicator_with_spaces_in_term() -> None:
    out = """
t test of coefficients:

                          Estimate  Std. Error t value  Pr(>|t|)
(Intercept)             1.0102e-04  2.0110e-04  0.5023    0.6155
mkt_ret                 9.8710e-01  1.2010e-02 82.1898 < 2.2e-16 ***
I(event_day >= 0)TRUE  -2.0767e-02  1.1000e-03 -18.879 < 2.2e-16 ***
"""
    assert extract_estimate(code="", stdout=out, family="event_study").value == -2.0767e-02


def test_iv_prefers_the_iv_table_over_ols_printed_after_it() -> None:
    iv = (
        "Call:\nivreg(formula = y ~ x + controls | z + controls, data = df)\n"
        + SM_IV_TABLE.replace("x_hat", "x    ")
    )
    ols = "\nNaive OLS for comparison\n" + SM_IV_TABLE.replace("x_hat ", "x     ").replace(
        "0.4921", "0.6100"
    )
    rec = extract_estimate(code="", stdout=iv + ols, family="iv")
    assert rec.value == 0.4921


def test_first_stage_alone_gives_no_estimate() -> None:
    out = """
Coefficients:
            Estimate Std. Error t value Pr(>|t|)
(Intercept)  0.01000    0.02000   0.500    0.617
z            0.52000    0.04000  13.000   <2e-16 ***
controls     0.30000    0.02000  15.000   <2e-16 ***
"""
    rec = extract_estimate(code="fs <- lm(x ~ z + controls)", stdout=out, family="iv")
    assert rec.value is None
    assert rec.rule == "none"
    assert rec.rationale


def test_marker_last_one_wins_and_beats_everything() -> None:
    out = R_LM_DID + "ESTIMATE: -0.2\nDiD estimate: -0.3\nESTIMATE: -2.5e-01\n"
    rec = extract_estimate(code="", stdout=out, family="did")
    assert (rec.value, rec.rule) == (-0.25, "estimate_marker")


def test_labelled_line_beats_a_later_robustness_table() -> None:
    out = "Main DiD estimate: -0.24100 (SE 0.05)\n\n=== Robustness ===\n" + R_LM_DID
    rec = extract_estimate(code="", stdout=out, family="did")
    assert (rec.value, rec.rule, rec.line) == (-0.241, "labelled_line", 1)


@pytest.mark.parametrize(
    ("line", "family", "expected"),
    [
        ('[1] "DiD estimate: -0.2387"', "did", -0.2387),
        ("IV (2SLS) effect of x on y = 0.41234", "iv", 0.41234),
        ("Average abnormal return per day: 2.1e-03", "event_study", 0.0021),
        ("RD estimate at the cutoff: 0.2529 (SE: 0.0587, p = 0.0000)", "rdd", 0.2529),
        ("Treatment effect: -23.87%", "did", -0.2387),
    ],
)
def test_labelled_lines(line: str, family: str, expected: float) -> None:
    rec = extract_estimate(code="", stdout=line + "\n", family=family)  # type: ignore[arg-type]
    assert rec.value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("line", "family"),
    [
        ("Standard error of the estimate: 0.0558", "did"),
        ("95% CI: [-0.35, -0.13]", "did"),
        ("p-value: 0.00002", "did"),
        ("t-statistic: -4.27", "did"),
        ("First-stage coefficient on z: 0.52", "iv"),
        ("OLS estimate: 0.61", "iv"),
        ("Number of observations: 1600", "did"),
        ("Market model beta estimate: 0.98", "event_study"),
        ("Slope estimate (running variable): 0.81", "rdd"),
    ],
)
def test_labels_that_are_not_the_effect_are_ignored(line: str, family: str) -> None:
    rec = extract_estimate(code="", stdout=line + "\n", family=family)  # type: ignore[arg-type]
    assert rec.value is None


def test_named_vector_and_series() -> None:
    r_vec = " (Intercept)      treated         post treated:post \n   0.0123       0.1234       0.0500      -0.2387 \n"
    assert extract_estimate(code="coef(fit)", stdout=r_vec, family="did").value == -0.2387
    series = "Intercept       0.012345\ntreated:post   -0.238664\ndtype: float64\n"
    assert (
        extract_estimate(code="print(res.params)", stdout=series, family="did").value == -0.238664
    )


def test_vectors_are_not_trusted_when_the_code_prints_standard_errors() -> None:
    series = "Intercept       0.045\ntreated:post    0.0558\ndtype: float64\n"
    rec = extract_estimate(code="print(res.bse)", stdout=series, family="did")
    assert rec.value is None


def test_code_hints_aliases_and_iv_names() -> None:
    hints = code_hints("df$D <- df$treated * df$post\nfit <- lm(y ~ D, data = df)", "did")
    assert "d" in hints.aliases
    assert term_score("D", "did", hints) == 3
    iv = code_hints('IV2SLS.from_formula("y ~ 1 + w + [educ ~ dist]", df)', "iv")
    assert iv.endogenous == {"educ"} and iv.instruments == {"dist"}
    r_iv = code_hints("ivreg(y ~ educ + w | dist + w, data = df)", "iv")
    assert r_iv.endogenous == {"educ"}
    assert term_score("educ", "iv", r_iv) == 3
    assert term_score("dist", "iv", r_iv) is None


def test_number_helpers() -> None:
    assert normalize_line("7.87e- 1 < 2e-16 \u22120.5") == "7.87e-1 <2e-16 -0.5"
    assert parse_number("<2e-16") == 2e-16
    assert parse_number("NA") is None
    assert parse_number("***") is None
    assert decimals_of("-0.2387") == 4
    assert decimals_of("1.5e-03") == 4
    assert decimals_of("12") == 0


def test_rationale_names_line_and_rule() -> None:
    rec = extract_estimate(code="", stdout=PYFIXEST, family="iv")
    assert rec.rationale.startswith(f"line {rec.line}:")
    assert "coef_table" in rec.rationale
    assert rec.method == "deterministic"


NAMED_ROW = """  Estimate Std. Error    t value   Pr(>|t|)
   -0.3664     0.0586    -6.2562     0.0000
"""


def test_row_printed_as_named_vector_is_named_by_the_code() -> None:
    code = 'print(round(coef(summary(fit))["treat_x_post", ], 4))'
    rec = extract_estimate(code=code, stdout=NAMED_ROW, family="did")
    assert (rec.value, rec.rule, rec.line) == (-0.3664, "coef_table", 2)
    # the intercept's row, or two rows picked by the code, name no effect: nothing is returned
    for other in ('coef(summary(fit))["(Intercept)", ]', 'a["treated", ]; b["treat_x_post", ]'):
        assert extract_estimate(code=other, stdout=NAMED_ROW, family="did").value is None


SPEC_TABLE = """                model  estimate  std_error
1     local quadratic 0.2630126 0.04758033
2 local linear (main) 0.2528788 0.03244854
3       global linear 0.2471894 0.02514451
"""


def test_specification_table_takes_the_main_row_never_a_secondary_one() -> None:
    rec = extract_estimate(code="", stdout=SPEC_TABLE, family="rdd")
    assert (rec.value, rec.rule, rec.line) == (0.2528788, "spec_table", 3)
    only_secondary = "\n".join(x for x in SPEC_TABLE.splitlines() if "main" not in x)
    assert extract_estimate(code="", stdout=only_secondary, family="rdd").value is None


@pytest.mark.parametrize(
    ("code", "stdout", "expected"),
    [
        ('print(res.params["treat_x_post"])', "-0.3663867500000046\n", -0.3663867500000046),
        ('print(coef(fit)[["treated:post"]])', "[1] -0.3663868\n", -0.3663868),
        ('print(res.bse["treat_x_post"])', "0.0586\n", None),  # an SE printed alone
        ('print(res.params["treated"])', "0.6058\n", None),  # a main effect
        ('b = res.params["treat_x_post"]\nprint(b, res.bse["treat_x_post"])', "-0.37\n", None),
        ('message(coef(fit)[["treated:post"]])', "", None),  # stderr only: nothing printed
    ],
)
def test_bare_number(code: str, stdout: str, expected: float | None) -> None:
    rec = extract_estimate(code=code, stdout=stdout, family="did")
    assert rec.value == expected
    assert rec.rule == ("bare_number" if expected is not None else "none")


ETABLE = """|                           | ('y', '(1)')   | ('y', '(2)')   |
|:--------------------------|:---------------|:---------------|
| ('coef', 'treat_x_post')  | -0.366***      | -0.35**        |
|                           |  (0.056)       |  (0.101)       |
| ('stats', 'Observations') | 1,600          | 1,400          |
"""


def test_markdown_regression_table_reads_coefficients_not_parenthesised_ses() -> None:
    rec = extract_estimate(code="", stdout=ETABLE, family="did")
    # two models side by side and nothing says which is the estimate: undecided, both listed
    assert rec.undecided and {c.value for c in rec.candidates} == {-0.366, -0.35}
    assert {c.line for c in rec.candidates} == {3}
    one = ETABLE.replace("| -0.35**        |", "|                |")
    assert extract_estimate(code="", stdout=one, family="did").value == -0.366

"""The reported standard error and interval of a decided estimate, read from the same evidence."""

from __future__ import annotations

import pytest

from causalverify.extraction import extract_estimate
from causalverify.families import Family

STATSMODELS = """\
                                coef    std err          z      P>|z|      [0.025      0.975]
---------------------------------------------------------------------------------------------
Intercept                 -7.572e-05      0.001     -0.149      0.882      -0.001       0.001
I(event_day >= 0)[T.True]    -0.0208      0.001    -28.522      0.000      -0.022      -0.019
"""
R_LM = """\
             Estimate Std. Error t value Pr(>|t|)
(Intercept)   0.01234    0.04561   0.271    0.787
treated:post -0.36639    0.05099  -7.190   <2e-16 ***
"""
TIDY = """\
# A tibble: 2 × 7
  term         estimate std.error statistic  p.value conf.low conf.high
  <chr>           <dbl>     <dbl>     <dbl>    <dbl>    <dbl>     <dbl>
1 (Intercept)    0.0123    0.0456     0.271 7.87e- 1  -0.0771     0.102
2 x              0.4921    0.0810     6.08  2.51e- 9   0.333      0.651
"""


@pytest.mark.parametrize(
    ("stdout", "family", "value", "se", "ci", "source"),
    [
        (
            "Main 2SLS elasticity (y wrt x): 0.218   Robust SE: 0.12   95% CI: [ -0.018 , 0.453 ]\n",
            "iv",
            0.218,
            0.12,
            (-0.018, 0.453),
            "line",
        ),
        (R_LM, "did", -0.36639, 0.05099, None, "table"),
        (STATSMODELS, "event_study", -0.0208, 0.001, (-0.022, -0.019), "table"),
        (TIDY, "iv", 0.4921, 0.0810, (0.333, 0.651), "table"),
        ("DiD estimate: 0.2500 (0.0410)\n", "did", 0.25, 0.041, None, "parenthesis"),
        ("Effect (%): 4.21 (SE 1.10)\n", "did", 0.0421, 0.011, None, "line"),
        (
            "SE: 0.05\nCI: [0.1, 0.3]\nVCOV: clustered by unit\nESTIMATE: 0.2\n",
            "did",
            0.2,
            0.05,
            (0.1, 0.3),
            "marker",
        ),
    ],
)
def test_the_reported_se_and_interval_are_read(
    stdout: str,
    family: Family,
    value: float,
    se: float,
    ci: tuple[float, float] | None,
    source: str,
) -> None:
    rec = extract_estimate(code="", stdout=stdout, family=family)
    assert rec.value == pytest.approx(value)
    assert rec.se == pytest.approx(se) and rec.se_source == source
    assert rec.ci == (pytest.approx(ci) if ci is not None else None)


@pytest.mark.parametrize(
    "stdout",
    [
        "DiD estimate: 0.2500\n",  # nothing printed
        "DiD estimate: 0.2500 (3.27%)\n".replace("3.27", "25.00"),  # a restatement, not an SE
        "ESTIMATE: 0.25\n",
    ],
)
def test_an_unprinted_se_stays_unread(stdout: str) -> None:
    rec = extract_estimate(code="", stdout=stdout, family="did")
    assert rec.value == pytest.approx(0.25)
    assert rec.se is None and rec.ci is None and rec.se_source is None


def test_an_undecided_cell_reads_no_se() -> None:
    rec = extract_estimate(
        code="",
        stdout="Model A estimate: 0.2301 (0.04)\nModel B estimate: 0.4402 (0.05)\n",
        family="did",
    )
    assert rec.undecided and rec.se is None

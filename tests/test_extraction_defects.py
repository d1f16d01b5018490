"""The classes of silent wrong extraction a review found, each with the output that showed it."""

from __future__ import annotations

import pytest

from causalverify.extraction import extract_estimate


def test_only_the_protocol_marker_is_the_marker_and_a_later_placebo_does_not_win() -> None:
    stdout = "Estimate: 0.41\nPlacebo test\nEstimate: 0.02\n"
    rec = extract_estimate(code="", stdout=stdout, family="did")
    assert rec.rule != "estimate_marker"
    assert rec.value == pytest.approx(0.41)


def test_a_lower_case_marker_is_not_the_marker() -> None:
    rec = extract_estimate(code="", stdout="estimate: 0.5\nESTIMATE: 0.25\n", family="did")
    assert rec.rule == "estimate_marker" and rec.value == 0.25


def test_a_marker_under_a_placebo_heading_loses_to_the_main_one() -> None:
    stdout = "ESTIMATE: 0.41\n=== Placebo (fake year 2019) ===\nESTIMATE: 0.02\n"
    rec = extract_estimate(code="", stdout=stdout, family="did")
    assert rec.value == pytest.approx(0.41)


def test_a_demoted_label_does_not_beat_a_coefficient_vector_printed_after_it() -> None:
    stdout = (
        "Naive OLS estimate: 0.9123\n"
        "(Intercept)           x    controls \n"
        "  0.1000      0.5071      0.2900 \n"
    )
    code = (
        "library(AER)\nfit <- ivreg(y ~ x + controls | z + controls, data = d)\nprint(coef(fit))\n"
    )
    rec = extract_estimate(code=code, stdout=stdout, family="iv")
    assert rec.rule == "coef_vector" and rec.value == pytest.approx(0.5071)


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        # a heading with a digit marks the IV section: the value under it is the estimate
        (
            "OLS:\n  effect estimate = 0.9123\n2SLS (preferred):\n  effect estimate = 0.5071\n",
            0.5071,
        ),
        # a robustness heading with a number does not hand its value the headline
        (
            "Main estimate: 0.2529\n=== Robustness (h = 0.15) ===\nEstimate: 0.3011\n",
            0.2529,
        ),
    ],
)
def test_headings_with_numbers_are_headings(stdout: str, expected: float) -> None:
    family = "iv" if "2SLS" in stdout else "rdd"
    rec = extract_estimate(code="", stdout=stdout, family=family)
    assert rec.value == pytest.approx(expected), rec.rationale


def test_a_truncated_pandas_series_still_reads_its_named_rows() -> None:
    stdout = (
        "Intercept       0.1234\n"
        "treated:post   -0.3664\n"
        "                ...   \n"
        "C(period)[T.9]  0.0101\n"
        "Name: params, dtype: float64\n"
    )
    rec = extract_estimate(code="print(res.params)", stdout=stdout, family="did")
    assert rec.value == pytest.approx(-0.3664), rec.rationale


def test_a_mention_of_standard_errors_in_a_formatted_line_keeps_vectors() -> None:
    code = 'print(res.params)\nprint(f"se {res.bse["treated:post"]:.3f}")\n'
    stdout = "Intercept       0.1234\ntreated:post   -0.3664\ndtype: float64\nse 0.051\n"
    rec = extract_estimate(code=code, stdout=stdout, family="did")
    assert rec.value == pytest.approx(-0.3664), rec.rationale


def test_a_printed_vector_of_standard_errors_still_switches_vectors_off() -> None:
    code = "print(res.params)\nprint(res.bse)\n"
    stdout = (
        "Intercept       0.1234\ntreated:post   -0.3664\ndtype: float64\n"
        "Intercept       0.0211\ntreated:post    0.0510\ndtype: float64\n"
    )
    rec = extract_estimate(code=code, stdout=stdout, family="did")
    assert rec.value is None or rec.ambiguous

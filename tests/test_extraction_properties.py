"""Property tests: outputs generated from templates with a known answer and decoy numbers.

Whatever the decoys (standard errors, statistics, p-values, intervals, sample sizes, first
stages, naive and robustness variants, headings with numbers) and the formatting (scientific
notation, percentages, thousands separators, negative zero, unicode minus), the extractor returns
the known answer or nothing, never another number.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causalverify.extraction import extract_estimate
from causalverify.families import Family
from causalverify.records import ExtractionRecord
from causalverify.sandbox.base import FitEntry, FitTerm

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FAMILY_TERM: dict[Family, str] = {
    "did": "treated:post",
    "event_study": "post",
    "iv": "x",
    "rdd": "treated",
}
EFFECT_LABEL: dict[Family, list[str]] = {
    "did": ["DiD estimate", "Difference-in-differences effect", "ATT (DiD)", "Treatment effect"],
    "event_study": ["Average abnormal return per day", "Post-event effect", "Event effect"],
    "iv": ["2SLS estimate", "IV effect of x", "Second-stage coefficient", "LATE (2SLS)"],
    "rdd": ["RD estimate at the cutoff", "Discontinuity", "RDD effect", "Jump at cutoff"],
}

magnitudes = st.floats(min_value=0.011, max_value=9.5, allow_nan=False, allow_infinity=False)
signs = st.sampled_from([1.0, -1.0])
families = st.sampled_from(sorted(FAMILY_TERM))


def fmt(value: float, style: str) -> str:
    """Print ``value`` in a style; the answer is what the printed text means."""
    if style == "fixed4":
        text = f"{value:.4f}"
    elif style == "fixed6":
        text = f"{value:.6f}"
    elif style == "sci":
        text = f"{value:.4e}"
    elif style == "g":
        text = f"{value:.7g}"
    else:  # unicode minus
        text = f"{value:.5f}".replace("-", "\u2212")
    return text


def printed_value(text: str) -> float:
    return float(text.replace("\u2212", "-").rstrip("%"))


def half_unit(text: str) -> float:
    t = text.replace("\u2212", "-").rstrip("%").lower()
    mantissa, _, exp = t.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (-(decimals - (int(exp) if exp else 0)))


#: decoys that scripts print after their headline (robustness, placebo, a second estimate)
_LATER = ("Robust", "Placebo", "Estimate:")


def decoys(rng: st.DrawFn, answer: float, family: Family) -> list[str]:
    """Lines that print other numbers: statistics of the answer, variants, sample sizes."""
    se = abs(answer) / rng(st.floats(min_value=1.5, max_value=9.0))
    naive = answer * rng(st.sampled_from([1.7, 0.4, -1.3, 2.9]))
    robust = answer * rng(st.sampled_from([0.6, 1.45, 0.25]))
    n = rng(st.integers(min_value=1000, max_value=2_000_000))
    pool = [
        f"Std. Error: {se:.4f}",
        f"t value: {answer / se:.3f}",
        f"p-value: {rng(st.floats(min_value=0.0001, max_value=0.9)):.4f}",
        f"95% CI: [{answer - 1.96 * se:.4f}, {answer + 1.96 * se:.4f}]",
        f"Observations: {n:,}",
        f"N = {n}",
        f"Naive OLS estimate: {naive:.4f}",
        f"First-stage F statistic: {rng(st.floats(min_value=10, max_value=900)):.2f}",
        f"First-stage coefficient on z: {naive:.4f}",
        f"Placebo estimate: {robust:.4f}",
        f"Robustness (h = 0.15) estimate: {robust:.4f}",
        "=== Robustness (h = 0.15) ===",
        f"Estimate: {robust:.4f}",
        f"R-squared: {rng(st.floats(min_value=0.01, max_value=0.99)):.3f}",
        "Mean of outcome in control group: -0.0000",
        f"Share treated: {rng(st.floats(min_value=0.1, max_value=0.9)):.1%}",
    ]
    if family == "iv":
        pool.append(f"OLS estimate: {naive:.4f}")
    if family == "rdd":
        pool.append(f"Slope of running variable: {naive:.4f}")
    picked = rng(st.lists(st.sampled_from(pool), max_size=6, unique=True))
    return list(picked)


@st.composite
def labelled_outputs(rng: st.DrawFn) -> tuple[str, Family, float, float]:
    family = rng(families)
    answer = rng(signs) * rng(magnitudes)
    style = rng(st.sampled_from(["fixed4", "fixed6", "sci", "g", "unicode"]))
    percent = rng(st.booleans())
    text = f"{answer * 100:.2f}%" if percent else fmt(answer, style)
    label = rng(st.sampled_from(EFFECT_LABEL[family]))
    heading = rng(
        st.sampled_from(
            [
                "",
                "=== Main results (model 1) ===",
                "2SLS (preferred):",
                "## Results 2026",
                "MAIN SPECIFICATION",
            ]
        )
    )
    main = [heading, f"{label}: {text}"] if heading else [f"{label}: {text}"]
    before = decoys(rng, answer, family)
    after = decoys(rng, answer, family)
    # robustness/placebo material is printed after the headline, as scripts do
    before = [x for x in before if not any(w in x for w in _LATER)]
    lines = [*before, *main, *after]
    value = printed_value(text) / (100.0 if percent else 1.0)
    tol = half_unit(text) / (100.0 if percent else 1.0)
    return "\n".join(lines) + "\n", family, value, tol


@st.composite
def table_outputs(rng: st.DrawFn) -> tuple[str, Family, float, float, list[FitEntry]]:
    family = rng(families)
    answer = rng(signs) * rng(magnitudes)
    term = FAMILY_TERM[family]
    se = abs(answer) / 3.1
    other = {"(Intercept)": 1.2345 * rng(signs), "controls": 0.4321, "mkt_ret": 0.9876}
    if family == "event_study":
        other.pop("controls")
    rows = [(name, value) for name, value in other.items()] + [(term, answer)]
    rows = rng(st.permutations(rows))
    header = f"{'':14}{'Estimate':>10}{'Std. Error':>12}{'t value':>9}{'Pr(>|t|)':>10}"
    body = [
        f"{name:<14}{value:>10.5f}{se:>12.5f}{value / se:>9.3f}{0.0012:>10.4f}"
        for name, value in rows
    ]
    # robustness and placebo material comes after the headline table, as scripts print it
    before = [x for x in decoys(rng, answer, family) if not any(w in x for w in _LATER)]
    lines = [*before, header, *body, *decoys(rng, answer, family)]
    robust_after = rng(st.booleans())
    variant = answer * 0.61
    if robust_after:
        lines += [
            "=== Robustness (h = 0.15) ===",
            header,
            f"{term:<14}{variant:>10.5f}{se:>12.5f}{variant / se:>9.3f}{0.01:>10.4f}",
        ]
    printed = float(f"{answer:.5f}")
    fits = [
        FitEntry(
            function="stats::lm",
            terms=[FitTerm(term=n, estimate=v, std_error=se) for n, v in rows],
            nobs=1000,
        )
    ]
    if robust_after:
        fits.append(
            FitEntry(
                function="stats::lm",
                terms=[FitTerm(term=term, estimate=variant, std_error=se)],
                nobs=400,
            )
        )
    return "\n".join(lines) + "\n", family, printed, 0.5e-5, fits


def _close(value: float, expected: float, tol: float) -> bool:
    return math.isclose(value, expected, rel_tol=0, abs_tol=tol + 1e-12)


def _ok(rec: ExtractionRecord, expected: float, tol: float) -> bool:
    """The known answer, nothing, or an explicit ambiguity that lists the known answer."""
    if rec.value is None or _close(rec.value, expected, tol):
        return True
    return rec.ambiguous and any(_close(c.value, expected, tol) for c in rec.candidates)


@SETTINGS
@given(labelled_outputs())
def test_labelled_outputs_give_the_answer_or_nothing(
    case: tuple[str, Family, float, float],
) -> None:
    stdout, family, expected, tol = case
    rec = extract_estimate(code="", stdout=stdout, family=family)
    assert _ok(rec, expected, tol), (stdout, rec)


@SETTINGS
@given(table_outputs(), st.booleans())
def test_coefficient_tables_give_the_answer_or_nothing(
    case: tuple[str, Family, float, float, list[FitEntry]], with_fits: bool
) -> None:
    stdout, family, expected, tol, fits = case
    rec = extract_estimate(code="", stdout=stdout, family=family, fits=fits if with_fits else [])
    assert _ok(rec, expected, tol), (stdout, rec)


@SETTINGS
@given(table_outputs())
def test_with_the_fit_log_the_table_answer_is_always_found(
    case: tuple[str, Family, float, float, list[FitEntry]],
) -> None:
    stdout, family, expected, tol, fits = case
    rec = extract_estimate(code="", stdout=stdout, family=family, fits=fits)
    # found, or undecided against a contradicting statement with the table answer listed
    assert (rec.value is not None or rec.undecided) and _ok(rec, expected, tol), (stdout, rec)

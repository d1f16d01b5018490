"""Assembling a reference agent's script from per-family code pieces.

Every script has the same shape: a setup piece (imports, reading the CSV, derived columns), an
analysis piece that leaves the reported number in ``est``, optional robustness output, under the
``default`` protocol an inference piece that leaves the reported standard error in ``se`` and its
description in ``vcov_used`` (for the agents that report one), and a report piece. The pieces for each (language, family) live in :mod:`._r_code` and
:mod:`._python_code`; this module picks them for an agent's behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from causalverify.families import Family

#: What the script computes and reports.
Variant = Literal[
    "textbook", "naive", "cumulative", "wrong-term", "naive-se", "mute", "missing", "typo"
]

DATA_TOKEN = "<<DATA>>"
CUTOFF_TOKEN = "<<CUTOFF>>"

#: the text line printed before the number, per family and variant (the same in every language)
DESCRIPTIONS: dict[Family, dict[str, str]] = {
    "did": {
        "textbook": "Two-way fixed-effects estimate of the effect of the policy:",
        "naive": "Post-period difference in mean outcomes, treated minus comparison units:",
        "cumulative": "Cumulative effect over all post-policy periods:",
        "wrong-term": "Effect from the interacted model:",
    },
    "event_study": {
        "textbook": "Average daily abnormal return on event days 0 to +10:",
        "naive": "Average daily raw return on event days 0 to +10 relative to the stock mean:",
        "cumulative": "Cumulative abnormal return over event days 0 to +10:",
        "wrong-term": "Estimated coefficient from the market model:",
    },
    "iv": {
        "textbook": "Two-stage least squares estimate of the effect of x on y:",
        "naive": "OLS estimate of the effect of x on y:",
        "cumulative": "Two-stage least squares estimate of the effect of x on y:",
        "wrong-term": "Estimated effect of the instrument:",
    },
    "rdd": {
        "textbook": "Estimated jump in the outcome at the cutoff:",
        "naive": "Difference in mean outcomes, treated minus untreated:",
        "cumulative": "Estimated jump in the outcome at the cutoff:",
        "wrong-term": "Estimated coefficient from the local linear model:",
    },
}


@dataclass(frozen=True, kw_only=True)
class FamilyCode:
    """The code pieces for one design family in one language.

    Each analysis piece assigns the number it reports to ``est``; ``textbook`` also leaves the
    fitted model in ``fit`` for ``robustness``. ``<<DATA>>`` stands for the CSV path and
    ``<<CUTOFF>>`` for the running-variable cutoff.
    """

    setup: str
    textbook: str
    robustness: str
    naive: str
    cumulative: str
    wrong_term: str
    missing: str
    typo: str
    #: printed (as a plain-text line) before the number by the variant that reports it; see
    #: :data:`DESCRIPTIONS`
    descriptions: dict[str, str]
    #: ``default`` protocol only, after ``textbook``'s analysis: the reference variant's SE in
    #: ``se`` (clustered CR1 for panels, HC1 otherwise) and its description in ``vcov_used``;
    #: empty for the designs without canonical inference
    inference: str = ""
    #: ``naive-se``: the analysis when it differs from ``textbook``'s (a hand-made two-stage
    #: least squares), else empty; the point estimate is ``textbook``'s either way
    naive_se: str = ""
    #: ``naive-se``, ``default`` protocol only: a wrong SE in ``se`` and ``vcov_used``
    naive_se_inference: str = ""


@dataclass(frozen=True, kw_only=True)
class Reporter:
    """How a language prints text and the estimate."""

    print_text: str  # format string with {text}
    print_labelled: str  # prints "Estimated effect: <est with 10 significant digits>"
    print_estimate: str  # prints "ESTIMATE: <est with 10 significant digits>"
    mute_line: str
    #: prints "SE: <se>", "CI: [<lo>, <hi>]" (est -/+ 1.96 se) and "VCOV: <vcov_used>"
    print_inference: str = ""


def assemble(
    pieces: FamilyCode,
    reporter: Reporter,
    variant: Variant,
    *,
    data_file: str,
    cutoff: float,
    estimate_line: bool,
) -> str:
    """Put together a complete script.

    Parameters
    ----------
    pieces
        The family's code pieces in the target language.
    reporter
        The language's printing statements.
    variant
        Which analysis to run and report.
    data_file
        The CSV path relative to the working directory.
    cutoff
        The running-variable cutoff (used by RDD pieces only).
    estimate_line
        Whether to finish with ``ESTIMATE: <number>`` (the ``default`` protocol), preceded by
        the ``SE:``, ``CI:`` and ``VCOV:`` lines where the variant reports its inference.

    Returns
    -------
    str
        The script text, ending with a newline.
    """
    analysis = {
        "textbook": pieces.textbook + pieces.robustness,
        "mute": pieces.textbook,
        "naive": pieces.naive,
        "cumulative": pieces.cumulative,
        "wrong-term": pieces.wrong_term,
        "naive-se": pieces.naive_se or pieces.textbook,
        "missing": pieces.missing,
        "typo": pieces.typo + pieces.robustness,
    }[variant]
    inference = _inference(pieces, variant) if estimate_line else ""
    report = _report(pieces, reporter, variant, estimate_line, inference=bool(inference))
    code = pieces.setup + "\n" + analysis + "\n" + (inference + "\n" if inference else "") + report
    return code.replace(DATA_TOKEN, data_file).replace(CUTOFF_TOKEN, repr(float(cutoff)))


def _inference(pieces: FamilyCode, variant: Variant) -> str:
    """The piece that computes the reported SE (``default`` protocol), or empty."""
    if variant == "textbook":
        return pieces.inference
    if variant == "naive-se":
        return pieces.naive_se_inference
    return ""


def _report(
    pieces: FamilyCode,
    reporter: Reporter,
    variant: Variant,
    estimate_line: bool,
    *,
    inference: bool,
) -> str:
    if variant == "mute":
        return reporter.mute_line
    key = variant if variant in pieces.descriptions else "textbook"
    lines = [reporter.print_text.format(text=pieces.descriptions[key]), reporter.print_labelled]
    if inference:
        lines.append(reporter.print_inference)
    if estimate_line:
        lines.append(reporter.print_estimate)
    return "\n".join(lines) + "\n"

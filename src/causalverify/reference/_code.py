"""Assembling a reference agent's script from per-family code pieces.

Every script has the same shape: a setup piece (imports, reading the CSV, derived columns), an
analysis piece that leaves the reported number in ``est``, optional robustness output, under the
``default`` protocol an inference piece that leaves the reported standard error in ``se`` and its
description in ``vcov_used`` (for the agents that report one), and a report piece. The pieces
for each (language, family) live in the family's design module (``R_CODE``, ``PYTHON_CODE``,
:mod:`causalverify.designs`), each language's printing statements in :mod:`._r_code` and
:mod:`._python_code`; this module picks them for an agent's behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from causalverify.designs import FamilyCode

#: What the script computes and reports.
Variant = Literal[
    "textbook", "naive", "cumulative", "wrong-term", "naive-se", "mute", "missing", "typo"
]

DATA_TOKEN = "<<DATA>>"
CUTOFF_TOKEN = "<<CUTOFF>>"


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

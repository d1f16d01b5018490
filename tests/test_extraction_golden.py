"""The golden corpus: real R and Python output, produced in the sandbox on built scenarios.

Regenerate with ``python tests/golden/regenerate.py``. Each case's expected value and the other
statistics of the same term (SE, statistic, p-value, interval bounds) were written to stderr by
the script itself from the fitted object, so they are independent of the extractor.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from causalverify.extraction import extract_estimate
from causalverify.extraction._numbers import NUMBER, decimals_of, normalize_line, parse_number
from causalverify.records import ExtractionRecord
from causalverify.sandbox.base import FitEntry

GOLDEN = Path(__file__).resolve().parent / "golden"
TRUTH_MARKER = "# ---- golden truth (stderr) ----"


def _cases() -> list[dict[str, Any]]:
    data = json.loads((GOLDEN / "manifest.json").read_text())
    return list(data["cases"])


def _code(script: str) -> str:
    return (GOLDEN / "scripts" / script).read_text().split(TRUTH_MARKER)[0]


def _stdout(case: str) -> str:
    return (GOLDEN / "fixtures" / f"{case}.stdout").read_text()


def _fits(case: str) -> list[FitEntry]:
    raw = json.loads((GOLDEN / "fixtures" / f"{case}.fits.json").read_text())
    return [FitEntry.model_validate(entry) for entry in raw]


def printed_tolerance(stdout: str, record: ExtractionRecord) -> float:
    """Half a unit in the last printed digit of the token the value was read from."""
    assert record.value is not None and record.line is not None
    line = normalize_line(stdout.splitlines()[record.line - 1])
    scale = 100.0 if record.rule.endswith("percent") else 1.0
    best = 0.0
    for token in re.findall(NUMBER, line):
        value = parse_number(token)
        if value is not None and abs(value - record.value * scale) <= 1e-9 * max(1.0, abs(value)):
            best = max(best, 0.5 * 10.0 ** (-decimals_of(token)) / scale)
    return best


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol + 1e-12 * max(1.0, abs(b))


def judge_case(
    case: dict[str, Any], *, with_fits: bool = True
) -> tuple[bool, bool, ExtractionRecord]:
    """(correct, returned a forbidden statistic, record) for one case.

    ``with_fits`` gives the extractor the script's fit log, as a run does; without it only the
    text rules apply (cells stored before the fit log existed, hand-computed estimates).
    """
    stdout = _stdout(case["case"])
    fits = _fits(case["case"]) if with_fits else []
    record = extract_estimate(
        code=_code(case["script"]), stdout=stdout, family=case["family"], fits=fits
    )
    if record.value is None:
        return False, False, record
    tol = printed_tolerance(stdout, record)
    correct = _close(record.value, case["expected"], tol)
    forbidden = not correct and any(_close(record.value, o, tol) for o in case["others"])
    return correct, forbidden, record


def test_corpus_is_large_and_varied() -> None:
    cases = _cases()
    assert len(cases) >= 60
    combos = {(c["family"], c["language"]) for c in cases}
    assert len(combos) == 8  # every family in both languages
    assert len({c["case"] for c in cases}) == len(cases)  # one fixture per case
    for case in cases:
        assert (GOLDEN / "fixtures" / f"{case['case']}.stdout").is_file()
        assert (GOLDEN / "fixtures" / f"{case['case']}.fits.json").is_file()
        assert (GOLDEN / "scripts" / case["script"]).is_file()


def test_every_golden_case_with_the_fit_log() -> None:
    """As a run extracts (with the fit log): every case right, and never a forbidden statistic."""
    results = [(case, *judge_case(case)) for case in _cases()]
    misses = [
        f"{case['case']}: expected {case['expected']!r}, got {rec.value!r} ({rec.rationale})"
        for case, correct, _, rec in results
        if not correct
    ]
    assert not misses, "\n".join(misses)


#: scripts written in print styles the text rules do not read (a sentence without an effect
#: label, a dict, a list, ``str()``, Python rdrobust's table, linearmodels' ``compare``): only the
#: fit log finds their estimate
FIT_ONLY_STYLES = frozenset(
    {
        "did_dict_print.py",
        "did_prose.py",
        "es_list_print.R",
        "iv_linearmodels_compare.py",
        "rdd_rdrobust_py.py",
        "rdd_str_named.R",
    }
)


def test_golden_text_rules_alone_are_right_or_silent() -> None:
    """Without the fit log: every case of the text rules' styles right; the others right or
    nothing, never a wrong number."""
    wrong = []
    for case in _cases():
        correct, _, rec = judge_case(case, with_fits=False)
        if case["script"] in FIT_ONLY_STYLES:
            if rec.value is not None and not correct:
                wrong.append(f"{case['case']}: {rec.value!r} ({rec.rationale})")
        elif not correct:
            wrong.append(f"{case['case']}: expected {case['expected']!r}, got {rec.value!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "rule",
    ["coef_table", "labelled_line", "estimate_marker", "coef_vector", "spec_table", "bare_number"],
)
def test_every_rule_is_exercised_by_the_corpus(rule: str) -> None:
    rules = {judge_case(case, with_fits=False)[2].rule for case in _cases()}
    assert rule in rules


def test_the_fit_log_is_evidence_in_most_of_the_corpus() -> None:
    records = [judge_case(case)[2] for case in _cases()]
    from_fits = [r for r in records if r.rule == "fit_match" or "the coefficient on" in r.rationale]
    assert len(from_fits) >= len(records) // 2
    assert any(r.rule == "fit_match" for r in records)


def test_harness_flags_a_standard_error_as_forbidden() -> None:
    """The forbidden check is live: reading the SE column of a golden table is caught."""
    case = next(c for c in _cases() if c["script"] == "did_lm_summary.R")
    stdout = _stdout(case["case"])
    line_no = next(i for i, x in enumerate(stdout.splitlines(), 1) if x.startswith("treated:post"))
    se_token = stdout.splitlines()[line_no - 1].split()[2]
    fake = ExtractionRecord(
        method="deterministic", value=float(se_token), rule="coef_table", line=line_no
    )
    tol = printed_tolerance(stdout, fake)
    assert not _close(float(se_token), case["expected"], tol)
    assert any(_close(float(se_token), o, tol) for o in case["others"])

"""The ruler corpus: correct scripts in unusual output styles, each printing hard decoys.

``tests/golden/ruler/`` (see its README) holds scripts written without looking at the extractor:
a naive model after the main one, a first stage with an effect-like label, placebo cutoffs,
three bandwidths with one preferred, setup constants in labels, units outside the number,
day-0 abnormal returns beside a cumulative result, hand-computed arithmetic, robustness columns
printed last. Every case must be read right (the reported estimate or a printed equivalent) or
left undecided with the right number among its candidates: never confidently wrong. Scripts
that print an ``ESTIMATE:`` line are also read with that line removed (the paper protocol).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from causalverify.extraction import extract_estimate
from causalverify.records import ExtractionRecord
from causalverify.sandbox.base import FitEntry

CORPORA = [Path(__file__).resolve().parent / "golden" / name for name in ("ruler", "ruler2")]
TRUTH_MARKER = "# ---- golden truth (stderr) ----"
SCALE = {"as_printed": 1.0, "percent": 0.01, "basis_points": 1e-4}


def _cases() -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for root in CORPORA:
        if (root / "manifest.json").is_file():
            out += [(root, c) for c in json.loads((root / "manifest.json").read_text())["cases"]]
    return out


def _decimals(token: str) -> int:
    tok = token.replace("\u2212", "-").replace(",", "").strip().lstrip("+-")
    mantissa, _, exponent = tok.lower().partition("e")
    frac = mantissa.split(".")[1] if "." in mantissa else ""
    return len(frac) - (int(exponent) if exponent else 0)


def accepted(case: dict[str, Any]) -> list[tuple[float, float]]:
    """(value, tolerance) of every reading that is right: the reported estimate and its printed
    equivalents, in the extractor's units (a percent or basis points converted; a cumulative
    figure as printed or per day)."""
    out = []
    reported = {"printed": case["expected"], "value": case["expected_value"], "unit": case["unit"]}
    for item in [reported, *case["equivalents"]]:
        scale = SCALE[item["unit"]["scale"]]
        tol = 0.5 * 10.0 ** -_decimals(item["printed"]) * scale + 1e-12
        out.append((item["value"] * scale, tol))
        if item["unit"].get("window"):
            a, b = item["unit"]["window"]
            out.append((item["value"] * scale / (b - a + 1), tol))
    return out


def read(root: Path, case: dict[str, Any], *, strip_marker: bool) -> ExtractionRecord:
    code = (root / "scripts" / case["script"]).read_text().split(TRUTH_MARKER)[0]
    stdout = (root / "fixtures" / f"{case['case']}.stdout").read_text()
    if strip_marker:
        kept = [x for x in stdout.splitlines() if not x.lstrip().startswith("ESTIMATE")]
        stdout = "\n".join(kept) + "\n"
    raw = json.loads((root / "fixtures" / f"{case['case']}.fits.json").read_text())
    fits = [FitEntry.model_validate(entry) for entry in raw]
    return extract_estimate(code=code, stdout=stdout, family=case["family"], fits=fits)


def verdict(rec: ExtractionRecord, case: dict[str, Any]) -> str:
    def right(value: float) -> bool:
        return any(abs(value - a) <= tol for a, tol in accepted(case))

    if rec.value is not None:
        return "right" if right(rec.value) else "wrong"
    if rec.undecided:
        return "undecided" if any(right(c.value) for c in rec.candidates) else "undecided-unlisted"
    return "none"


CASES = [
    pytest.param(root, case, strip, id=f"{root.name}/{case['case']}{'-no-marker' if strip else ''}")
    for root, case in _cases()
    for strip in (False, True)
    if not strip or case["estimate_line"]
]


def test_the_corpus_is_there_and_varied() -> None:
    cases = [c for _, c in _cases()]
    assert len({c["script"] for c in cases}) >= 20
    assert {c["family"] for c in cases} == {"did", "event_study", "iv", "rdd"}
    assert {c["language"] for c in cases} == {"r", "python"}
    assert all(c["decoys"] for c in cases)


@pytest.mark.parametrize(("root", "case", "strip_marker"), CASES)
def test_read_right_or_undecided_never_wrong(
    root: Path, case: dict[str, Any], strip_marker: bool
) -> None:
    rec = read(root, case, strip_marker=strip_marker)
    assert verdict(rec, case) in {"right", "undecided"}, rec.rationale


def test_undecided_is_rare_on_the_corpus() -> None:
    verdicts = [verdict(read(r, c, strip_marker=s), c) for r, c, s in (p.values for p in CASES)]
    assert verdicts.count("undecided") <= 0.1 * len(verdicts)

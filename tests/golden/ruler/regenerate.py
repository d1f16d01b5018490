"""Regenerate the ruler corpus: correct scripts in new output styles, each with hard decoys.

Usage (from the repository root)::

    python tests/golden/ruler/regenerate.py            # every script
    python tests/golden/ruler/regenerate.py a.R b.py   # only these (merged into the manifest)

Builds the default suite with the main golden corpus's seed, picks two scenarios per design
family (the first ``medium`` one and the last ``hard`` one: different draws from the main
corpus's), runs each script of ``scripts/`` whose name starts with the family prefix on both in
the real sandbox, and writes

- ``fixtures/<script>__<scenario>.stdout``: what the script printed, run with the fit log off
  (dates and clock times masked as the main corpus's normaliser does);
- ``fixtures/<script>__<scenario>.fits.json``: the fit log of a second run with the fit log on,
  whose stdout must equal the first (the command fails otherwise);
- ``manifest.json``: per case the reported value as printed, the stdout line that carries it, its
  unit, the decoys with their printed values and lines (see ``README.md``).

Each script states what it reported in a JSON record written to stderr by the code after the
``# ---- golden truth (stderr) ----`` marker. This command checks that record against the output
(every anchor names one stdout line and the printed text is a number on it) and against the
canonical estimator of ``causalverify.estimators`` run on the same CSV: the reported value,
converted to the outcome's units (and per day for a cumulative event-study figure), must lie
within 50% relative error of it. Any failure stops the command.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from causalverify.estimators import canonical
from causalverify.scenarios.model import Scenario

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location("golden_regenerate", HERE.parent / "regenerate.py")
assert _SPEC is not None and _SPEC.loader is not None
#: the main corpus's machinery: running a script twice, fixtures, the manifest, the main loop
golden = sys.modules.setdefault("golden_regenerate", importlib.util.module_from_spec(_SPEC))
_SPEC.loader.exec_module(golden)
PREFIX = golden.PREFIX
SEED = golden.SEED  # the main golden corpus's suite seed
TOLERANCE = 0.5
SCALE = {"as_printed": 1.0, "percent": 100.0, "basis_points": 10_000.0}
MINUS = "\u2212"


def pick_scenarios(root: Path) -> dict[str, list[Scenario]]:
    """The first medium and the last hard scenario of each family."""
    medium: dict[str, Scenario] = {}
    hard: dict[str, Scenario] = {}
    for path in sorted((root / "scenarios").glob("*.json")):
        sc = Scenario.model_validate_json(path.read_text())
        if sc.difficulty == "medium":
            medium.setdefault(sc.family, sc)
        elif sc.difficulty == "hard":
            hard[sc.family] = sc
    return {f: [medium[f], hard[f]] for f in PREFIX.values()}


def untimed(stdout: str) -> str:
    """Output without dates and clock times (as the main corpus's normaliser masks them)."""
    stdout = re.sub(r"\b\d{4}-\d\d-\d\d\b", "YYYY-MM-DD", stdout)
    return re.sub(r"\b\d\d:\d\d(?::\d\d)?\b", "HH:MM", stdout)


def number(printed: str) -> float:
    """The value of a number as printed (Unicode minus, thousands separators)."""
    return float(printed.replace(MINUS, "-").replace(",", ""))


def find_line(lines: list[str], anchor: str | list[str]) -> tuple[int, str]:
    """The line an anchor names: a substring that occurs on exactly one line, or a list of
    substrings read in turn (each the first line after the previous one that contains it)."""
    if isinstance(anchor, str):
        hits = [i for i, line in enumerate(lines) if anchor in line]
        if len(hits) != 1:
            raise RuntimeError(f"anchor {anchor!r} is on {len(hits)} lines")
        return hits[0], lines[hits[0]]
    at = -1
    for part in anchor:
        at = next((i for i in range(at + 1, len(lines)) if part in lines[i]), -1)
        if at < 0:
            raise RuntimeError(f"anchor {anchor!r}: no line with {part!r}")
    return at, lines[at]


def printed_on(line: str, printed: str) -> bool:
    """Whether ``printed`` stands on the line as a whole number (not inside a longer one)."""
    return re.search(rf"(?<![\d.]){re.escape(printed)}(?![\d])", line) is not None


def per_unit(value: float, unit: dict[str, Any]) -> float:
    """A printed value in the outcome's units (per day for a cumulative window)."""
    value /= SCALE[unit["scale"]]
    window = unit.get("window")
    if window:
        value /= window[1] - window[0] + 1
    return value


def rel_error(value: float, canon: float) -> float:
    return abs(value - canon) / abs(canon)


def located(item: dict[str, Any], lines: list[str], canon: float, where: str) -> dict[str, Any]:
    """A decoy or equivalent of the truth record with its stdout line and value.

    A decoy's ``relative_error_if_read`` is the error a reader who took it for the estimate
    would score, in the outcome's units (its own printed unit, when it has one, applied).
    """
    index, line = find_line(lines, item["anchor"])
    if not printed_on(line, item["printed"]):
        raise RuntimeError(f"{where}: {item['printed']!r} is not printed on line {line!r}")
    out = dict(item)
    out["line"] = line
    out["line_number"] = index + 1
    out["value"] = number(item["printed"])
    out.setdefault("unit", {"scale": "as_printed", "window": None})
    out["value_in_outcome_units"] = per_unit(out["value"], out["unit"])
    out["relative_error_if_read"] = rel_error(out["value_in_outcome_units"], canon)
    return out


def run_case(
    corpus: Any, sandbox: Any, plain: Any, script: Path, sc: Scenario, root: Path
) -> dict[str, Any]:
    language, result, hooked = golden.run_twice(sandbox, plain, script, sc, root)
    stdout = untimed(result.stdout)
    if untimed(hooked.stdout) != stdout:
        raise RuntimeError(f"{script.name} on {sc.id}: the fit log changed what was printed")
    head = golden.case_head(script, language, sc)
    case = where = head["case"]
    truth = golden.truth_of(result.stderr)
    data = pd.read_csv(root / sc.data_file)
    canon = float(canonical(data, sc.family).estimate)
    if abs(canon - sc.canonical.estimate) > 1e-9 * max(1.0, abs(canon)):
        raise RuntimeError(f"{where}: canonical {canon} differs from the suite's")
    lines = stdout.splitlines()
    index, line = find_line(lines, truth["anchor"])
    if not printed_on(line, truth["value"]):
        raise RuntimeError(f"{where}: {truth['value']!r} is not printed on line {line!r}")
    value = number(truth["value"])
    reported = per_unit(value, truth["unit"])
    error = rel_error(reported, canon)
    if error > TOLERANCE:
        raise RuntimeError(f"{where}: reported {reported} is {error:.0%} from canonical {canon}")
    equivalents = [located(e, lines, canon, where) for e in truth["equivalents"]]
    for eq in equivalents:
        if eq["relative_error_if_read"] > TOLERANCE:
            raise RuntimeError(f"{where}: equivalent {eq['printed']} is far from the canonical")
    golden.write_fixtures(corpus, case, stdout, hooked)
    return {
        **head,
        "estimate_line": any(x.startswith("ESTIMATE:") for x in lines),
        "style": truth["style"],
        "expected": truth["value"],
        "expected_value": value,
        "line": line,
        "line_number": index + 1,
        "unit": truth["unit"],
        "expected_in_outcome_units": reported,
        "canonical": canon,
        "relative_error": error,
        "decoys": [located(d, lines, canon, where) for d in truth["decoys"]],
        "equivalents": equivalents,
    }


def _manifest(cases: list[dict[str, Any]]) -> str:
    data = {"seed": SEED, "tolerance": TOLERANCE, "cases": cases}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


CORPUS = golden.Corpus(
    root=HERE,
    name="ruler",
    pick=pick_scenarios,
    run_case=run_case,
    describe=lambda c: f"{c['case']}: {c['expected']} ({c['unit']['scale']})",
    manifest=_manifest,
)


def main(argv: list[str], corpus: Any = CORPUS) -> int:
    return int(golden.regenerate(corpus, argv))


def corpus_at(root: Path, pick: Any) -> Any:
    """This corpus's machinery over the scripts of another folder, on other draws."""
    return dataclasses.replace(CORPUS, root=root, pick=pick)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

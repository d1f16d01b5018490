"""Regenerate the second ruler corpus: correct scripts in further output styles, with decoys.

Usage (from the repository root)::

    python tests/golden/ruler2/regenerate.py            # every script
    python tests/golden/ruler2/regenerate.py a.R b.py   # only these (merged into the manifest)

The same machinery as ``tests/golden/ruler/regenerate.py`` over other scripts, written without
sight of the extractor or of the first ruler's scripts, on other draws. Builds the default suite
with the main golden corpus's seed, picks two scenarios per design family (the first ``easy``
one, also a draw of the main corpus, and the second ``hard`` one, a draw of no other corpus;
neither is the first ruler's), runs each script of ``scripts/`` whose name starts with the family
prefix on both in the real sandbox, and writes

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

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from causalverify.estimators import canonical
from causalverify.sandbox import Limits, get_sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.scenarios.build import build_suite
from causalverify.scenarios.model import Scenario

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"
FIXTURES = HERE / "fixtures"
MANIFEST = HERE / "manifest.json"
PREFIX = {"did": "did", "es": "event_study", "iv": "iv", "rdd": "rdd"}
SEED = 20260101  # the main golden corpus's suite seed
TOLERANCE = 0.5
SCALE = {"as_printed": 1.0, "percent": 100.0, "basis_points": 10_000.0}
MINUS = "\u2212"


def pick_scenarios(root: Path) -> dict[str, list[Scenario]]:
    """The first easy and the second hard scenario of each family."""
    easy: dict[str, Scenario] = {}
    hard: dict[str, list[Scenario]] = {}
    for path in sorted((root / "scenarios").glob("*.json")):
        sc = Scenario.model_validate_json(path.read_text())
        if sc.difficulty == "easy":
            easy.setdefault(sc.family, sc)
        elif sc.difficulty == "hard":
            hard.setdefault(sc.family, []).append(sc)
    return {f: [easy[f], hard[f][1]] for f in PREFIX.values()}


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


def truth_of(stderr: str) -> dict[str, Any]:
    lines = [x for x in stderr.splitlines() if x.strip().startswith("{")]
    if not lines:
        raise RuntimeError(f"no truth record on stderr:\n{stderr[-2000:]}")
    return dict(json.loads(lines[-1]))


def run_case(sandbox: Any, plain: Any, script: Path, sc: Scenario, root: Path) -> dict[str, Any]:
    language = "r" if script.suffix == ".R" else "python"
    code = script.read_text()
    runs = [
        box.run(
            code,
            language,
            files={"data/scenario.csv": root / sc.data_file},
            limits=Limits(wall_seconds=120, cpu_seconds=120),
        )
        for box in (plain, sandbox)
    ]
    result, hooked = runs
    for res in runs:
        if not res.ok:
            raise RuntimeError(f"{script.name} on {sc.id}: {res.status}\n{res.stderr[-3000:]}")
    stdout = untimed(result.stdout)
    if untimed(hooked.stdout) != stdout:
        raise RuntimeError(f"{script.name} on {sc.id}: the fit log changed what was printed")
    case = f"{script.stem}__{sc.id}"
    where = case
    truth = truth_of(result.stderr)
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
    (FIXTURES / f"{case}.stdout").write_text(stdout)
    fits = [fit.model_dump(mode="json") for fit in hooked.fits]
    (FIXTURES / f"{case}.fits.json").write_text(json.dumps(fits, indent=1, sort_keys=True) + "\n")
    return {
        "case": case,
        "script": script.name,
        "language": language,
        "family": sc.family,
        "scenario": sc.id,
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


def _selected(names: list[str]) -> list[Path]:
    if not names:
        return sorted(SCRIPTS.iterdir())
    missing = [n for n in names if not (SCRIPTS / n).is_file()]
    if missing:
        raise SystemExit(f"no such ruler2 script(s): {missing}")
    return sorted(SCRIPTS / n for n in set(names))


def _kept_cases(scripts: list[Path], subset: bool) -> list[dict[str, Any]]:
    """Cases of the manifest that this run does not regenerate; removes the stale fixtures."""
    stems = {s.stem for s in scripts}
    for old in [*FIXTURES.glob("*.stdout"), *FIXTURES.glob("*.fits.json")]:
        if not subset or old.name.split("__")[0] in stems:
            old.unlink()
    if not subset or not MANIFEST.is_file():
        return []
    names = {s.name for s in scripts}
    previous = json.loads(MANIFEST.read_text())["cases"]
    return [c for c in previous if c["script"] not in names and (SCRIPTS / c["script"]).is_file()]


def main(argv: list[str]) -> int:
    stems = [p.stem for p in SCRIPTS.iterdir()]
    if len(stems) != len(set(stems)):
        raise SystemExit("two ruler2 scripts share a name stem (their fixtures would collide)")
    sandbox = get_sandbox()
    plain = BwrapSandbox(fit_log=False)
    FIXTURES.mkdir(exist_ok=True)
    scripts = _selected(argv)
    cases = _kept_cases(scripts, subset=bool(argv))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "suite"
        build_suite(root, seed=SEED)
        picked = pick_scenarios(root)
        for script in scripts:
            family = PREFIX[script.name.split("_")[0]]
            for sc in picked[family]:
                cases.append(run_case(sandbox, plain, script, sc, root))
                c = cases[-1]
                print(f"{c['case']}: {c['expected']} ({c['unit']['scale']})", flush=True)
    cases.sort(key=lambda c: (c["script"], c["scenario"]))
    text = json.dumps(
        {"seed": SEED, "tolerance": TOLERANCE, "cases": cases}, indent=2, ensure_ascii=False
    )
    MANIFEST.write_text(text + "\n", encoding="utf-8")
    print(f"{len(cases)} cases written to {MANIFEST.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

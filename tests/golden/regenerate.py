"""Regenerate the golden extraction corpus: run every script in the sandbox on built scenarios.

Usage (from the repository root)::

    python tests/golden/regenerate.py              # every script
    python tests/golden/regenerate.py a.R b.py     # only these scripts (merged into the manifest)

Builds the default suite (fixed seed) into a temporary folder, picks two scenarios per design
family (the first ``easy`` and the first ``hard`` one), runs each script of ``scripts/`` whose
name starts with the family prefix on both, and writes

- ``fixtures/<script>__<scenario>.stdout``: what the script printed (the extractor's input), run
  with the fit log switched off;
- ``fixtures/<script>__<scenario>.fits.json``: the script's fit log, from a second run with the
  fit log on, whose stdout must be byte-identical to the first (the command fails otherwise);
- ``manifest.json``: per case the expected estimate and the other statistics of the same term
  (standard error, statistic, p-value, interval bounds) as the script itself computed them and
  wrote them to stderr after the ``# ---- golden truth (stderr) ----`` marker, plus the
  scenario's canonical estimate and whether the script's estimate equals it.

With script names, only those scripts are run: their old fixtures are replaced and their cases
are merged into the existing manifest (the cases of every other script are kept as they are).
Cases are ordered by script name, then scenario, in both modes.

Every script must run with exit status 0; the command fails otherwise.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from causalverify.sandbox import Limits, get_sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.scenarios.build import build_suite
from causalverify.scenarios.model import Scenario

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"
FIXTURES = HERE / "fixtures"
MANIFEST = HERE / "manifest.json"
TRUTH_MARKER = "# ---- golden truth (stderr) ----"
PREFIX = {"did": "did", "es": "event_study", "iv": "iv", "rdd": "rdd"}
SEED = 20260101


def pick_scenarios(root: Path) -> dict[str, list[Scenario]]:
    """The first easy and the first hard scenario of each family."""
    picked: dict[str, list[Scenario]] = {}
    for path in sorted((root / "scenarios").glob("*.json")):
        sc = Scenario.model_validate_json(path.read_text())
        have = picked.setdefault(sc.family, [])
        if sc.difficulty in {"easy", "hard"} and all(h.difficulty != sc.difficulty for h in have):
            have.append(sc)
    return picked


def truth_of(stderr: str) -> dict[str, Any]:
    lines = [x for x in stderr.splitlines() if x.strip().startswith("{")]
    if not lines:
        raise RuntimeError(f"no truth record on stderr:\n{stderr[-2000:]}")
    return dict(json.loads(lines[-1]))


# -- dates and clock times ---------------------------------------------------------------------
#
# A script's output may hold the day and time it ran: statsmodels and linearmodels summaries
# (``Date: Wed, 02 Dec 2026``, ``Time: 02:07:56``), ``date()``, ``Sys.time()``, ``datetime.now()``,
# any ``format()``/``strftime()`` the script asks for. The sandbox sets ``LANG=C.UTF-8`` and
# ``TZ=UTC``, so names are English and the zone is fixed. ``_untimed`` replaces every such date and
# time by a placeholder; ``tests/test_golden_clock.py`` runs scripts under a shifted clock to check.

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_ABBREVIATIONS = {n[:3] for n in _WEEKDAYS + _MONTHS} | {"Tues", "Thur", "Thurs", "Sept"}
#: names that are a date on their own (``weekdays(Sys.Date())``, ``months(Sys.Date())``)
_FULL_NAMES = {*_WEEKDAYS, *_MONTHS} | {n.upper() for n in _WEEKDAYS + _MONTHS}
_NAMES = sorted(_FULL_NAMES | _ABBREVIATIONS | {n.upper() for n in _ABBREVIATIONS}, key=len)[::-1]
_NAME = r"\b(?:" + "|".join(_NAMES) + r")\b"
_PLACEHOLDER = "<(?:DATE|TIME|EPOCH)>"
_DAY_OR_YEAR = r"(?<![\w.])\d{1,4}(?:st|nd|rd|th)?(?!\d|\.\d)"
_ITEM = f"(?:{_NAME}\\.?|{_PLACEHOLDER}|UTC|GMT|{_DAY_OR_YEAR})"
_SEPARATOR = r"(?:,[ ]?|\.?[ ]{1,2}|[ ]?[-/][ ]?)"

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), placeholder)
    for pattern, placeholder in (
        # Python reprs: datetime.datetime(2026, 12, 2, 9, 1, 2, 5, tzinfo=...), time.struct_time(...)
        (r"\bdatetime\.(?:datetime|date|time)\((?:[^()]|\([^()]*\))*\)", "<DATE>"),
        (r"\btime\.struct_time\([^()]*\)", "<DATE>"),
        # seconds (or milliseconds) since 1970 between 2017 and 2033: time.time(), %s
        (r"(?<![\w.])(?:1[5-9]|20)\d{8}(?:\d{3})?(?:\.\d+)?(?![\w.])", "<EPOCH>"),
        # ISO week and basic ISO date-times: 2026-W49-3, 20261202T090102
        (r"(?<![\w.])[12]\d{3}-W[0-5]\d(?:-[1-7])?(?!\w)", "<DATE>"),
        (r"(?<![\w.])[12]\d{3}[01]\d[0-3]\dT\d{4}(?:\d\d)?(?!\d)", "<DATE>"),
        # year first: 2026-12-02, 2026/12/2, 2026.12.02 (then perhaps T09:01:02)
        (r"(?<![\w.])[12]\d{3}([-/.])(?:0?[1-9]|1[0-2])\1(?:0?[1-9]|[12]\d|3[01])(?!\d)", "<DATE>"),
        # day or month first: 02/12/2026, 12-02-2026, 2.12.2026, and %x / %D: 12/02/26
        (r"(?<![\w.])[0-3]?\d([-/.])[0-3]?\d\1[12]\d{3}(?![\w.])", "<DATE>"),
        (r"(?<![\w./])[0-3]?\d/[0-3]?\d/\d\d(?![\w./])", "<DATE>"),
        # clock times: 09:01, 9:01:02, 09:01:02.123456, 09:01 PM, 09:01:02+0000, T09:01:02Z
        (
            r"(?:(?<=[\d>]T)|(?<![\w:.]))(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?"
            r"(?:[ ]?[AaPp]\.?[Mm]\b\.?)?(?:[ ]?(?:[+-](?:0\d|1[0-4]):?[0-5]\d|Z)(?!\w))?(?![\d:])",
            "<TIME>",
        ),
    )
)
#: a run of names, numbers and the placeholders above: Wed, Dec 02 2026; Thu Dec  3 <TIME> 2026
_PHRASE = re.compile(f"{_ITEM}(?:{_SEPARATOR}{_ITEM})*")
#: a date next to a time (2026-12-02 09:01:02, 2026-12-02T09:01:02) is one placeholder
_JOINED = re.compile(f"{_PLACEHOLDER}(?:[ \\t]*T?{_PLACEHOLDER})+")
_PADDED = re.compile(f"[ \\t]*({_PLACEHOLDER})[ \\t]*")


def _phrase(match: re.Match[str]) -> str:
    """A run that names a weekday or month and holds a number or another part of a date (or is
    a full name on its own) is a date; any other run is left as it is."""
    text = match.group()
    names = re.findall(_NAME, text)
    if not names:
        return text
    parts = re.findall(_ITEM, text)
    if len(parts) > 1 or names[0] in _FULL_NAMES:
        return "<DATE>"
    return text


def _untimed(stdout: str) -> str:
    """Output with every date and clock time a script can print replaced by a placeholder (and
    the spaces around a placeholder, which may pad it, made one)."""
    for pattern, placeholder in _MASKS:
        stdout = pattern.sub(placeholder, stdout)
    stdout = _JOINED.sub("<DATE>", _PHRASE.sub(_phrase, stdout))
    return _PADDED.sub(r" \1 ", stdout)


def run_case(sandbox: Any, plain: Any, script: Path, sc: Scenario, root: Path) -> dict[str, Any]:
    language = "r" if script.suffix == ".R" else "python"
    runs = [
        box.run(
            script.read_text(),
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
    if _untimed(hooked.stdout) != _untimed(result.stdout):
        raise RuntimeError(f"{script.name} on {sc.id}: the fit log changed what was printed")
    case = f"{script.stem}__{sc.id}"
    (FIXTURES / f"{case}.stdout").write_text(result.stdout)
    fits = [fit.model_dump(mode="json") for fit in hooked.fits]
    (FIXTURES / f"{case}.fits.json").write_text(json.dumps(fits, indent=1, sort_keys=True) + "\n")
    truth = truth_of(result.stderr)
    raw = truth["estimate"]  # R's toJSON writes a scalar as a one-element array
    estimate = float(raw[0] if isinstance(raw, list) else raw)
    canonical = sc.canonical.estimate
    return {
        "case": case,
        "script": script.name,
        "language": language,
        "family": sc.family,
        "scenario": sc.id,
        "expected": estimate,
        "others": [float(v) for v in truth["others"] if v is not None],
        "canonical": canonical,
        "canonical_equivalent": abs(estimate - canonical) <= 1e-6 * max(1.0, abs(canonical)),
    }


def _selected(names: list[str]) -> list[Path]:
    """The scripts to run: all of ``scripts/``, or the named ones (which must exist)."""
    if not names:
        return sorted(SCRIPTS.iterdir())
    missing = [n for n in names if not (SCRIPTS / n).is_file()]
    if missing:
        raise SystemExit(f"no such golden script(s): {missing}")
    return sorted(SCRIPTS / n for n in set(names))


def _kept_cases(scripts: list[Path], subset: bool) -> list[dict[str, Any]]:
    """Cases of the manifest that this run does not regenerate; removes the stale fixtures."""
    names = {s.name for s in scripts}
    if not subset:
        for old in [*FIXTURES.glob("*.stdout"), *FIXTURES.glob("*.fits.json")]:
            old.unlink()
        return []
    for old in [*FIXTURES.glob("*.stdout"), *FIXTURES.glob("*.fits.json")]:
        if any(old.name.startswith(f"{Path(n).stem}__") for n in names):
            old.unlink()
    previous = json.loads(MANIFEST.read_text())["cases"] if MANIFEST.is_file() else []
    # cases of scripts that were rerun or no longer exist are dropped
    return [c for c in previous if c["script"] not in names and (SCRIPTS / c["script"]).is_file()]


def main(argv: list[str]) -> int:
    stems = [p.stem for p in SCRIPTS.iterdir()]
    if len(stems) != len(set(stems)):
        raise SystemExit("two golden scripts share a name stem (their fixtures would collide)")
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
                print(f"{cases[-1]['case']}: {cases[-1]['expected']!r}", flush=True)
    cases.sort(key=lambda c: (c["script"], c["scenario"]))
    text = json.dumps({"seed": SEED, "cases": cases}, indent=2, sort_keys=True) + "\n"
    MANIFEST.write_text(text)
    print(f"{len(cases)} cases written to {MANIFEST.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

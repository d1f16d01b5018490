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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causalverify.sandbox import ExecResult, Limits, get_sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.scenarios.build import build_suite
from causalverify.scenarios.model import Scenario

HERE = Path(__file__).resolve().parent
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


@dataclass(frozen=True)
class Corpus:
    """A corpus of golden scripts and how it is regenerated (the ruler corpora reuse all of it).

    ``run_case(corpus, sandbox, plain, script, scenario, suite_root)`` runs one script on one
    scenario, writes its fixtures and returns its manifest case; ``describe(case)`` is the line
    printed for it; ``manifest(cases)`` the text of ``manifest.json``.
    """

    root: Path
    name: str
    pick: Callable[[Path], dict[str, list[Scenario]]]
    run_case: Callable[..., dict[str, Any]]
    describe: Callable[[dict[str, Any]], str]
    manifest: Callable[[list[dict[str, Any]]], str]

    @property
    def scripts(self) -> Path:
        return self.root / "scripts"

    @property
    def fixtures(self) -> Path:
        return self.root / "fixtures"

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"


def run_twice(
    sandbox: Any, plain: Any, script: Path, sc: Scenario, root: Path
) -> tuple[str, ExecResult, ExecResult]:
    """Run ``script`` on the scenario's CSV with the fit log off and on: ``(language, plain
    result, hooked result)``; either run failing stops the command."""
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
    for res in runs:
        if not res.ok:
            raise RuntimeError(f"{script.name} on {sc.id}: {res.status}\n{res.stderr[-3000:]}")
    return language, runs[0], runs[1]


def write_fixtures(corpus: Corpus, case: str, stdout: str, hooked: ExecResult) -> None:
    """A case's fixtures: the stdout as recorded and the hooked run's fit log."""
    (corpus.fixtures / f"{case}.stdout").write_text(stdout)
    fits = [fit.model_dump(mode="json") for fit in hooked.fits]
    text = json.dumps(fits, indent=1, sort_keys=True) + "\n"
    (corpus.fixtures / f"{case}.fits.json").write_text(text)


def case_head(script: Path, language: str, sc: Scenario) -> dict[str, Any]:
    """The fields every manifest case starts with, in manifest order."""
    return {
        "case": f"{script.stem}__{sc.id}",
        "script": script.name,
        "language": language,
        "family": sc.family,
        "scenario": sc.id,
    }


def run_case(
    corpus: Corpus, sandbox: Any, plain: Any, script: Path, sc: Scenario, root: Path
) -> dict[str, Any]:
    language, result, hooked = run_twice(sandbox, plain, script, sc, root)
    if _untimed(hooked.stdout) != _untimed(result.stdout):
        raise RuntimeError(f"{script.name} on {sc.id}: the fit log changed what was printed")
    head = case_head(script, language, sc)
    write_fixtures(corpus, head["case"], result.stdout, hooked)
    truth = truth_of(result.stderr)
    raw = truth["estimate"]  # R's toJSON writes a scalar as a one-element array
    estimate = float(raw[0] if isinstance(raw, list) else raw)
    canonical = sc.canonical.estimate
    return {
        **head,
        "expected": estimate,
        "others": [float(v) for v in truth["others"] if v is not None],
        "canonical": canonical,
        "canonical_equivalent": abs(estimate - canonical) <= 1e-6 * max(1.0, abs(canonical)),
    }


def _selected(corpus: Corpus, names: list[str]) -> list[Path]:
    """The scripts to run: all of ``scripts/``, or the named ones (which must exist)."""
    if not names:
        return sorted(corpus.scripts.iterdir())
    missing = [n for n in names if not (corpus.scripts / n).is_file()]
    if missing:
        raise SystemExit(f"no such {corpus.name} script(s): {missing}")
    return sorted(corpus.scripts / n for n in set(names))


def _kept_cases(corpus: Corpus, scripts: list[Path], subset: bool) -> list[dict[str, Any]]:
    """Cases of the manifest that this run does not regenerate; removes the stale fixtures."""
    stems = {s.stem for s in scripts}
    for old in [*corpus.fixtures.glob("*.stdout"), *corpus.fixtures.glob("*.fits.json")]:
        if not subset or old.name.split("__")[0] in stems:
            old.unlink()
    if not subset or not corpus.manifest_path.is_file():
        return []
    names = {s.name for s in scripts}
    previous = json.loads(corpus.manifest_path.read_text())["cases"]
    # cases of scripts that were rerun or no longer exist are dropped
    return [
        c for c in previous if c["script"] not in names and (corpus.scripts / c["script"]).is_file()
    ]


def regenerate(corpus: Corpus, argv: list[str]) -> int:
    """Regenerate ``corpus``: every script, or the named ones merged into the manifest."""
    stems = [p.stem for p in corpus.scripts.iterdir()]
    if len(stems) != len(set(stems)):
        raise SystemExit(
            f"two {corpus.name} scripts share a name stem (their fixtures would collide)"
        )
    sandbox = get_sandbox()
    plain = BwrapSandbox(fit_log=False)
    corpus.fixtures.mkdir(exist_ok=True)
    scripts = _selected(corpus, argv)
    cases = _kept_cases(corpus, scripts, subset=bool(argv))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "suite"
        build_suite(root, seed=SEED)
        picked = corpus.pick(root)
        for script in scripts:
            family = PREFIX[script.name.split("_")[0]]
            for sc in picked[family]:
                cases.append(corpus.run_case(corpus, sandbox, plain, script, sc, root))
                print(corpus.describe(cases[-1]), flush=True)
    cases.sort(key=lambda c: (c["script"], c["scenario"]))
    corpus.manifest_path.write_text(corpus.manifest(cases), encoding="utf-8")
    print(f"{len(cases)} cases written to {corpus.manifest_path.name}")
    return 0


CORPUS = Corpus(
    root=HERE,
    name="golden",
    pick=pick_scenarios,
    run_case=run_case,
    describe=lambda c: f"{c['case']}: {c['expected']!r}",
    manifest=lambda cases: (
        json.dumps({"seed": SEED, "cases": cases}, indent=2, sort_keys=True) + "\n"
    ),
)


def main(argv: list[str]) -> int:
    return regenerate(CORPUS, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Building a scenario suite on disk, deterministically and in bounded memory.

Layout written under ``out``::

    suite.json            suite-level seed, generator version, one summary entry per scenario
    scenarios/<id>.json   the full :class:`~causalverify.scenarios.model.Scenario` record
    data/<id>.csv         the realised data (published layout and number formatting)
    build_log.json        every rejected attempt with its reasons; for the modern designs, the
                          accepted draw's distance to the canonical of every declared analysis
    SHA256SUMS            ``sha256sum -c`` manifest of every other file, sorted by path

Scenarios are generated, checked and written one at a time; only a small summary per scenario is
kept until ``suite.json`` is written, so a 10,000-scenario suite streams to disk. The suite is
first written to a hidden sibling folder and moved into place only when complete, so a failed
build never leaves a half-written suite behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pandas as pd

from causalverify.errors import SuiteError
from causalverify.estimators import CanonicalResult, canonical
from causalverify.families import MODERN_FAMILIES, Difficulty, Family
from causalverify.scenarios.acceptance import ANALYSES, MIN_Z, TOLERANCE, Verdict, judge_draw
from causalverify.scenarios.checks import check_scenario, usable_canonical
from causalverify.scenarios.dgp import generate, read_csv_bytes, scenario_rng, to_csv_bytes
from causalverify.scenarios.grid import (
    DEFAULT_SEED,
    GridEntry,
    grid_for,
    scenario_id,
    suite_entries,
)
from causalverify.scenarios.model import Canonical, Scenario
from causalverify.scenarios.text import render_text

#: Version of the generators + templates; bump when the same seed would give different files.
GENERATOR_VERSION: Final[str] = "2"
#: Redraws allowed per scenario before the build gives up.
MAX_ATTEMPTS: Final[int] = 50

Progress = Callable[[int, int], None]


@dataclass(frozen=True, kw_only=True)
class Draw:
    """An accepted draw: the CSV bytes, the data read back from them, and their canonical; the
    attempts rejected before it (with their reasons) and, for a modern design, its verdict."""

    attempt: int
    csv: bytes
    data: pd.DataFrame
    result: CanonicalResult
    rejected: tuple[tuple[int, tuple[str, ...]], ...] = ()
    verdict: Verdict | None = None


@dataclass(frozen=True, kw_only=True)
class BuildReport:
    """What :func:`build_suite` did."""

    root: Path
    suite: str
    seed: int
    n_scenarios: int
    generator_version: str
    counts: dict[tuple[Family, Difficulty], int]
    redraws: int
    redrawn: tuple[str, ...]
    violations: int
    seconds: float
    files: int = field(default=0)


def draw_data(
    entry: GridEntry, *, suite_seed: int, index: int, max_attempts: int = MAX_ATTEMPTS
) -> Draw:
    """Draw a scenario's data until its canonical estimate is usable and, for a modern design,
    the draw separates the design's declared analyses
    (:func:`~causalverify.scenarios.acceptance.judge_draw`).

    Each attempt uses ``SeedSequence([suite_seed, index, attempt])``. The canonical is computed on
    the CSV as written (the bytes read back), so a model reading the file sees exactly those data.

    Raises
    ------
    SuiteError
        If no attempt out of ``max_attempts`` is accepted.
    """
    rejected: list[tuple[int, tuple[str, ...]]] = []
    for attempt in range(max_attempts):
        frame = generate(
            entry.family, entry.params_dict(), entry.beta, scenario_rng(suite_seed, index, attempt)
        )
        raw = to_csv_bytes(frame)
        data = read_csv_bytes(raw)
        result = canonical(data, entry.family)
        reasons: list[str] = []
        if not usable_canonical(result.estimate, entry.beta):
            reasons.append(
                f"canonical {result.estimate:.6g} unusable for beta {entry.beta:g} "
                "(sign differs or too small)"
            )
        verdict = None
        if not reasons and entry.family in MODERN_FAMILIES:
            verdict = judge_draw(entry.family, data, result)
            reasons.extend(verdict.reasons)
        if reasons:
            rejected.append((attempt, tuple(reasons)))
            continue
        return Draw(
            attempt=attempt,
            csv=raw,
            data=data,
            result=result,
            rejected=tuple(rejected),
            verdict=verdict,
        )
    raise SuiteError(
        f"scenario {index} ({entry.family}, beta={entry.beta}) had no usable draw in "
        f"{max_attempts} attempts; the grid entry's noise is too large for its effect"
    )


def make_scenario(
    entry: GridEntry, draw: Draw, *, index: int, total: int, suite_seed: int, ordinal: int
) -> Scenario:
    """Assemble the :class:`Scenario` record of an accepted draw."""
    sid = scenario_id(index, total)
    text = render_text(entry.family, entry.params_dict(), ordinal=ordinal, suite_seed=suite_seed)
    res = draw.result
    return Scenario(
        id=sid,
        index=index,
        family=entry.family,
        difficulty=entry.difficulty,
        group=entry.group,
        suite_seed=suite_seed,
        attempt=draw.attempt,
        beta=entry.beta,
        params=entry.params_dict(),
        topic=text.topic,
        title=text.title,
        research_question=text.research_question,
        data_description=text.data_description,
        columns=text.columns,
        target=text.target,
        facts=text.facts,
        conversions=text.conversions,
        data_file=f"data/{sid}.csv",
        csv_sha256=hashlib.sha256(draw.csv).hexdigest(),
        canonical=Canonical(
            estimate=res.estimate, se=res.se, n=res.n, method=res.method, profile=res.profile
        ),
    )


def dumps_json(obj: Any) -> bytes:
    """Deterministic JSON: sorted keys, indent 2, trailing newline, UTF-8."""
    return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _summary(s: Scenario) -> dict[str, Any]:
    return {
        "id": s.id,
        "index": s.index,
        "family": s.family,
        "difficulty": s.difficulty,
        "group": s.group,
        "seed": list(s.seed_entropy),
        "attempt": s.attempt,
        "beta": s.beta,
        "canonical": {"estimate": s.canonical.estimate, "se": s.canonical.se},
        "data_file": s.data_file,
        "scenario_file": f"scenarios/{s.id}.json",
        "csv_sha256": s.csv_sha256,
    }


class _Writer:
    """Writes files under a staging root and remembers their hashes for SHA256SUMS."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hashes: list[tuple[str, str]] = []
        (root / "data").mkdir(parents=True)
        (root / "scenarios").mkdir()

    def write(self, rel: str, payload: bytes) -> str:
        (self.root / rel).write_bytes(payload)
        digest = hashlib.sha256(payload).hexdigest()
        self.hashes.append((rel, digest))
        return digest

    def write_sums(self) -> None:
        lines = [f"{digest}  {rel}\n" for rel, digest in sorted(self.hashes)]
        (self.root / "SHA256SUMS").write_text("".join(lines), encoding="utf-8")


def _prepare_out(out: Path) -> Path:
    """Check ``out`` can receive a suite and return a fresh staging folder next to it."""
    if out.exists() and not out.is_dir():
        raise SuiteError(f"{out} exists and is not a folder; choose another --out")
    if out.is_dir() and any(out.iterdir()) and not (out / "suite.json").is_file():
        raise SuiteError(
            f"{out} is not empty and does not hold a suite; choose an empty or new folder"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.building"
    if staging.exists():
        shutil.rmtree(staging)
    return staging


def _finish(staging: Path, out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)


def _suite_meta(
    suite: str, seed: int, total: int, redraws: int, versions: dict[str, str]
) -> dict[str, Any]:
    return {
        "generator_version": GENERATOR_VERSION,
        "suite": suite,
        "seed": seed,
        "n_scenarios": total,
        "redraws": redraws,
        "canonical_profile": "paper",
        "canonical_versions": versions,
    }


def build_suite(
    out: Path,
    *,
    suite: str = "default",
    seed: int = DEFAULT_SEED,
    n_scenarios: int | None = None,
    progress: Progress | None = None,
) -> BuildReport:
    """Generate, check and write a scenario suite.

    Parameters
    ----------
    out : Path
        Destination folder: new, empty, or holding a previous suite (which is replaced).
    suite : str
        Named grid: ``"default"`` (100 scenarios) or ``"smoke"`` (one per family).
    seed : int
        Suite seed; scenario ``i`` at attempt ``a`` draws from ``SeedSequence([seed, i, a])``.
    n_scenarios : int or None
        Number of scenarios; ``None`` means the grid's size. Larger suites cycle the grid.
    progress : callable or None
        Called as ``progress(done, total)`` after each scenario is written.

    Returns
    -------
    BuildReport
        Counts by family and difficulty, redraws, timing.

    Raises
    ------
    SuiteError
        If ``out`` cannot receive a suite, a draw is never usable, or a scenario violates a check
        (the message lists the violations; nothing is left at ``out``).
    """
    started = time.perf_counter()
    entries = suite_entries(suite, n_scenarios)
    total = len(grid_for(suite)) if n_scenarios is None else n_scenarios
    staging = _prepare_out(Path(out))
    try:
        writer = _Writer(staging)
        summaries, versions, log = _write_scenarios(writer, entries, seed, total, progress)
        writer.write("build_log.json", dumps_json(_build_log(log)))
        redrawn = tuple(str(e["id"]) for e in summaries if int(e["attempt"]) > 0)
        redraws = sum(int(e["attempt"]) for e in summaries)
        meta = _suite_meta(suite, seed, total, redraws, versions)
        writer.write("suite.json", dumps_json({**meta, "scenarios": summaries}))
        writer.write_sums()
        _finish(staging, Path(out))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    counts = Counter((e["family"], e["difficulty"]) for e in summaries)
    return BuildReport(
        root=Path(out),
        suite=suite,
        seed=seed,
        n_scenarios=total,
        generator_version=GENERATOR_VERSION,
        counts=dict(counts),
        redraws=redraws,
        redrawn=redrawn,
        violations=0,
        seconds=time.perf_counter() - started,
        files=len(writer.hashes),
    )


def _write_scenarios(
    writer: _Writer,
    entries: Iterator[tuple[int, GridEntry]],
    seed: int,
    total: int,
    progress: Progress | None,
) -> tuple[list[dict[str, Any]], dict[str, str], list[dict[str, Any]]]:
    summaries: list[dict[str, Any]] = []
    log: list[dict[str, Any]] = []
    versions: dict[str, str] = {}
    ordinals: Counter[str] = Counter()
    for index, entry in entries:
        draw = draw_data(entry, suite_seed=seed, index=index)
        scenario = make_scenario(
            entry, draw, index=index, total=total, suite_seed=seed, ordinal=ordinals[entry.family]
        )
        ordinals[entry.family] += 1
        violations = check_scenario(scenario, draw.data)
        if violations:
            raise SuiteError("suite check failed:\n  " + "\n  ".join(violations))
        writer.write(scenario.data_file, draw.csv)
        writer.write(f"scenarios/{scenario.id}.json", dumps_json(scenario.model_dump(mode="json")))
        summaries.append(_summary(scenario))
        log.append(_log_entry(scenario, draw))
        versions.update(draw.result.versions)
        if progress is not None:
            progress(index, total)
    return summaries, versions, log


def _log_entry(scenario: Scenario, draw: Draw) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": scenario.id,
        "family": scenario.family,
        "attempt": draw.attempt,
        "rejected": [{"attempt": a, "reasons": list(r)} for a, r in draw.rejected],
    }
    if draw.verdict is not None:
        entry["z"] = draw.verdict.z
        entry["distances"] = draw.verdict.distances
    return entry


def _build_log(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The build log: each scenario's rejected attempts and, for the modern designs, the declared
    analyses and every accepted draw's distances to the canonical."""
    families = sorted({str(e["family"]) for e in entries} & set(ANALYSES))
    analyses = {
        f: {
            "defensible": {a.name: a.label for a in ANALYSES[f].defensible},
            "mistakes": {a.name: a.label for a in ANALYSES[f].mistakes},
        }
        for f in families
    }
    acceptance = {"tolerance": TOLERANCE, "min_z": MIN_Z, "analyses": analyses}
    return {"acceptance": acceptance if families else None, "scenarios": entries}

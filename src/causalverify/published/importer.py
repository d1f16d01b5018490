"""``import-suite``: turn a downloaded copy of the published release into a suite in our format.

Each published scenario becomes a :class:`~causalverify.scenarios.Scenario` with the same id
(``s01`` ...), its title, research question and data description verbatim, the family,
difficulty and DGP effect of the release, column meanings taken from its text where it gives them,
and the ``paper``-profile canonical estimate computed on its CSV as published. The CSV keeps the
release's relative path (``experiments/exp_b/data/sNN_data.csv``): the published answers read it
from there, and the sandbox places it at the same path. The release records no seeds, so every
imported scenario has ``suite_seed`` 0 and ``attempt`` 0, and ``suite.json`` says so.

Layout written under ``out``: ``suite.json``, ``scenarios/<id>.json``, the CSVs at their published
paths, ``defects.csv`` (see :mod:`causalverify.published.defects`) and ``SHA256SUMS``.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from causalverify.designs import event_study, rdd
from causalverify.designs.event_study import CONVERSIONS as ES_CONVERSIONS
from causalverify.errors import SuiteError
from causalverify.estimators import CanonicalResult, canonical
from causalverify.families import DIFFICULTIES, Difficulty, Family, parse_family
from causalverify.published._release import PublishedScenario, check_format, read_release
from causalverify.published._text import FALLBACK_COLUMNS, column_description
from causalverify.published.defects import Defect, defects_csv, find_defects
from causalverify.scenarios.build import (
    _finish,
    _prepare_out,
    _summary,
    _Writer,
    dumps_json,
)
from causalverify.scenarios.dgp import read_csv_bytes
from causalverify.scenarios.model import Canonical, Scenario

#: the value of ``Scenario.group`` and ``Scenario.topic`` for imported scenarios
SOURCE: Final[str] = "causalverify-2026"
DEFECTS_FILE: Final[str] = "defects.csv"
IMPORTER_VERSION: Final[str] = "1"

_TARGETS: Final[dict[Family, str]] = {
    "did": "The average effect of the treatment on `y` for the treated units in the periods "
    "after it starts (periods {start} to {last}), in the units of `y`.",
    "event_study": "The average per-day abnormal return on event days 0 to +{last}: the part "
    "of the daily return (`ret`) not explained by the stock's normal relation to the market "
    "return (`mkt_ret`), as a decimal return. A cumulative figure over days 0 to +{last} is "
    "also acceptable if it is labelled as cumulative.",
    "iv": "The causal effect on `y` of a one-unit increase in `x`, in units of `y` per unit "
    "of `x`.",
    "rdd": "The effect of treatment on `y` at the cutoff (running_var = {cutoff}), in the "
    "units of `y`.",
}


@dataclass(frozen=True, kw_only=True)
class ImportReport:
    """What :func:`import_suite` did."""

    root: Path
    n_scenarios: int
    counts: dict[tuple[Family, Difficulty], int]
    defects: tuple[Defect, ...]
    seconds: float


def _data_facts(family: Family, d: pd.DataFrame) -> dict[str, object]:
    if family == "did":
        treated = d.loc[d["treat_x_post"] == 1, "period"]
        start = int(treated.min()) if not treated.empty else None
        return {
            "n_units": int(d["unit_id"].nunique()),
            "n_periods": int(d["period"].nunique()),
            "treat_start": start,
        }
    if family == "event_study":
        lo, hi = int(d["event_day"].min()), int(d["event_day"].max())
        return {
            "n_stocks": int(d["stock_id"].nunique()),
            "event_window": [lo, hi],
            "effect_window": [event_study.EFFECT_START, hi],
        }
    if family == "iv":
        return {"n": len(d)}
    return {"n": len(d), "cutoff": rdd.CUTOFF, "treated_side": "above", "bandwidth": rdd.BANDWIDTH}


def _target(family: Family, facts: dict[str, Any]) -> str:
    window = facts.get("event_window") or [0, 10]
    return _TARGETS[family].format(
        start=facts.get("treat_start"),
        last=window[1] if family == "event_study" else facts.get("n_periods"),
        cutoff=facts.get("cutoff"),
    )


def _difficulty(p: PublishedScenario) -> Difficulty:
    value = p.difficulty.strip().lower()
    for known in DIFFICULTIES:
        if value == known:
            return known
    raise SuiteError(f"scenario {p.scenario_id}: unknown difficulty {p.difficulty!r}")


def _family(p: PublishedScenario) -> Family:
    try:
        return parse_family(p.method_family)
    except ValueError as exc:
        raise SuiteError(f"scenario {p.scenario_id}: {exc}") from None


def _canonical(p: PublishedScenario, family: Family, data: pd.DataFrame) -> CanonicalResult:
    try:
        return canonical(data, family)
    except (KeyError, ValueError, TypeError, ArithmeticError) as exc:
        raise SuiteError(
            f"scenario {p.scenario_id}: the canonical {family} estimate cannot be computed on "
            f"{p.data_file} ({type(exc).__name__}: {exc}); its columns are {list(data.columns)}"
        ) from exc


def imported_scenario(
    p: PublishedScenario, raw: bytes
) -> tuple[Scenario, pd.DataFrame, CanonicalResult]:
    """Build our scenario record from a published one and the bytes of its CSV.

    Returns
    -------
    (Scenario, DataFrame, CanonicalResult)
        The record, the data as read back from ``raw``, and the canonical result.
    """
    family = _family(p)
    data = read_csv_bytes(raw)
    result = _canonical(p, family, data)
    facts = _data_facts(family, data)
    fallback = FALLBACK_COLUMNS[family]
    columns = {
        str(c): column_description(p.data_description, str(c))
        or fallback.get(str(c), "column of the data")
        for c in data.columns
    }
    params: dict[str, float | int] = {"n_rows": len(data)}
    params.update({k: v for k, v in facts.items() if isinstance(v, int) and k.startswith("n")})
    scenario = Scenario(
        id=p.scenario_id,
        index=p.number,
        family=family,
        difficulty=_difficulty(p),
        group=SOURCE,
        suite_seed=0,
        attempt=0,
        beta=p.dgp_truth.effect,
        params=params,
        topic=SOURCE,
        title=p.title,
        research_question=p.research_question,
        data_description=p.data_description,
        columns=columns,
        target=_target(family, facts),
        facts=facts,
        conversions=dict(ES_CONVERSIONS) if family == "event_study" else {},
        data_file=p.data_file,
        csv_sha256=hashlib.sha256(raw).hexdigest(),
        canonical=Canonical(
            estimate=result.estimate,
            se=result.se,
            n=result.n,
            method=result.method,
            profile=result.profile,
        ),
    )
    return scenario, data, result


def _meta(fmt: str, total: int, n_defects: int, versions: dict[str, str]) -> dict[str, Any]:
    return {
        "suite": SOURCE,
        "source": {"format": fmt, "importer_version": IMPORTER_VERSION},
        "seed": 0,
        "seed_recorded": False,
        "seed_note": "the release records no seeds; suite_seed 0 and attempt 0 are placeholders",
        "n_scenarios": total,
        "redraws": 0,
        "canonical_profile": "paper",
        "canonical_versions": versions,
        "defects_file": DEFECTS_FILE,
        "n_defects": n_defects,
    }


def import_suite(
    release: Path,
    out: Path,
    *,
    fmt: str = "causalverify-2026",
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import a downloaded copy of the published release as a suite.

    Parameters
    ----------
    release
        The root folder of the release (holding ``experiments/exp_b/scenarios``).
    out
        Destination folder: new, empty, or holding a previous suite (which is replaced).
    fmt
        The release format; only ``"causalverify-2026"`` exists.
    progress
        Called as ``progress(done, total)`` after each scenario.

    Returns
    -------
    ImportReport
        Counts, the defects found (also written to ``out/defects.csv``) and timing.

    Raises
    ------
    SuiteError
        If the release is malformed, a CSV is missing, a family or difficulty is unknown, or a
        canonical estimate cannot be computed. Defects never raise.
    """
    started = time.perf_counter()
    fmt = check_format(fmt)
    entries = read_release(Path(release))
    staging = _prepare_out(Path(out))
    try:
        writer = _Writer(staging)
        summaries, defects, versions = _write_all(writer, entries, progress)
        writer.write(DEFECTS_FILE, defects_csv(defects))
        meta = _meta(fmt, len(entries), len(defects), versions)
        writer.write("suite.json", dumps_json({**meta, "scenarios": summaries}))
        writer.write_sums()
        if not any((staging / "data").iterdir()):
            (staging / "data").rmdir()  # the CSVs keep their published paths
        _finish(staging, Path(out))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    counts = Counter((str(e["family"]), str(e["difficulty"])) for e in summaries)
    return ImportReport(
        root=Path(out),
        n_scenarios=len(entries),
        counts=dict(counts),  # type: ignore[arg-type]
        defects=tuple(defects),
        seconds=time.perf_counter() - started,
    )


def _write_all(
    writer: _Writer,
    entries: list[tuple[PublishedScenario, Path]],
    progress: Callable[[int, int], None] | None,
) -> tuple[list[dict[str, Any]], list[Defect], dict[str, str]]:
    summaries: list[dict[str, Any]] = []
    defects: list[Defect] = []
    versions: dict[str, str] = {}
    for done, (published, path) in enumerate(entries, start=1):
        raw = path.read_bytes()
        scenario, data, result = imported_scenario(published, raw)
        defects += find_defects(published, scenario.family, data, result.estimate)
        (writer.root / scenario.data_file).parent.mkdir(parents=True, exist_ok=True)
        writer.write(scenario.data_file, raw)
        writer.write(f"scenarios/{scenario.id}.json", dumps_json(scenario.model_dump(mode="json")))
        summaries.append(_summary(scenario))
        versions.update(result.versions)
        if progress is not None:
            progress(done, len(entries))
    return summaries, defects, versions

"""The development set of the published release: replay it, compare it, read it against hand labels.

A development set is a release folder (format ``causalverify-2026``) that also holds the
published per-cell table of its cells and hand-read labels of what some scripts reported::

    experiments/exp_b/{scenarios,data,outputs}/     scenarios, realised data, cached answers
    l2b_plus_scores_canonical_judge_v2.dev.csv      the published per-cell table of those cells
    reported_estimates.dev.jsonl                    hand-read reported estimates, one cell a line

The labels and the verdicts of our readings against them are in
:mod:`causalverify.published.handlabels`.

::

    replay_devset(release, work[, cells]) -> Replayed    (run folders under work, resumable)
    devset_figures(run_dirs, release) -> dict            (compare + label accuracy, JSON-ready)
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from causalverify.errors import StoreError
from causalverify.families import LANGUAGES, Language
from causalverify.models import ModelAccess
from causalverify.published._release import SCENARIO_DIR
from causalverify.published.compare import Comparison, compare_run, scenario_number, summarize
from causalverify.published.handlabels import (
    LABEL_RTOL,
    VERDICTS,
    DevSetError,
    HandLabel,
    executed,
    extracted_value,
    is_undecided,
    is_unresolved,
    read_labels,
    stdout_line,
    verdict,
)
from causalverify.published.importer import import_suite
from causalverify.records import CellRecord
from causalverify.runner import RunConfig, default_workers, run_benchmark, score_run
from causalverify.sandbox.codeblocks import find_code_blocks
from causalverify.scenarios import Suite, load_suite
from causalverify.store import RunStore

LABELS_FILE: Final[str] = "reported_estimates.dev.jsonl"
CELLS_FILE: Final[str] = "l2b_plus_scores_canonical_judge_v2.dev.csv"
OUTPUTS_DIR: Final[str] = "experiments/exp_b/outputs"
#: in the work folder: the fingerprint of the release and cells its suite and runs belong to
STAMP_FILE: Final[str] = "release.sha256"
DATA_DIR: Final[str] = "experiments/exp_b/data"
_OUTPUT: Final[re.Pattern[str]] = re.compile(r"^(?P<sid>s\d+)_(?P<slug>.+)\.json$")


@dataclass(frozen=True)
class Replayed:
    """What :func:`replay_devset` did.

    Attributes
    ----------
    run_dirs
        The run folders: ``work/run``, or ``work/runs/<slug>`` per model for chosen cells.
    computed, kept
        Cells computed (asked and executed) now, and cells kept from an earlier replay.
    replay_seconds, rescore_seconds
        Wall time of the replay (0 for rescore-only) and of re-extracting and rescoring.
    """

    run_dirs: tuple[Path, ...]
    computed: int
    kept: int
    replay_seconds: float
    rescore_seconds: float


# -- replay --------------------------------------------------------------------------------------


def output_slugs(release: Path) -> list[str]:
    """The model slugs of the cached answers, sorted."""
    folder = Path(release) / OUTPUTS_DIR
    return sorted({m["slug"] for p in folder.glob("*.json") if (m := _OUTPUT.match(p.name))})


def answer_languages(release: Path) -> list[Language]:
    """The languages of the code blocks in the cached answers (R first)."""
    found: set[Language] = set()
    for path in sorted((Path(release) / OUTPUTS_DIR).glob("*.json")):
        try:
            content = json.loads(path.read_text(encoding="utf-8"))["llm_response"]["content"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable answer is the replay's cell error, not a language
        found.update(block.language for block in find_code_blocks(str(content or "")))
    return [lang for lang in LANGUAGES if lang in found]


def _fingerprint(release: Path, cells: Sequence[tuple[str, str]] | None) -> str:
    """A hash of what the replay depends on: scenarios, data, answers and the chosen cells."""
    digest = hashlib.sha256()
    for sub in (SCENARIO_DIR, DATA_DIR, OUTPUTS_DIR):
        for path in sorted((Path(release) / sub).glob("*")):
            if path.is_file():
                digest.update(f"{sub}/{path.name}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    digest.update(json.dumps(sorted(cells) if cells is not None else None).encode())
    return digest.hexdigest()


def _prepare(release: Path, work: Path, cells: Sequence[tuple[str, str]] | None) -> None:
    """Import the suite under ``work`` unless it is there for this very release and cells."""
    stamp = work / STAMP_FILE
    fingerprint = _fingerprint(release, cells)
    if stamp.is_file() and stamp.read_text().strip() == fingerprint:
        return
    if _run_dirs(work):
        raise DevSetError(
            f"{work} holds a replay of another release or of other cells; give another work "
            "folder or remove that one"
        )
    import_suite(release, work / "suite")
    stamp.write_text(fingerprint + "\n")


def _run_dirs(work: Path) -> list[Path]:
    """The run folders under ``work``: ``run/`` (every answer) or ``runs/<slug>/`` (chosen cells)."""
    found = [work / "run"] if (work / "run" / "run.sqlite").is_file() else []
    found += sorted(p.parent for p in (work / "runs").glob("*/run.sqlite"))
    return found


_Plan = list[tuple[Path, tuple[str, ...], set[int] | None]]


def _plan(release: Path, work: Path, cells: Sequence[tuple[str, str]] | None) -> _Plan:
    """``(run folder, replay specs, scenario numbers or None for all)`` of each run.

    Every answer: one run of every model over every scenario. Chosen cells: one run per model
    over its chosen scenarios, so that no cell without a chosen answer is asked for.
    """
    outputs = (release / OUTPUTS_DIR).resolve()
    slugs = output_slugs(release)
    if not slugs:
        raise DevSetError(f"{outputs} holds no cached answers sNN_<slug>.json")
    if cells is None:
        return [(work / "run", tuple(f"replay/{outputs}:{slug}" for slug in slugs), None)]
    unknown = sorted({slug for _, slug in cells} - set(slugs))
    if unknown:
        raise DevSetError(f"no cached answers of {', '.join(unknown)} in {outputs}")
    plan: _Plan = []
    for slug in sorted({slug for _, slug in cells}):
        numbers = {n for sid, m in cells if m == slug and (n := scenario_number(sid)) is not None}
        plan.append((work / "runs" / slug, (f"replay/{outputs}:{slug}",), numbers))
    return plan


def replay_devset(
    release: Path,
    work: Path,
    *,
    cells: Iterable[tuple[str, str]] | None = None,
    languages: Sequence[Language] | None = None,
    workers: int | None = None,
    rescore_only: bool = False,
) -> Replayed:
    """Replay the cached answers of a development set in the sandbox and rescore them.

    Parameters
    ----------
    release
        The development set (a ``causalverify-2026`` release folder).
    work
        Where the suite (``suite/``), the run folders and the response cache live. A second
        call with the same folder resumes: stored executions are kept, only extraction and
        scoring are redone (with today's extractor).
    cells
        ``(scenario_id, model_slug)`` cells to replay (one run folder per model); ``None``
        replays every cached answer (one run folder, ``work/run``).
    languages
        The languages asked for; default: those the cached answers hold code in
        (:func:`answer_languages`; the published harness ran R).
    workers
        Cells executing at the same time (default: the CPUs this process may use).
    rescore_only
        Execute nothing: re-extract and rescore the executions stored under ``work``.

    Returns
    -------
    Replayed
        The run folders (every cell rescored with the ``paper`` profile), the cells computed now
        and kept, and the wall times.

    Raises
    ------
    DevSetError
        If ``work`` holds a replay of other material, or ``rescore_only`` finds none.
    """
    release, work = Path(release), Path(work)
    chosen = sorted(set(cells)) if cells is not None else None
    started = time.perf_counter()
    computed = kept = 0
    if rescore_only:
        stamp = work / STAMP_FILE
        run_dirs = _run_dirs(work)
        if not run_dirs or not stamp.is_file():
            raise DevSetError(f"nothing to rescore: {work} holds no replay; replay it first")
        if stamp.read_text().strip() != _fingerprint(release, chosen):
            raise DevSetError(
                f"{work} holds a replay of another release or of other cells; replay again "
                "(without rescore-only) in another work folder"
            )
    else:
        work.mkdir(parents=True, exist_ok=True)
        _prepare(release, work, chosen)
        suite = load_suite(work / "suite")
        langs = tuple(languages or answer_languages(release) or LANGUAGES[:1])
        run_dirs = []
        for run_dir, models, numbers in _plan(release, work, chosen):
            scenarios = [
                s for s in suite.scenarios if numbers is None or scenario_number(s.id) in numbers
            ]
            config = RunConfig(
                suite_dir=work / "suite",
                out_dir=run_dir,
                models=models,
                languages=langs,
                protocol="paper",
                profile="paper",
                workers=workers or default_workers(),
                access=ModelAccess(cache_path=work / "cache.sqlite"),
            )
            summary = run_benchmark(config, suite=Suite(suite.root, scenarios, dict(suite.meta)))
            computed, kept = computed + summary.computed, kept + summary.skipped
            run_dirs.append(run_dir)
    replayed = time.perf_counter() - started
    # cells a resumed run kept were extracted by the code of their day: read them again now
    rescored_cells = sum(len(score_run(d, profile="paper")) for d in run_dirs)
    rescored = time.perf_counter() - started - replayed
    if rescore_only:
        kept, replayed = rescored_cells, 0.0
    return Replayed(tuple(run_dirs), computed, kept, replayed, rescored)


# -- figures -------------------------------------------------------------------------------------


def _slug(spec: str) -> str:
    return spec.rpartition(":")[2] if spec.startswith("replay/") else spec


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _agreement(rates: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("cells", "L2b", "value", "L2b_plus", "ours_L2b_plus_rate", "published_L2b_plus_rate")
    return {k: rates[k] for k in keep}


def label_rows(
    records: Iterable[CellRecord], labels: Iterable[HandLabel], *, rtol: float = LABEL_RTOL
) -> list[dict[str, Any]]:
    """One row per label: the cell's verdict, our reading and the hand-read one."""
    by_key = {
        (scenario_number(r.key.scenario_id), _slug(r.key.model), r.key.language): r
        for r in records
        if r.key.sample == 0
    }
    rows = []
    for label in labels:
        record = by_key.get((scenario_number(label.scenario_id), label.model_slug, label.language))
        rows.append(
            {
                "scenario_id": label.scenario_id,
                "model": label.model_slug,
                "language": label.language,
                "verdict": verdict(record, label, rtol=rtol),
                "status": str(record.status) if record is not None else None,
                "missing_package": (
                    record.execution.missing_package
                    if record is not None and record.execution is not None
                    else None
                ),
                "extracted": extracted_value(record) if record is not None else None,
                "extracted_line": stdout_line(record) if record is not None else "",
                "label_status": label.status,
                "hand_read": label.value,
                "unit": label.unit,
                "alternatives": list(label.alternatives),
                "line": label.line,
            }
        )
    return rows


def executed_figures(records: Iterable[CellRecord]) -> dict[str, Any]:
    """Executed cells, and how many of them are undecided or have no estimate."""
    ran = [r for r in records if r.key.sample == 0 and executed(r)]
    undecided = sum(is_undecided(r) for r in ran)
    unresolved = sum(is_unresolved(r) for r in ran)
    no_estimate = sum(not is_undecided(r) and extracted_value(r) is None for r in ran)
    return {
        "executed": len(ran),
        "undecided": undecided,
        "undecided_share": _share(undecided, len(ran)),
        "unresolved": unresolved,
        "unresolved_share": _share(unresolved, len(ran)),
        "no_estimate": no_estimate,
        "no_estimate_share": _share(no_estimate, len(ran)),
    }


def accuracy_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Verdict counts over the labels, and the shares over the labelled cells we executed."""
    counts = Counter(str(row["verdict"]) for row in rows)
    assessed = sum(counts[v] for v in ("right", "undecided", "no_estimate", "wrong"))
    return {
        "labels": len(rows),
        "assessed": assessed,
        **{v: counts[v] for v in VERDICTS},
        "right_share": _share(counts["right"], assessed),
        "wrong_share": _share(counts["wrong"], assessed),
    }


def merge_comparisons(parts: Sequence[Comparison]) -> Comparison:
    """One comparison of several runs' cells (e.g. one run per model)."""
    cells = pd.concat([p.cells for p in parts], ignore_index=True)
    model_map = {k: v for p in parts for k, v in p.model_map.items()}
    others = set.intersection(*(set(p.published_models_not_compared) for p in parts))
    return Comparison(
        cells,
        model_map,
        [k for p in parts for k in p.unmatched_ours],
        sorted({k for p in parts for k in p.unmatched_published}),
        sorted(others),
    )


def devset_figures(
    run_dirs: Sequence[Path],
    release: Path,
    *,
    languages: Sequence[Language] | None = None,
    value_rtol: float = 0.01,
    label_rtol: float = LABEL_RTOL,
) -> dict[str, Any]:
    """The figures of a replayed development set (JSON-ready).

    Parameters
    ----------
    run_dirs
        The run folders of the replay (:attr:`Replayed.run_dirs`).
    release
        The development set.
    languages
        The languages compared with the published table (default: those of the cells).
    value_rtol
        Relative difference under which our value and the published judge's agree.
    label_rtol
        Slack beyond printed precision when a value is compared with a hand-read label.

    Returns
    -------
    dict
        ``compare``: per language, the agreement with the published table for installed-only
        and all cells (L2b, value, L2b+ as ``compare`` gives them) and the disagreement
        reasons; ``executed``: executed cells and the undecided / no-estimate shares;
        ``accuracy``: verdict counts against the hand-read labels; ``wrong``: the
        confidently-wrong cells; ``labels``: one row per label.

    Raises
    ------
    StoreError, DevSetError
        If a run cannot be read or the development set lacks its table or labels.
    """
    release = Path(release)
    for name in (CELLS_FILE, LABELS_FILE):
        if not (release / name).is_file():
            raise DevSetError(f"{release} has no {name}")
    records: list[CellRecord] = []
    for run_dir in run_dirs:
        with RunStore.open(Path(run_dir)) as store:
            records += store.iter_cells()
    if not records:
        raise StoreError(f"no cells in {', '.join(str(d) for d in run_dirs) or 'no run folder'}")
    compared: dict[str, Any] = {}
    present = {r.key.language for r in records}
    for language in languages or [lang for lang in LANGUAGES if lang in present]:
        parts = [
            compare_run(d, release / CELLS_FILE, language=language, value_rtol=value_rtol)
            for d in run_dirs
        ]
        summary = summarize(merge_comparisons(parts))
        compared[language] = {
            "matched_cells": summary["matched_cells"],
            "installed_only": _agreement(summary["installed_only"]["overall"]),
            "all": _agreement(summary["all"]["overall"]),
            "reasons": summary["reasons"],
        }
    rows = label_rows(records, read_labels(release / LABELS_FILE), rtol=label_rtol)
    return {
        "cells": len(records),
        "compare": compared,
        "executed": executed_figures(records),
        "accuracy": accuracy_figures(rows),
        "wrong": [row for row in rows if row["verdict"] == "wrong"],
        "labels": rows,
        "value_rtol": value_rtol,
        "label_rtol": label_rtol,
    }

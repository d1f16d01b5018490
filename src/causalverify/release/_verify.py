"""``verify_release``: hashes, rescoring from the stored executions, and optional re-execution."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causalverify.errors import CausalVerifyError, StoreError
from causalverify.progress import StepCallback, tell
from causalverify.prompts import messages_sha256
from causalverify.records import CellRecord, Message, RunMeta
from causalverify.release._hashes import check_sums, digest_of
from causalverify.release._layout import (
    PROMPTS_FILE,
    RELEASE_FILE,
    REPORT_DIR,
    REPORT_TEXT_FILES,
    SCORES_FILE,
    SUMS_FILE,
    dumps_line,
)
from causalverify.release._records import read_prompts, read_records
from causalverify.release._reexecute import ReexecutionReport, reexecute_cells
from causalverify.release._source import read_release_index, unfreeze
from causalverify.report import write_report
from causalverify.runner.rescore import write_scores_csv
from causalverify.scoring import rescore
from causalverify.store import cells_frame


@dataclass(frozen=True)
class VerifyReport:
    """What ``verify`` found.

    Attributes
    ----------
    release
        The release folder.
    digest
        SHA-256 of ``SHA256SUMS`` (None when it is missing); publish it to pin the release.
    n_files
        Files listed in ``SHA256SUMS``.
    hash_problems
        Changed, missing or extra files, each named.
    rescore_problems
        Cells or files whose rescoring differs from what is stored, each named.
    n_cells
        Cells read from the release.
    rescored
        Whether the cells were rescored and the report recomputed.
    reexecution
        The re-execution report when asked for.
    """

    release: Path
    digest: str | None
    n_files: int
    hash_problems: tuple[str, ...]
    rescore_problems: tuple[str, ...]
    n_cells: int
    rescored: bool = True
    reexecution: ReexecutionReport | None = None

    @property
    def problems(self) -> tuple[str, ...]:
        """Every problem found, hashes first."""
        extra = self.reexecution.problems if self.reexecution is not None else ()
        return self.hash_problems + self.rescore_problems + extra

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems


def verify_release(
    release: Path,
    *,
    reexecute: bool = False,
    rescore: bool = True,
    workers: int = 1,
    expected_digest: str | None = None,
    limit: int | None = None,
    progress: StepCallback | None = None,
    warm: bool | None = None,
) -> VerifyReport:
    """Check a release folder.

    1. Every file against ``SHA256SUMS`` (a changed, missing or extra file is named), and the
       digest of ``SHA256SUMS`` against ``expected_digest`` when given.
    2. Every rendered prompt against its ``prompt_sha256``.
    3. Every cell rescored from its stored code and stdout with the scoring settings of its stored
       scores (the run's own, or those of the last `causalverify score` that changed them): the
       statuses and scores must equal the stored ones, and ``scores.csv`` and the report's
       ``summary.json``, ``cells.csv`` and ``leaderboard.md`` recomputed from the rescored cells
       must be byte-identical to the frozen files (skipped when ``rescore`` is false).
    4. With ``reexecute``: every executed cell is run again in the sandbox
       (:func:`~causalverify.release.reexecute_cells`); with ``limit``, only that many, spread
       evenly over the executed cells.

    ``progress`` is told each step, and each re-executed cell (see :mod:`causalverify.progress`).

    Raises
    ------
    StoreError
        If ``release`` has neither ``release.json`` nor ``SHA256SUMS`` (a damaged
        ``release.json`` is reported as a problem instead).
    SandboxUnavailableError
        If ``reexecute`` is set and the sandbox cannot run.
    """
    release = Path(release)
    if not (release / RELEASE_FILE).exists() and not (release / SUMS_FILE).exists():
        raise StoreError(
            f"{release} is not a release: it has neither {RELEASE_FILE} nor {SUMS_FILE}"
        )
    tell(progress, "checking file hashes")
    n_files, hash_problems = check_sums(release)
    digest = digest_of(release)
    if expected_digest is not None and digest != expected_digest.strip().lower():
        hash_problems.append(f"SHA256SUMS: digest {digest} is not the expected {expected_digest}")
    problems: list[str] = []
    records: list[CellRecord] = []
    index: dict[str, Any] = {}
    try:
        index = read_release_index(release)
        tell(progress, "checking prompts")
        problems += _check_prompts(release)
        records = read_records(release)
        if rescore:
            tell(progress, "rescoring cells and rebuilding the report")
            problems += _check_rescoring(release, index, records)
    except CausalVerifyError as exc:
        problems.append(str(exc))
    except (KeyError, TypeError, ValueError) as exc:
        problems.append(f"{RELEASE_FILE}: cannot rescore with the recorded settings ({exc!r})")
    reexecution = None
    if reexecute and records:
        reexecution = reexecute_cells(
            release,
            records,
            RunMeta.of(index.get("run", {})),
            workers=workers,
            limit=limit,
            progress=progress,
            warm=warm,
        )
    return VerifyReport(
        release=release,
        digest=digest,
        n_files=n_files,
        hash_problems=tuple(hash_problems),
        rescore_problems=tuple(problems),
        n_cells=len(records),
        rescored=rescore,
        reexecution=reexecution,
    )


def _check_prompts(release: Path) -> list[str]:
    problems = []
    for sha, messages in read_prompts(release).items():
        actual = messages_sha256([Message.model_validate(m) for m in messages])
        if actual != sha:
            problems.append(f"{PROMPTS_FILE}: the prompt listed as {sha} hashes to {actual}")
    return problems


def _check_rescoring(
    release: Path, index: dict[str, Any], records: Sequence[CellRecord]
) -> list[str]:
    """Rescore every cell as ``causalverify score`` does, rebuild the report from a scratch run
    store as ``causalverify report`` does, and compare cells and files with the frozen ones."""
    meta = RunMeta.of(index.get("run", {}))
    settings = index.get("report", {})
    scoring = meta.scoring
    rescored = [
        rescore(
            record,
            profile=scoring.profile,
            tolerance=scoring.tolerance,
            extractor=scoring.extractor,
        )
        for record in records
    ]
    problems = _compare_cells(records, rescored)
    with tempfile.TemporaryDirectory(prefix="cv-verify-") as tmp:
        run_dir = unfreeze(release, Path(tmp) / "run", records=rescored)
        write_scores_csv(cells_frame(rescored), run_dir / SCORES_FILE)
        write_report(
            run_dir,
            run_dir / REPORT_DIR,
            seed=int(settings["seed"]),
            title=str(settings["title"]),
            unit="model_language" if settings.get("unit") == "model_language" else "model",
            n_resamples=int(settings["n_resamples"]),
        )
        compared = [SCORES_FILE] + [f"{REPORT_DIR}/{name}" for name in REPORT_TEXT_FILES]
        for rel in compared:
            frozen = release / rel
            if not frozen.is_file():
                problems.append(f"{rel}: missing, cannot compare with the rescored file")
            elif frozen.read_bytes() != (run_dir / rel).read_bytes():
                problems.append(f"{rel}: differs from the file recomputed from the rescored cells")
    return problems


def _compare_cells(stored: Sequence[CellRecord], rescored: Sequence[CellRecord]) -> list[str]:
    if [r.key for r in stored] != [r.key for r in rescored]:
        return ["the rescored run does not hold the same cells as the release"]
    return [
        problem
        for old, new in zip(stored, rescored, strict=True)
        if (problem := _compare_cell(old, new)) is not None
    ]


def _label(record: CellRecord) -> str:
    key = record.key
    return f"{key.scenario_id}/{key.model}/{key.language}/{key.sample}"


def _compare_cell(stored: CellRecord, rescored: CellRecord) -> str | None:
    old, new = _outcome(stored), _outcome(rescored)
    changed = [name for name in old if dumps_line(old[name]) != dumps_line(new[name])]
    if not changed:
        return None
    return (
        f"cell {_label(stored)}: rescoring changes {', '.join(changed)} "
        f"(status stored {stored.status}, rescored {rescored.status})"
    )


def _outcome(record: CellRecord) -> dict[str, Any]:
    return {
        "status": record.status,
        "scores": record.scores.model_dump(mode="json") if record.scores is not None else None,
        "extraction": (
            record.extraction.model_dump(mode="json") if record.extraction is not None else None
        ),
        "extraction_disagree": record.extraction_disagree,
    }

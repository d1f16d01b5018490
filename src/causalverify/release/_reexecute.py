"""Re-running every executed cell of a release in the sandbox and comparing with what was stored."""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causalverify.progress import StepCallback, tell
from causalverify.records import CellRecord, RunMeta
from causalverify.release._layout import SUITE_DIR
from causalverify.sampling import evenly
from causalverify.sandbox import get_sandbox
from causalverify.sandbox.base import Limits, Sandbox
from causalverify.scenarios import load_suite
from causalverify.scoring import rescore


@dataclass(frozen=True)
class CellAgreement:
    """One re-executed cell: L2b and the extracted value, as stored and as now."""

    cell: str
    l2b_stored: bool
    l2b_now: bool
    value_stored: float | None
    value_now: float | None
    exec_status_now: str

    @property
    def l2b_agrees(self) -> bool:
        """The code executes (or fails) now exactly as it did."""
        return self.l2b_stored == self.l2b_now

    @property
    def value_agrees(self) -> bool:
        """The deterministic extractor finds the same value (or none) in the new output."""
        old, new = self.value_stored, self.value_now
        if old is None or new is None:
            return old is new
        return old == new or (math.isnan(old) and math.isnan(new))


@dataclass(frozen=True)
class ReexecutionReport:
    """Agreement between stored and re-run executions."""

    cells: tuple[CellAgreement, ...]

    @property
    def n_cells(self) -> int:
        """Cells re-executed."""
        return len(self.cells)

    @property
    def l2b_agree(self) -> int:
        """Cells whose L2b status is the same."""
        return sum(c.l2b_agrees for c in self.cells)

    @property
    def value_agree(self) -> int:
        """Cells whose extracted value is the same."""
        return sum(c.value_agrees for c in self.cells)

    @property
    def problems(self) -> tuple[str, ...]:
        """One line per disagreeing cell."""
        return tuple(
            f"re-execution of {c.cell}: L2b stored {int(c.l2b_stored)} now {int(c.l2b_now)} "
            f"({c.exec_status_now}); value stored {c.value_stored} now {c.value_now}"
            for c in self.cells
            if not (c.l2b_agrees and c.value_agrees)
        )


def reexecute_cells(
    release: Path,
    records: Sequence[CellRecord],
    meta: RunMeta,
    *,
    workers: int = 1,
    sandbox: Sandbox | None = None,
    limit: int | None = None,
    progress: StepCallback | None = None,
    warm: bool | None = None,
) -> ReexecutionReport:
    """Run every executed cell again in the sandbox, with the run's limits and the release's data.

    Each cell's stored code runs with its scenario CSV from the release's ``suite/`` folder; the
    new execution is rescored with the run's settings, and L2b and the extracted value are
    compared with the stored ones. For deterministic code both must agree on every cell.
    With ``limit``, only that many executed cells are run, taken at even steps through them
    (reproducible). ``progress`` is told after every cell. ``warm`` chooses warm interpreters for
    Python cells (None: the ``CAUSALVERIFY_WARM`` setting).

    Raises
    ------
    SandboxUnavailableError
        If no sandbox can run (``sandbox`` is None and bubblewrap is unusable).
    SuiteError
        If the release's suite is damaged.
    """
    suite = load_suite(Path(release) / SUITE_DIR)
    box = sandbox if sandbox is not None else get_sandbox(warm=warm)
    limits = Limits(**meta.limits) if meta.limits else Limits()
    executed = [r for r in records if r.execution is not None and r.code is not None]
    todo = evenly([r for r in executed if r.code is not None and r.code.code], limit)
    step = "re-executing cells"
    tell(progress, step, 0, len(todo))

    def one(record: CellRecord) -> CellAgreement:
        return _reexecute_one(record, suite, box, limits, meta)

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="cv-reexec") as pool:
        futures = [pool.submit(one, record) for record in todo]
        for done, _ in enumerate(as_completed(futures), start=1):
            tell(progress, step, done, len(todo))
        cells = tuple(future.result() for future in futures)
    return ReexecutionReport(cells)


def _reexecute_one(
    record: CellRecord, suite: Any, box: Sandbox, limits: Limits, meta: RunMeta
) -> CellAgreement:
    assert record.code is not None and record.code.code is not None
    scenario = suite.get(record.key.scenario_id)
    result = box.run(
        record.code.code,
        record.key.language,
        {scenario.data_file: suite.data_path(scenario)},
        limits,
    )
    rerun = rescore(
        record.model_copy(update={"execution": result}),
        profile=meta.scoring.profile,
        tolerance=meta.scoring.tolerance,
        extractor="deterministic",
    )
    key = record.key
    return CellAgreement(
        cell=f"{key.scenario_id}/{key.model}/{key.language}/{key.sample}",
        l2b_stored=bool(record.scores.L2b) if record.scores is not None else False,
        l2b_now=bool(rerun.scores.L2b) if rerun.scores is not None else False,
        value_stored=record.extraction.value if record.extraction is not None else None,
        value_now=rerun.extraction.value if rerun.extraction is not None else None,
        exec_status_now=result.status,
    )

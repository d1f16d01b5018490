"""Inspect logs as a CausalVerify run folder (``causalverify import-inspect LOG --out DIR``).

Each sample scored by :func:`causalverify.inspect_eval.causalverify_scorer` carries its cell
record in the score's metadata; those records are stored in a run store with metadata that says
where they came from, so ``report``, ``analyze`` and ``freeze`` read it like a native run. An
epoch ``e`` of a sample is the cell's sample ``e - 1``.

The run records its suite (``suite_path``, ``suite_fingerprint``), so ``freeze`` finds it: the
suite folder the log names, or, when that folder is gone, the named suite the log was run on,
built again under the task's cache and checked by fingerprint (or the folder given as
``suite_dir``). When none can be found, the run is stored without a suite path and ``freeze``
asks for ``--suite``.

Several logs can go into one folder (one per model, or per language): each import adds its cells
under the run folder's writer lock, in one transaction, after checking that the log's settings
(suite, protocol, scoring, mode) are those of the cells already there. Importing a log again is
a no-op; a log whose cells differ from those stored under the same keys (the same model's
samples from another Inspect run) is refused, naming them.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from causalverify.errors import StoreError, SuiteError
from causalverify.inspect_eval import task
from causalverify.records import DEFAULT_TOLERANCE, CellRecord, ImportSource, RunMeta, RunMode
from causalverify.runner.meta import META_SCHEMA, merge_meta, read_meta, suite_fingerprint
from causalverify.runner.suite import ensure_suite
from causalverify.scenarios import Suite, load_suite
from causalverify.scenarios.grid import SUITES
from causalverify.store import RunStore
from causalverify.store.sqlite import writer_lock

SCORER = "causalverify_scorer"


@dataclass(frozen=True)
class Imported:
    """What an import did: the run folder, the cells added and those already stored, the
    suite recorded (None: not found) and why it was not found."""

    run_dir: Path
    added: int
    unchanged: int
    suite_path: Path | None
    suite_note: str = ""


@dataclass(frozen=True)
class _Suite:
    path: Path | None
    #: the run metadata's suite keys (none but the fingerprint when the suite was not found)
    meta: RunMeta
    note: str = ""


def _records(log: Any) -> list[CellRecord]:
    out = []
    for sample in log.samples or []:
        score = (sample.scores or {}).get(SCORER)
        cell = (score.metadata or {}).get("causalverify_cell") if score is not None else None
        if cell is not None:
            record = CellRecord.model_validate(cell)
            epoch = int(getattr(sample, "epoch", 1) or 1)
            if epoch > 1:  # Inspect's epochs are the run's samples
                key = record.key.model_copy(update={"sample": epoch - 1})
                record = record.model_copy(update={"key": key})
            out.append(record)
    return out


def _read(log_path: Path) -> tuple[Any, list[CellRecord]]:
    try:
        log = read_eval_log(str(log_path))
        records = sorted(_records(log), key=lambda r: r.key.as_tuple())
    except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile) as exc:
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise StoreError(
            f"{log_path} is not a readable Inspect log ({type(exc).__name__}"
            f"{': ' + reason if reason else ''}); a log cut short or still being written cannot "
            "be imported: import the finished log (`inspect log list` shows them)"
        ) from exc
    if not records:
        raise StoreError(f"{log_path} holds no sample scored by the causalverify scorer")
    keys = [r.key.as_tuple() for r in records]
    if len(set(keys)) != len(keys):
        raise StoreError(f"{log_path} scores one scenario twice for the same model and sample")
    return log, records


def _sample_meta(log: Any) -> dict[str, Any]:
    for sample in log.samples or []:
        if (sample.scores or {}).get(SCORER) is not None:
            return dict(sample.metadata or {})
    return {}


def _suite_meta(suite: Suite) -> RunMeta:
    return RunMeta(
        suite_path=str(Path(suite.root).resolve()),
        suite_seed=suite.scenarios[0].suite_seed if suite.scenarios else None,
        suite_fingerprint=suite_fingerprint(suite.scenarios),
        suite_scenarios=len(suite.scenarios),
    )


def _locate_suite(log: Any, records: Sequence[CellRecord], given: Path | None) -> _Suite:
    """The suite the log's samples were asked from (see the module docstring).

    Raises
    ------
    SuiteError
        If ``given`` or the log's own suite folder is not the suite the log used.
    """
    sample = _sample_meta(log)
    expected = sample.get("suite_fingerprint")  # absent in logs of earlier versions
    recorded = sample.get("suite_dir")
    spec = str((log.eval.task_args or {}).get("suite", ""))
    ids = {r.key.scenario_id for r in records}

    def check(suite: Suite, where: str) -> _Suite:
        found = _suite_meta(suite)
        if expected is not None and found.suite_fingerprint != expected:
            raise SuiteError(
                f"the suite at {where} is not the suite the log was run on (fingerprint "
                "differs); pass that suite's folder with --suite DIR"
            )
        missing = sorted(ids - {s.id for s in suite.scenarios})
        if missing:
            raise SuiteError(f"the suite at {where} lacks scenarios of the log: {missing[:5]}")
        return _Suite(Path(suite.root).resolve(), found)

    if given is not None:
        return check(load_suite(given), str(given))
    if recorded and (Path(recorded) / "suite.json").is_file():
        return check(load_suite(Path(recorded)), str(recorded))
    if spec in SUITES:  # a named suite whose folder is gone: built again, checked by fingerprint
        return check(load_suite(ensure_suite(spec, task.SUITE_CACHE)), f"{spec} (built again)")
    meta = RunMeta(suite_fingerprint=expected) if expected is not None else RunMeta()
    note = (
        f"the log's suite folder {recorded or '(not recorded)'} is gone; `causalverify freeze` "
        "will need --suite DIR (the suite the log was run on)"
    )
    return _Suite(None, meta, note)


def _meta(log: Any, log_path: Path, records: Sequence[CellRecord], suite: _Suite) -> RunMeta:
    first = records[0]
    sample = _sample_meta(log)
    # absent in single mode, as a native run records it
    mode: dict[str, Any] = (
        {"mode": RunMode(name="repair", max_turns=int(sample.get("max_turns", 1)))}
        if sample.get("mode") == "repair"
        else {}
    )
    return suite.meta.with_entries(
        schema=META_SCHEMA,
        source=ImportSource(task=log.eval.task, inspect_logs=[str(Path(log_path).resolve())]),
        models=sorted({r.key.model for r in records}),
        languages=sorted({r.key.language for r in records}),
        samples=1 + max(r.key.sample for r in records),
        protocol=first.protocol,
        profile=first.scores.profile if first.scores else "default",
        tolerance=first.scores.tolerance if first.scores else DEFAULT_TOLERANCE,
        extractor=first.scores.extractor if first.scores else "deterministic",
        limits=None,
        unsafe=False,
        **mode,
    )


def _union(first: Sequence[str], then: Sequence[str]) -> list[str]:
    return [*first, *(x for x in then if x not in first)]


def _joined(stored: RunMeta, new: RunMeta, out_dir: Path) -> RunMeta:
    """The metadata of ``out_dir`` once the log's cells join the cells already there."""
    source = stored.source
    if source is None or not source.is_inspect:
        raise StoreError(
            f"{out_dir} holds a run that was not imported from Inspect; import into a new folder"
        )
    logs = list(source.inspect_logs or ([source.inspect_log] if source.inspect_log else []))
    added = new.source.inspect_logs if new.source is not None else None
    for path in added or []:
        if path not in logs:
            logs.append(path)
    if stored.suite_path and new.suite_path is None:
        new = new.with_entries(suite_path=stored.suite_path)  # found by an earlier import
    # the stored source with every log in ``inspect_logs`` (an earlier single ``inspect_log``
    # moves there)
    kept = source.model_dump(mode="json", exclude_unset=True, exclude={"inspect_log"})
    joined = new.with_entries(
        source={**kept, "inspect_logs": logs},
        models=_union(stored.models, new.models),
        languages=_union(stored.languages, new.languages),
        samples=max(stored.samples, new.samples),
    )
    try:
        return merge_meta(stored, joined)
    except StoreError as exc:
        raise StoreError(f"the log cannot join the run in {out_dir}: {exc}") from None


def import_log(log_path: Path, out_dir: Path, *, suite_dir: Path | None = None) -> Imported:
    """Add the cells of the Inspect log at ``log_path`` to the run folder ``out_dir`` (new, or
    holding cells imported from other logs of the same suite and settings).

    Raises
    ------
    StoreError
        If the log cannot be read (not a log, or cut short) or holds no CausalVerify-scored
        sample; if ``out_dir`` holds a native run, cells of other settings, or other cells under
        the same keys; or if another process is writing ``out_dir``.
    SuiteError
        If the suite found (or ``suite_dir``) is not the suite the log was run on.
    """
    out_dir = Path(out_dir)
    log, records = _read(log_path)
    suite = _locate_suite(log, records, suite_dir)
    new = _meta(log, log_path, records, suite)
    with writer_lock(out_dir), RunStore.open(out_dir, create=True) as store:
        stored = read_meta(store.meta(), out_dir)
        meta = _joined(stored, new, out_dir) if stored.recorded else new
        fresh, unchanged, clashes = [], 0, []
        for record in records:
            old = store.get_cell(record.key)
            if old is None:
                fresh.append(record)
            elif old.model_dump_json() == record.model_dump_json():
                unchanged += 1
            else:
                clashes.append(record.key)
        if clashes:
            models = ", ".join(sorted({k.model for k in clashes}))
            example = "/".join(str(part) for part in clashes[0].as_tuple())
            raise StoreError(
                f"{out_dir} already holds other cells of {models} ({len(clashes)} cells, e.g. "
                f"{example}), imported from another log; a model's cells come from one log: "
                "import this log into a new folder"
            )
        store.put_cells(fresh, meta=meta.stored())
    path = Path(meta.suite_path) if meta.suite_path else None
    return Imported(out_dir, len(fresh), unchanged, path, "" if path else suite.note)


def log_to_run(log_path: Path, out_dir: Path, *, suite_dir: Path | None = None) -> Path:
    """Write the cells of the Inspect log at ``log_path`` into the run folder ``out_dir`` (see
    :func:`import_log`); return the folder."""
    return import_log(log_path, out_dir, suite_dir=suite_dir).run_dir


__all__ = ["Imported", "import_log", "log_to_run"]

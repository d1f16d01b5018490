"""The run store: one SQLite file per run, in WAL mode, one transaction per finished cell.

Schema (``run.sqlite`` inside the run folder)::

    meta(key TEXT PRIMARY KEY, value TEXT)          -- value is JSON
    cells(scenario_id TEXT, model TEXT, language TEXT, sample INTEGER,
          status TEXT, record TEXT, seq INTEGER,
          PRIMARY KEY (scenario_id, model, language, sample))
    calibration(...)                                -- see causalverify.store.calibration

``record`` is ``CellRecord.model_dump_json()``; ``seq`` increases with every write, so the order in
which cells were finished is known without wall-clock timestamps. ``synchronous=FULL`` makes a
committed cell durable even against a power cut; a ``kill -9`` loses at most the cells in flight.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from causalverify.errors import StoreError
from causalverify.records import CellKey, CellRecord, CellStatus, RunMeta
from causalverify.sqlite import connect as sqlite_connect
from causalverify.sqlite import ensure_schema
from causalverify.store.calibration import CALIBRATION_SCHEMA, CalibrationRecord

STORE_FILE = "run.sqlite"
LOCK_FILE = "run.lock"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    scenario_id TEXT NOT NULL,
    model TEXT NOT NULL,
    language TEXT NOT NULL,
    sample INTEGER NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (scenario_id, model, language, sample)
);
"""

_ORDER = "ORDER BY scenario_id, model, language, sample"
_PUT_CELL = (
    "INSERT INTO cells(scenario_id, model, language, sample, status, record, seq) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(scenario_id, model, language, sample) DO UPDATE SET "
    "status = excluded.status, record = excluded.record, seq = excluded.seq"
)
_PUT_META = "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"


def _meta_rows(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(k, json.dumps(v, sort_keys=True)) for k, v in values.items()]


_TABLES = frozenset({"meta", "cells", "calibration"})
#: what to do about a store that cannot be read
_RECOVERY = (
    "Answers are kept in the response cache, so rerunning the same `causalverify run` command "
    "with another --out folder asks no model again"
)


@contextlib.contextmanager
def writer_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run folder's writer lock (``run.lock``, an advisory ``flock``) for the block.

    Two processes writing cells into one folder would compute (and pay for) every cell twice; the
    second one stops here instead. The lock goes with the process, so a crash never leaves it.

    Raises
    ------
    StoreError
        If another process holds the lock.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            raise StoreError(
                f"another causalverify process (pid {holder}) is writing {run_dir}; wait for it "
                "to finish, or use another --out folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class RunStore:
    """A resumable, transactional store of cell records and run metadata.

    Use :meth:`open` rather than the constructor. The store is safe to share between threads:
    every statement runs under one lock on one connection.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._conn = connection
        self._lock = threading.RLock()
        self._closed = False

    @classmethod
    def open(cls, run_dir: Path, *, create: bool = False) -> RunStore:
        """Open the store of a run folder.

        Parameters
        ----------
        run_dir
            The run folder; the database is ``run_dir/run.sqlite``.
        create
            Create the folder and an empty store if they do not exist.

        Raises
        ------
        StoreError
            If there is no store and ``create`` is false, or the file is not a run store.
        """
        run_dir = Path(run_dir)
        path = run_dir / STORE_FILE
        if not path.exists():
            if not create:
                if (run_dir / "suite.json").is_file():
                    raise StoreError(
                        f"{run_dir} is a suite, not a run: run models through it with "
                        f"`causalverify run --suite {run_dir} --out RUN_DIR`, then use RUN_DIR"
                    )
                raise StoreError(
                    f"no run store at {path}; run `causalverify run --out {run_dir}` first"
                )
            run_dir.mkdir(parents=True, exist_ok=True)
            _initialise(path)
        elif path.stat().st_size == 0:  # never written by us: a store is created whole
            raise StoreError(
                f"{path} is an empty file, not a run store; remove it (a new run there starts "
                f"afresh) or use another folder. {_RECOVERY}"
            )
        try:
            conn = connect(path, schema=_SCHEMA + CALIBRATION_SCHEMA, tables=_TABLES, what="run")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path} is not a readable run store: {exc}. {_RECOVERY}") from exc
        return cls(path, conn)

    # -- metadata -------------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        """Return the run metadata (JSON values decoded), keys sorted."""
        with self._lock:
            rows = self._conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        return {key: json.loads(value) for key, value in rows}

    def run_meta(self) -> RunMeta:
        """The run metadata as the typed record every reader goes through."""
        return RunMeta.of(self.meta())

    def set_meta(self, values: Mapping[str, Any]) -> None:
        """Upsert metadata keys in one transaction (keys not named are kept)."""
        with self._lock, self._conn:
            self._conn.executemany(_PUT_META, _meta_rows(values))

    # -- cells ----------------------------------------------------------------------------------

    def has_cell(self, key: CellKey) -> bool:
        """Whether a record is stored for ``key`` (whatever its status)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM cells WHERE scenario_id=? AND model=? AND language=? AND sample=?",
                key.as_tuple(),
            ).fetchone()
        return row is not None

    def put_cell(self, record: CellRecord) -> None:
        """Insert or replace the record of one cell, in a single transaction."""
        self.put_cells([record])

    def put_cells(
        self, records: Iterable[CellRecord], *, meta: Mapping[str, Any] | None = None
    ) -> int:
        """Insert or replace many records (and upsert ``meta``) in one transaction.

        Bulk updates (rescoring, unfreezing a release) write this way: one commit instead of
        one per cell, and all or nothing if the process dies (``kill -9`` leaves the store as it
        was). Each record gets the next ``seq`` in order, exactly as one ``put_cell`` after the
        other would.

        Returns
        -------
        int
            How many records were written.
        """
        rows = [(*r.key.as_tuple(), r.status, r.model_dump_json()) for r in records]
        with self._lock, self._conn:
            (last,) = self._conn.execute("SELECT COALESCE(MAX(seq), 0) FROM cells").fetchone()
            numbered = [(*row, last + i) for i, row in enumerate(rows, start=1)]
            self._conn.executemany(_PUT_CELL, numbered)
            if meta:
                self._conn.executemany(_PUT_META, _meta_rows(meta))
        return len(rows)

    def get_cell(self, key: CellKey) -> CellRecord | None:
        """Return the stored record of ``key``, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT record FROM cells "
                "WHERE scenario_id=? AND model=? AND language=? AND sample=?",
                key.as_tuple(),
            ).fetchone()
        return None if row is None else CellRecord.model_validate_json(row[0])

    def iter_cells(self) -> Iterator[CellRecord]:
        """Yield every record, ordered by scenario id, model, language and sample."""
        with self._lock:
            rows = self._conn.execute(f"SELECT record FROM cells {_ORDER}").fetchall()
        for (payload,) in rows:
            yield CellRecord.model_validate_json(payload)

    def statuses(self) -> dict[tuple[str, str, str, int], CellStatus]:
        """Map every stored cell key tuple to its status (cheap: no record is decoded)."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT scenario_id, model, language, sample, status FROM cells {_ORDER}"
            ).fetchall()
        return {(s, m, lang, int(k)): status for s, m, lang, k, status in rows}

    def held_values(self) -> dict[str, set[str]]:
        """The models and languages that have at least one stored cell."""
        with self._lock:
            models = {m for (m,) in self._conn.execute("SELECT DISTINCT model FROM cells")}
            languages = {x for (x,) in self._conn.execute("SELECT DISTINCT language FROM cells")}
        return {"models": models, "languages": languages}

    def delete_cells(self) -> int:
        """Delete every cell record (metadata and calibration are kept); return how many."""
        with self._lock, self._conn:
            return self._conn.execute("DELETE FROM cells").rowcount

    def count_cells(self) -> int:
        """The number of stored cells."""
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM cells").fetchone()
        return int(count)

    # -- calibration (see causalverify.store.calibration) ----------------------------------------

    def put_calibration(self, record: CalibrationRecord) -> None:
        """Insert or replace one calibration row, in a single transaction."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO calibration(scenario_id, model, language, sample, protocol, status, "
                "record, seq) VALUES (?, ?, ?, ?, ?, ?, ?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM calibration)) "
                "ON CONFLICT(scenario_id, model, language, sample, protocol) DO UPDATE SET "
                "status = excluded.status, record = excluded.record, seq = excluded.seq",
                (*record.key.as_tuple(), record.protocol, record.status, record.model_dump_json()),
            )

    def calibration_statuses(self, protocol: str) -> dict[tuple[str, str, str, int], str]:
        """Map the key tuple of every calibration row of ``protocol`` to its status."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT scenario_id, model, language, sample, status FROM calibration "
                f"WHERE protocol=? {_ORDER}",
                (protocol,),
            ).fetchall()
        return {(s, m, lang, int(k)): status for s, m, lang, k, status in rows}

    def iter_calibration(self, protocol: str | None = None) -> Iterator[CalibrationRecord]:
        """Yield calibration rows (of one protocol, or all), ordered by key then protocol."""
        where, args = ("WHERE protocol=?", (protocol,)) if protocol is not None else ("", ())
        with self._lock:
            rows = self._conn.execute(
                f"SELECT record FROM calibration {where} {_ORDER}, protocol", args
            ).fetchall()
        for (payload,) in rows:
            yield CalibrationRecord.model_validate_json(payload)

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if not self._closed:
                self._conn.close()
                self._closed = True

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _initialise(path: Path) -> None:
    """Create an empty store beside ``path`` and move it into place in one step.

    A process that opens the store while another creates it therefore never sees a file
    without its schema (and never has to write to it just to read it).
    """
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        conn = sqlite3.connect(staging)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            ensure_schema(
                conn,
                schema=_SCHEMA + CALIBRATION_SCHEMA,
                tables=_TABLES,
                what="run store",
                version=SCHEMA_VERSION,
            )
        finally:
            conn.close()
        # link, not rename: a link fails if another process created the store meanwhile,
        # where a rename would replace that store, and with it any cell already written to it
        with contextlib.suppress(FileExistsError):
            os.link(staging, path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot create a run store at {path}: {exc}") from exc
    finally:
        for leftover in (staging, *(staging.with_name(staging.name + x) for x in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


def connect(path: Path, *, schema: str, tables: frozenset[str], what: str) -> sqlite3.Connection:
    """A run store's connection with the settings every database of ours has
    (:func:`causalverify.sqlite.connect`) and the run store's schema version."""
    return sqlite_connect(
        path, schema=schema, tables=tables, what=f"{what} store", version=SCHEMA_VERSION
    )

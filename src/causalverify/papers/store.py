"""The Experiment A store: ``RUN_DIR/papers.sqlite`` (separate from the Experiment B run store).

Three tables of model exchanges, each row one prompt and its response:

``answers``     (paper_id, model, arm)            an evaluated model's analysis plan;
``votes``       (paper_id, labeller)              a labeller's strict-JSON label;
``judgements``  (paper_id, model, arm, layer, judge)  the S3 judge's one word.

Rows are written one transaction each, so an interrupted run resumes; a row whose status is
``api_error`` is asked again on the next run, every other row is final
(:data:`causalverify.runner.engine.RETRY_STATUSES`). The database has the settings and the
schema versioning of every store (:func:`causalverify.store.sqlite.connect`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from causalverify.errors import StoreError
from causalverify.records import Message, ModelResponse
from causalverify.sqlite import connect

FILENAME: Final[str] = "papers.sqlite"
Table = Literal["answers", "votes", "judgements"]
ExchangeStatus = Literal["ok", "api_error", "no_response"]
KEYS: Final[dict[Table, tuple[str, ...]]] = {
    "answers": ("paper_id", "model", "arm"),
    "votes": ("paper_id", "labeller"),
    "judgements": ("paper_id", "model", "arm", "layer", "judge"),
}
#: version of the Experiment A store's schema (``PRAGMA user_version``)
SCHEMA_VERSION: Final[int] = 1
SCHEMA: Final[str] = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);\n"
    + "".join(
        f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(f'{k} TEXT NOT NULL' for k in keys)}, "
        f"status TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY ({', '.join(keys)}));\n"
        for table, keys in KEYS.items()
    )
)


class Exchange(BaseModel):
    """One prompt sent to a model and what came back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: list[Message]
    prompt_sha256: str
    response: ModelResponse
    status: ExchangeStatus

    @property
    def text(self) -> str:
        """The answer text (empty when there is none)."""
        return self.response.content or ""


class PaperStore:
    """SQLite (WAL) store of Experiment A exchanges; one writer thread.

    Use :meth:`open`; close it (or use it as a context manager) when done.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    @classmethod
    def open(cls, run_dir: Path, *, create: bool = False) -> PaperStore:
        """Open ``run_dir/papers.sqlite``.

        Raises
        ------
        StoreError
            If it does not exist and ``create`` is false, or cannot be opened.
        """
        path = Path(run_dir) / FILENAME
        if not create and not path.is_file():
            raise StoreError(
                f"no Experiment A results in {run_dir}: run `causalverify papers run` first"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(
                path,
                schema=SCHEMA,
                tables=frozenset({"meta", *KEYS}),
                what="Experiment A store",
                version=SCHEMA_VERSION,
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the Experiment A store {path}: {exc}") from exc
        return cls(path, conn)

    def meta(self) -> dict[str, Any]:
        """All metadata entries."""
        rows = self._conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def set_meta(self, values: dict[str, Any]) -> None:
        """Upsert metadata entries (JSON values)."""
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, sort_keys=True)) for k, v in values.items()],
            )

    def put(self, table: Table, key: tuple[str, ...], exchange: Exchange) -> None:
        """Store one exchange (upsert) in its own transaction."""
        keys = KEYS[table]
        if len(key) != len(keys):
            raise ValueError(f"{table} keys are {keys}, got {key}")
        marks = ", ".join("?" * (len(keys) + 2))
        with self._conn:
            self._conn.execute(
                f"INSERT OR REPLACE INTO {table} ({', '.join(keys)}, status, record) "
                f"VALUES ({marks})",
                (*key, exchange.status, exchange.model_dump_json()),
            )

    def statuses(self, table: Table) -> dict[tuple[str, ...], str]:
        """``key -> status`` of every stored row."""
        cols = ", ".join(KEYS[table])
        rows = self._conn.execute(f"SELECT {cols}, status FROM {table}").fetchall()
        return {tuple(r[:-1]): r[-1] for r in rows}

    def rows(self, table: Table) -> list[tuple[tuple[str, ...], Exchange]]:
        """Every row as ``(key, exchange)``, ordered by key."""
        cols = ", ".join(KEYS[table])
        rows = self._conn.execute(f"SELECT {cols}, record FROM {table} ORDER BY {cols}").fetchall()
        return [(tuple(r[:-1]), Exchange.model_validate_json(r[-1])) for r in rows]

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> PaperStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

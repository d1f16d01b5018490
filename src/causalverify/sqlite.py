"""The one way every database of ours is opened: the run store, the Experiment A store and the
response cache share these SQLite settings and keep a schema version.

At the bottom of the layers (it imports only ``errors``), so every package may use it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from causalverify.errors import StoreError


def connect(
    path: Path, *, schema: str, tables: frozenset[str], what: str, version: int
) -> sqlite3.Connection:
    """Open a database with the one set of settings every database of ours uses.

    WAL journal (readers never block the writer), ``synchronous=FULL`` (a committed row
    survives a power cut, not only a crash), a 30 s busy timeout, a connection usable from the
    thread that writes, and the schema version in ``PRAGMA user_version``: missing tables are
    created, a newer or unknown version is refused.

    Raises
    ------
    StoreError
        If the schema version is not ``version``.
    sqlite3.DatabaseError
        If the file is not an SQLite database.
    """
    conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
    conn.execute("PRAGMA synchronous=FULL")
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if mode != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    ensure_schema(conn, schema=schema, tables=tables, what=what, version=version)
    return conn


def ensure_schema(
    conn: sqlite3.Connection, *, schema: str, tables: frozenset[str], what: str, version: int
) -> None:
    """Check the schema version and create missing tables (writing only when something is missing)."""
    (found,) = conn.execute("PRAGMA user_version").fetchone()
    if found not in (0, version):
        raise StoreError(f"{what} schema version {found} is not supported (expected {version})")
    query = "SELECT name FROM sqlite_master WHERE type='table'"
    present = {name for (name,) in conn.execute(query)}
    if found == version and present >= tables:
        return
    with conn:
        conn.executescript(schema)
        conn.execute(f"PRAGMA user_version = {version}")

"""Tables of the run store besides ``meta`` and ``cells`` (calibration, Experiment A, ...).

They are exported as they are, whatever their schema: one JSON Lines file per table under
``records/tables/``, rows ordered by every column, with the ``CREATE`` statements recorded in
``release.json`` so that :func:`~causalverify.release.unfreeze` can restore them. A run without
such tables exports nothing. Databases kept beside the run store (:data:`SIDE_DATABASES`) are
exported whole, the same way.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Final

from causalverify.release._layout import TABLES_DIR, dumps_line, write_text
from causalverify.release._records import read_jsonl

#: tables owned by the run store itself (exported as cell records instead)
STORE_TABLES: Final = frozenset({"meta", "cells"})

#: databases kept beside the run store (file name -> release folder of their tables);
#: ``papers.sqlite`` holds Experiment A and the RID ablation
SIDE_DATABASES: Final[dict[str, str]] = {"papers.sqlite": "records/papers"}


def export_tables(
    database: Path, root: Path, *, folder: str = TABLES_DIR, skip: frozenset[str] = STORE_TABLES
) -> dict[str, dict[str, Any]]:
    """Write every table of ``database`` but ``skip`` under ``root/folder``; describe them.

    Returns
    -------
    dict
        ``name -> {"file", "rows", "columns", "sql", "indexes"}``, sorted by name; empty when the
        store has no extra table.
    """
    conn = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        described: dict[str, dict[str, Any]] = {}
        for name, sql in tables:
            if name in skip:
                continue
            described[name] = _export_one(conn, name, sql, root, folder)
        return described
    finally:
        conn.close()


def _export_one(
    conn: sqlite3.Connection, name: str, sql: str, root: Path, folder: str
) -> dict[str, Any]:
    quoted = _quote(name)
    cursor = conn.execute(f"SELECT * FROM {quoted} LIMIT 0")
    columns = [d[0] for d in cursor.description]
    order = ", ".join(str(i + 1) for i in range(len(columns)))
    rows = conn.execute(f"SELECT * FROM {quoted} ORDER BY {order}").fetchall()
    lines = [dumps_line(dict(zip(columns, map(_plain, row), strict=True))) + "\n" for row in rows]
    rel = f"{folder}/{name}.jsonl"
    write_text(root / rel, "".join(lines))
    indexes = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
        "AND sql IS NOT NULL ORDER BY name",
        (name,),
    ).fetchall()
    return {
        "file": rel,
        "rows": len(rows),
        "columns": columns,
        "sql": sql,
        "indexes": [row[0] for row in indexes],
    }


def import_tables(conn: sqlite3.Connection, root: Path, tables: dict[str, dict[str, Any]]) -> None:
    """Recreate exported tables (schema, indexes and rows) in an open run store database."""
    with conn:
        for name, info in sorted(tables.items()):
            # the run store may create some of these tables itself; keep its definition then
            if not _exists(conn, "table", name):
                conn.execute(str(info["sql"]))
                for index_sql in info.get("indexes", []):
                    conn.execute(str(index_sql))
            columns = list(info["columns"])
            marks = ", ".join("?" for _ in columns)
            names = ", ".join(_quote(c) for c in columns)
            rows = [[row.get(c) for c in columns] for _, row in read_jsonl(root, str(info["file"]))]
            conn.executemany(f"INSERT INTO {_quote(name)} ({names}) VALUES ({marks})", rows)


def _exists(conn: sqlite3.Connection, kind: str, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)
    ).fetchone()
    return row is not None


def _plain(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'

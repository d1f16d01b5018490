"""A persistent response cache, so that a rerun never pays twice for the same answer.

Keys are the SHA-256 of the canonical JSON of (provider kind, model, base URL, messages, options
that change the answer, sample). Values are :class:`ModelResponse` records. Error responses are
never stored; truncated answers are (they are real answers). A hit comes back with
``cached=True`` and ``cost_usd=0``; the cost originally paid stays in the table (``cost_usd``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from causalverify.errors import SetupError, StoreError
from causalverify.records import Message, ModelResponse
from causalverify.sqlite import connect

#: version of the response cache's schema (``PRAGMA user_version``)
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    cost_usd REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$CAUSALVERIFY_CACHE_DIR/responses.sqlite``, else ``~/.cache/causalverify/responses.sqlite``."""
    root = os.environ.get("CAUSALVERIFY_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "causalverify"
    return base / "responses.sqlite"


def cache_key(
    *,
    kind: str,
    model: str,
    base_url: str | None,
    messages: Sequence[Message],
    options: dict[str, Any],
    sample: int = 0,
) -> str:
    """SHA-256 hex digest of the canonical JSON of everything that determines an answer."""
    payload = {
        "kind": kind,
        "model": model,
        "base_url": base_url,
        "messages": [m.model_dump(mode="json") for m in messages],
        "options": options,
        "sample": sample,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite (WAL) store of model responses; safe to share between threads.

    Parameters
    ----------
    path
        Database file; created with its parent folders. ``None`` uses :func:`default_cache_path`.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = connect(
                self.path,
                schema=_SCHEMA,
                tables=frozenset({"responses"}),
                what="response cache",
                version=SCHEMA_VERSION,
            )
        except (OSError, sqlite3.Error, StoreError) as exc:
            raise SetupError(f"cannot open the response cache at {self.path}: {exc}") from exc
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}

    def key_lock(self, key: str) -> threading.Lock:
        """A lock per key, so concurrent callers of the same prompt pay once."""
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def get(self, key: str) -> ModelResponse | None:
        """The stored response for ``key`` as a hit (``cached=True``, zero cost), or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        stored = ModelResponse.model_validate_json(row[0])
        return stored.model_copy(update={"cached": True, "cost_usd": 0.0})

    def put(self, key: str, *, provider: str, response: ModelResponse) -> bool:
        """Store ``response`` unless it is an error; return whether it was stored."""
        if response.error is not None or response.content is None:
            return False
        record = response.model_copy(update={"cached": False})
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, provider, model, response, cost_usd) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, provider, response.model or "", record.model_dump_json(), response.cost_usd),
            )
        return True

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Reading cells from a run folder or a release through one interface, and unfreezing a release."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from causalverify.errors import StoreError
from causalverify.records import CellRecord, RunMeta
from causalverify.release._layout import RELEASE_FILE, RELEASE_SCHEMA, SUITE_DIR, is_release
from causalverify.release._records import read_records
from causalverify.release._tables import SIDE_DATABASES, import_tables
from causalverify.store import cells_frame
from causalverify.store.sqlite import STORE_FILE, RunStore


class CellsSource(Protocol):
    """Anything that yields stored cells and the run metadata (a run store or a release)."""

    def meta(self) -> dict[str, Any]: ...

    def run_meta(self) -> RunMeta: ...

    def iter_cells(self) -> Iterator[CellRecord]: ...

    def close(self) -> None: ...

    def __enter__(self) -> CellsSource: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


def read_release_index(root: Path) -> dict[str, Any]:
    """Read and check ``release.json``.

    Raises
    ------
    StoreError
        If the file is missing, not JSON, or of another schema.
    """
    path = Path(root) / RELEASE_FILE
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{root} is not a release: {RELEASE_FILE} is missing") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise StoreError(f"{path} is not readable: {exc}") from None
    if not isinstance(index, dict) or index.get("schema") != RELEASE_SCHEMA:
        found = index.get("schema") if isinstance(index, dict) else None
        raise StoreError(f"{path}: schema {found!r} is not supported (expected {RELEASE_SCHEMA})")
    return index


class ReleaseSource:
    """The cells and metadata of a release folder, read-only.

    Use :func:`open_cells_source`. Nothing in the release folder is ever written.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.index = read_release_index(self.root)

    def meta(self) -> dict[str, Any]:
        """The run metadata as frozen (``suite_path`` is the release's ``suite`` folder)."""
        meta: dict[str, Any] = dict(self.index.get("run", {}))
        return dict(sorted(meta.items()))

    def run_meta(self) -> RunMeta:
        """The run metadata as frozen, typed."""
        return RunMeta.of(self.meta())

    def iter_cells(self) -> Iterator[CellRecord]:
        """Every cell, ordered by scenario id, model, language and sample."""
        yield from read_records(self.root)

    def count_cells(self) -> int:
        """The number of cells in the release."""
        return int(self.index.get("counts", {}).get("cells", 0))

    def close(self) -> None:
        """Nothing to release (kept for symmetry with the run store)."""

    def __enter__(self) -> ReleaseSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_cells_source(path: Path) -> CellsSource:
    """Open a run folder's store, or a release folder read-only.

    Parameters
    ----------
    path
        A run folder (``run.sqlite``) or a release written by ``causalverify freeze``.

    Raises
    ------
    StoreError
        If ``path`` is neither.
    """
    path = Path(path)
    if is_release(path):
        return ReleaseSource(path)
    return RunStore.open(path)


def unfreeze(release: Path, run_dir: Path, *, records: Iterable[CellRecord] | None = None) -> Path:
    """Load a release into a new run store, so every run-folder command works on it.

    The run metadata is restored with ``suite_path`` pointing at the release's suite, the cells
    are written in store order, extra tables (calibration) are recreated, and so are the
    databases kept beside the run store (``papers.sqlite``: Experiment A).
    ``records``, when given, are written instead of the release's cells (``verify`` passes the
    rescored cells).

    Returns
    -------
    pathlib.Path
        ``run_dir``.

    Raises
    ------
    StoreError
        If ``release`` is not a release or ``run_dir`` already holds cells.
    """
    source = ReleaseSource(Path(release))
    with RunStore.open(run_dir, create=True) as store:
        if store.count_cells():
            raise StoreError(f"{run_dir} already holds a run; unfreeze into a new folder")
        meta = source.run_meta().with_entries(suite_path=str((source.root / SUITE_DIR).resolve()))
        cells = source.iter_cells() if records is None else records
        store.put_cells(cells, meta=meta.stored())
    databases = {STORE_FILE: source.index.get("tables", {}), **source.index.get("databases", {})}
    for database, tables in databases.items():
        if database != STORE_FILE and database not in SIDE_DATABASES:
            raise StoreError(f"{RELEASE_FILE} names an unknown database {database!r}")
        if tables or database != STORE_FILE:
            conn = sqlite3.connect(Path(run_dir) / database)
            try:
                import_tables(conn, source.root, tables)
            finally:
                conn.close()
    return Path(run_dir)


@contextmanager
def run_dir_for(path: Path) -> Iterator[Path]:
    """Yield a run folder for ``path``: itself, or a temporary unfrozen copy of a release.

    Code that needs a real run store (the report reads calibration rows from it, for example)
    works on a release through this; the release itself is never written.
    """
    path = Path(path)
    if not is_release(path):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="cv-release-") as tmp:
        yield unfreeze(path, Path(tmp) / "run")


def load_cells(path: Path) -> tuple[Any, RunMeta]:
    """The per-cell frame (``causalverify.store.cells_frame``) and metadata of a run folder or
    of a frozen release.

    Raises
    ------
    StoreError
        If ``path`` holds neither a run store nor a release.
    """
    with open_cells_source(path) as source:
        return cells_frame(source.iter_cells()), source.run_meta()

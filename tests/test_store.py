"""The run store: schema, transactions, durability, threads, and the per-cell table."""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from causalverify.errors import CausalVerifyError, StoreError
from causalverify.records import Declaration
from causalverify.sandbox.base import ExecResult
from causalverify.store import (
    BOUND_COLUMNS,
    COLUMNS,
    INFERENCE_COLUMNS,
    CellKey,
    CellRecord,
    CellStatus,
    CodeRecord,
    ExtractionRecord,
    Message,
    ModelResponse,
    RunStore,
    ScoreRecord,
    cells_frame,
    stable_view,
)


def make_record(
    scenario_id: str = "s001",
    model: str = "reference/textbook",
    *,
    language: str = "r",
    sample: int = 0,
    status: CellStatus = "correct",
    estimate: float | None = 2.0,
    canonical: float = 2.1,
    unscoreable: bool = False,
    scored: bool = True,
) -> CellRecord:
    """A plausible executed cell record."""
    execution = ExecResult(
        status="ok",
        exit_code=0,
        stdout=f"ESTIMATE: {estimate}\n",
        stderr="",
        wall_seconds=1.5,
        cpu_seconds=1.2,
    )
    scores = ScoreRecord(
        profile="default",
        tolerance=0.5,
        extractor="deterministic",
        L1=True,
        L2a=True,
        L2b=True,
        L2b_plus=None if unscoreable else status == "correct",
        rel_error=None
        if estimate is None or unscoreable
        else abs(estimate - canonical) / abs(canonical),
        unscoreable=unscoreable,
        estimate=estimate,
    )
    return CellRecord(
        key=CellKey(scenario_id=scenario_id, model=model, language=language, sample=sample),  # type: ignore[arg-type]
        family="did",
        difficulty="easy",
        beta=2.0,
        canonical=canonical,
        protocol="default",
        prompt=[Message(role="user", content="estimate it")],
        prompt_sha256="ab" * 32,
        response=ModelResponse(
            content="```r\ncat(1)\n```",
            input_tokens=10,
            output_tokens=20,
            cost_usd=0.001,
            latency_seconds=0.3,
        ),
        code=CodeRecord(language=language, code="cat(1)", block_index=0, parses=True),  # type: ignore[arg-type]
        execution=execution,
        extraction=ExtractionRecord(method="deterministic", value=estimate, rule="estimate_line"),
        scores=scores if scored else None,
        status=status,
        timings={"total": 1.7},
    )


def test_open_requires_create(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store"):
        RunStore.open(tmp_path / "run")
    assert not (tmp_path / "run").exists()
    with RunStore.open(tmp_path / "run", create=True) as store:
        assert store.count_cells() == 0
        assert store.meta() == {}
    conn = sqlite3.connect(tmp_path / "run" / "run.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "run.sqlite").write_bytes(b"this is not sqlite at all, just text" * 50)
    with pytest.raises(StoreError, match="not a readable run store"):
        RunStore.open(tmp_path)


def test_put_get_upsert_and_order(tmp_path: Path) -> None:
    with RunStore.open(tmp_path, create=True) as store:
        second = make_record("s002", language="python")
        first = make_record("s001", status="wrong", estimate=9.0)
        store.put_cell(second)
        store.put_cell(first)
        assert store.get_cell(first.key) == first
        assert store.has_cell(second.key)
        assert not store.has_cell(CellKey(scenario_id="s001", model="x", language="r"))
        assert store.get_cell(CellKey(scenario_id="s009", model="x", language="r")) is None
        replaced = make_record("s001", status="correct", estimate=2.0)
        store.put_cell(replaced)
        assert store.count_cells() == 2
        assert [r.key.scenario_id for r in store.iter_cells()] == ["s001", "s002"]
        assert store.get_cell(first.key) == replaced
        assert store.statuses() == {
            ("s001", "reference/textbook", "r", 0): "correct",
            ("s002", "reference/textbook", "python", 0): "correct",
        }


def test_meta_merges_and_round_trips(tmp_path: Path) -> None:
    with RunStore.open(tmp_path, create=True) as store:
        store.set_meta({"models": ["a", "b"], "tolerance": 0.5, "git_commit": None})
        store.set_meta({"models": ["a", "b", "c"], "protocol": "default"})
    with RunStore.open(tmp_path) as store:
        assert store.meta() == {
            "git_commit": None,
            "models": ["a", "b", "c"],
            "protocol": "default",
            "tolerance": 0.5,
        }


def test_threads_share_one_store(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path, create=True)

    def write(offset: int) -> None:
        for i in range(15):
            store.put_cell(make_record(f"s{offset + i:03d}"))

    threads = [threading.Thread(target=write, args=(k * 100,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.count_cells() == 60
    seqs = store._conn.execute("SELECT seq FROM cells ORDER BY seq").fetchall()
    assert [s for (s,) in seqs] == list(range(1, 61))
    store.close()
    store.close()


_KILL_SCRIPT = """
import os, signal, sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from causalverify.store import RunStore
from test_store import make_record
store = RunStore.open(Path(sys.argv[1]), create=True)
store.put_cell(make_record("s001"))
store.put_cell(make_record("s002", status="wrong", estimate=7.0))
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_committed_cells_survive_sigkill(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_SCRIPT, str(tmp_path), str(Path(__file__).parent)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (tmp_path / "run.sqlite-wal").exists()  # the data lives in the WAL, not yet merged
    with RunStore.open(tmp_path) as store:
        assert store.count_cells() == 2
        assert store.get_cell(make_record("s002").key) == make_record(
            "s002", status="wrong", estimate=7.0
        )
    assert os.path.getsize(tmp_path / "run.sqlite") > 0


def test_stable_view_ignores_only_volatile_fields() -> None:
    record = make_record()
    slower = record.model_copy(
        update={
            "timings": {"total": 99.0},
            "response": record.response.model_copy(update={"cached": True, "latency_seconds": 5}),  # type: ignore[union-attr]
            "execution": record.execution.model_copy(
                update={"wall_seconds": 8.0, "cpu_seconds": 7.0}
            ),  # type: ignore[union-attr]
        }
    )
    assert stable_view(slower) == stable_view(record)
    other = record.model_copy(update={"status": "wrong"})
    assert stable_view(other) != stable_view(record)


def test_cells_frame_columns_and_values() -> None:
    records = [
        make_record("s002", status="wrong", estimate=9.0),
        make_record("s001", status="correct", estimate=2.0),
        make_record("s003", status="unscoreable", estimate=1.0, canonical=0.0, unscoreable=True),
        make_record("s004", status="no_estimate", estimate=None),
        make_record("s005", status="api_error", estimate=None, scored=False).model_copy(
            update={
                "response": ModelResponse(content=None, error="HTTP 500"),
                "code": None,
                "execution": None,
                "extraction": None,
            }
        ),
        _undecided(make_record("s006", status="undecided", estimate=None)),
    ]
    frame = cells_frame(records)
    assert tuple(frame.columns) == (*COLUMNS, *BOUND_COLUMNS, *INFERENCE_COLUMNS)
    assert list(frame["scenario_id"]) == ["s001", "s002", "s003", "s004", "s005", "s006"]
    assert list(frame["method"].unique()) == ["DID"]
    assert frame["L1"].dtype == "int64" and frame["L2b_plus"].dtype == "float64"
    by_id = frame.set_index("scenario_id")
    assert by_id.loc["s001", "L2b_plus"] == 1.0
    assert by_id.loc["s002", "L2b_plus"] == 0.0
    assert by_id.loc["s002", "rel_error"] == pytest.approx(6.9 / 2.1)
    assert math.isnan(by_id.loc["s003", "L2b_plus"]) and by_id.loc["s003", "unscoreable"] == 1
    assert math.isnan(by_id.loc["s004", "estimated"]) and by_id.loc["s004", "L2b_plus"] == 0.0
    assert by_id.loc["s005", "L1"] == 0 and by_id.loc["s005", "L2b"] == 0
    assert pd.isna(by_id.loc["s005", "exec_status"])
    assert by_id.loc["s001", "exec_status"] == "ok"
    assert frame["input_tokens"].sum() == 50 and frame["cost_usd"].sum() == pytest.approx(0.005)
    # an undecided cell: flagged, L2b+ 0 as its lower bound, 1 as its upper bound
    assert list(frame["undecided"]) == [0, 0, 0, 0, 0, 1]
    assert by_id.loc["s006", "L2b_plus"] == 0.0
    assert (by_id.loc["s006", "L2b_plus_lower"], by_id.loc["s006", "L2b_plus_upper"]) == (0, 1)
    assert frame["L2b_plus_upper"].notna().sum() == 1
    assert list(frame["declare_asked"]) == [0, 0, 0, 0, 0, 1]
    assert list(frame["declare_accepted"]) == [0] * 6


def _undecided(record: CellRecord) -> CellRecord:
    """``record`` as an undecided cell whose declaration was asked and rejected."""
    assert record.scores is not None
    declaration = Declaration(
        request=Message(role="user", content="Which number printed above is your estimate?"),
        request_sha256="0" * 64,
        token="9.9",
        reason="9.9 is not printed in stdout (at that precision)",
    )
    scores = record.scores.model_copy(update={"L2b_plus": False, "L2b_plus_upper": True})
    return record.model_copy(update={"scores": scores, "declaration": declaration})


def test_cells_frame_empty() -> None:
    frame = cells_frame([])
    assert (
        tuple(frame.columns) == (*COLUMNS, *BOUND_COLUMNS, *INFERENCE_COLUMNS) and len(frame) == 0
    )


def test_concurrent_creation_and_reading(tmp_path: Path) -> None:
    """Writers and readers opening a store that is being created never see a half-made file."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def writer(i: int) -> None:
        try:
            barrier.wait()
            with RunStore.open(tmp_path / "run", create=True) as store:
                store.put_cell(make_record(f"s{i:03d}"))
        except BaseException as exc:  # collected and re-raised below
            errors.append(exc)

    def reader() -> None:
        barrier.wait()
        for _ in range(200):
            try:
                with RunStore.open(tmp_path / "run") as store:
                    store.count_cells()
            except StoreError as exc:
                if "no run store" not in str(exc):
                    errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with RunStore.open(tmp_path / "run") as store:
        assert store.count_cells() == 6
    assert sorted(p.name for p in (tmp_path / "run").iterdir() if p.name.startswith(".")) == []


def test_a_second_writer_stops_with_a_message(tmp_path: Path) -> None:
    from causalverify.store.sqlite import writer_lock

    with (
        writer_lock(tmp_path / "run"),
        pytest.raises(StoreError, match=rf"another causalverify process \(pid {os.getpid()}\)"),
        writer_lock(tmp_path / "run"),
    ):
        pass
    with writer_lock(tmp_path / "run"):  # released when the holder finishes
        pass


_KILL_IN_BATCH = """
import os, signal, sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
import causalverify.store.sqlite as sqlite_store
from causalverify.store import RunStore
from test_store import make_record
store = RunStore.open(Path(sys.argv[1]))
records = [make_record(f"s{i:03d}", status="wrong", estimate=9.0) for i in range(40)]

def die(values):  # runs inside the batch's transaction, after its cells were written
    os.kill(os.getpid(), signal.SIGKILL)

sqlite_store._meta_rows = die
store.put_cells(records, meta={"rescored": {"profile": "paper"}})
"""


def test_a_batch_is_all_or_nothing_under_sigkill(tmp_path: Path) -> None:
    """Rescoring writes every cell and its note in one transaction: killed inside it, the
    store is as it was; completed, every cell is written with seq numbers as one by one."""
    before = [make_record(f"s{i:03d}") for i in range(40)]
    with RunStore.open(tmp_path, create=True) as store:
        store.put_cells(before, meta={"profile": "default"})
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_IN_BATCH, str(tmp_path), str(Path(__file__).parent)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with RunStore.open(tmp_path) as store:
        assert list(store.iter_cells()) == before
        assert "rescored" not in store.meta()
        after = [make_record(f"s{i:03d}", status="wrong", estimate=9.0) for i in range(40)]
        assert store.put_cells(after, meta={"rescored": None}) == 40
        assert list(store.iter_cells()) == after and store.meta()["rescored"] is None
        seqs = store._conn.execute("SELECT seq FROM cells ORDER BY scenario_id").fetchall()
        assert [s for (s,) in seqs] == list(range(41, 81))


def test_every_database_has_the_same_settings_and_a_schema_version(tmp_path: Path) -> None:
    """The run store, the Experiment A store and the response cache open one way."""
    from causalverify.models import ResponseCache
    from causalverify.papers.store import PaperStore

    run = RunStore.open(tmp_path / "run", create=True)
    papers = PaperStore.open(tmp_path / "run", create=True)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    for conn in (run._conn, papers._conn, cache._conn):
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)
    run.close()
    papers.close()
    cache.close()
    for path, opener, what in (
        (tmp_path / "run" / "run.sqlite", lambda: RunStore.open(tmp_path / "run"), "run store"),
        (tmp_path / "run" / "papers.sqlite", lambda: PaperStore.open(tmp_path / "run"), "Experiment A"),
        (tmp_path / "cache.sqlite", lambda: ResponseCache(tmp_path / "cache.sqlite"), "response cache"),
    ):  # fmt: skip
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA user_version = 7")
        with pytest.raises(CausalVerifyError, match=f"{what}.*schema version 7 is not supported"):
            opener()

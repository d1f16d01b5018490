"""Unit tests of the release building blocks: record files, SHA256SUMS, Croissant, extra tables.

These need neither R nor the sandbox; the end-to-end round trip is in ``test_release.py``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from causalverify.errors import StoreError
from causalverify.prompts import messages_sha256
from causalverify.release import is_release, open_cells_source, read_records
from causalverify.release._croissant import CELL_FIELDS, SCENARIO_FIELDS, build_croissant
from causalverify.release._hashes import check_sums, read_sums, write_sums
from causalverify.release._layout import CELLS_FILE, PROMPTS_FILE, RESPONSES_FILE, sha256_file
from causalverify.release._records import write_records
from causalverify.release._source import read_release_index
from causalverify.release._tables import export_tables, import_tables
from causalverify.sandbox import ExecResult
from causalverify.store import (
    BOUND_COLUMNS,
    COLUMNS,
    INFERENCE_COLUMNS,
    CellKey,
    CellRecord,
    CodeRecord,
    ExtractionRecord,
    Message,
    ModelResponse,
    RunStore,
)


def make_record(scenario_id: str, model: str, *, stdout: str = "ATT: 1.25\n") -> CellRecord:
    messages = [
        Message(role="system", content="You are an analyst."),
        Message(role="user", content=f"Analyse data/{scenario_id}.csv — effect of the policy?"),
    ]
    return CellRecord(
        key=CellKey(scenario_id=scenario_id, model=model, language="r"),
        family="did",
        difficulty="easy",
        beta=1.0,
        canonical=1.2,
        protocol="default",
        prompt=messages,
        prompt_sha256=messages_sha256(messages),
        response=ModelResponse(content="```r\nprint(1)\n```", input_tokens=10, output_tokens=5),
        code=CodeRecord(language="r", code="print(1)", block_index=0, parses=True),
        execution=ExecResult(
            status="ok", exit_code=0, stdout=stdout, stderr="", wall_seconds=0.5, cpu_seconds=0.25
        ),
        extraction=ExtractionRecord(method="deterministic", value=1.25, rule="labelled", line=1),
        status="correct",
        timings={"model": 0.001},
    )


RECORDS = [
    make_record("s001", "reference/naive"),
    make_record("s001", "reference/textbook", stdout="Ünïcode ✓ 1.25\n"),
    make_record("s002", "reference/textbook"),
]


def test_record_files_round_trip_and_share_prompts(tmp_path: Path) -> None:
    write_records(tmp_path, RECORDS, limits={"wall_seconds": 120.0})
    assert read_records(tmp_path) == RECORDS
    prompts = (tmp_path / PROMPTS_FILE).read_text(encoding="utf-8").splitlines()
    assert len(prompts) == 2  # s001 is asked of two models with one prompt
    executions = (tmp_path / "records/executions.jsonl").read_text(encoding="utf-8")
    assert '"limits":{"wall_seconds":120.0}' in executions
    first = (tmp_path / CELLS_FILE).read_bytes()
    write_records(tmp_path, RECORDS, limits={"wall_seconds": 120.0})
    assert (tmp_path / CELLS_FILE).read_bytes() == first


def test_record_files_that_disagree_are_named(tmp_path: Path) -> None:
    write_records(tmp_path, RECORDS, limits=None)
    lines = (tmp_path / RESPONSES_FILE).read_text(encoding="utf-8").splitlines()
    (tmp_path / RESPONSES_FILE).write_text("\n".join([lines[1], lines[0], lines[2]]) + "\n")
    with pytest.raises(StoreError, match=r"responses\.jsonl line 1"):
        read_records(tmp_path)
    (tmp_path / RESPONSES_FILE).write_text("\n".join(lines[:2]) + "\n")
    with pytest.raises(StoreError, match=r"responses\.jsonl holds 2 cells"):
        read_records(tmp_path)
    (tmp_path / PROMPTS_FILE).unlink()
    with pytest.raises(StoreError, match=r"prompts\.jsonl is missing"):
        read_records(tmp_path)


def _tree(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "a.csv").write_text("x,y\n1,2\n")
    (root / "sub" / "b.json").write_text('{"k": 1}\n')
    (root / "sub" / "name with space.md").write_text("# hi\n")


def test_sums_cover_every_file_and_sha256sum_accepts_them(tmp_path: Path) -> None:
    _tree(tmp_path)
    digest = write_sums(tmp_path)
    assert digest == sha256_file(tmp_path / "SHA256SUMS")
    listed, problems = read_sums(tmp_path)
    assert problems == [] and sorted(listed) == ["a.csv", "sub/b.json", "sub/name with space.md"]
    assert check_sums(tmp_path) == (3, [])
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum is not installed; the manifest itself was checked above")
    done = subprocess.run(
        ["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_changed_missing_and_extra_files_are_named(tmp_path: Path) -> None:
    _tree(tmp_path)
    write_sums(tmp_path)
    (tmp_path / "a.csv").write_text("x,y\n1,3\n")
    (tmp_path / "sub" / "b.json").unlink()
    (tmp_path / "sub" / "new.txt").write_text("hello\n")
    _, problems = check_sums(tmp_path)
    assert problems == [
        "a.csv: sha256 differs from SHA256SUMS (file changed)",
        "sub/b.json: missing (listed in SHA256SUMS)",
        "sub/new.txt: extra file, not listed in SHA256SUMS",
    ]


def test_a_changed_manifest_entry_names_the_manifest(tmp_path: Path) -> None:
    _tree(tmp_path)
    sha = sha256_file(tmp_path / "a.csv")
    document = build_croissant(
        name="t", description="d", license_id="MIT", version="0", files=[("a.csv", sha)]
    )
    (tmp_path / "croissant.json").write_text(json.dumps(document))
    write_sums(tmp_path)
    sums = (tmp_path / "SHA256SUMS").read_text()
    forged = sums.replace(sha, ("0" if sha[0] != "0" else "1") + sha[1:])
    (tmp_path / "SHA256SUMS").write_text(forged)
    _, problems = check_sums(tmp_path)
    assert problems == [
        "SHA256SUMS: the entry for a.csv was changed (a.csv still matches croissant.json)"
    ]


def test_malformed_and_escaping_manifest_lines_are_reported(tmp_path: Path) -> None:
    _tree(tmp_path)
    write_sums(tmp_path)
    with (tmp_path / "SHA256SUMS").open("a") as handle:
        handle.write("not a line\n" + "0" * 64 + "  ../outside\n" + "0" * 64 + "  a.csv\n")
    _, problems = read_sums(tmp_path)
    assert problems == [
        "SHA256SUMS: line 4 is malformed",
        "SHA256SUMS: line 5 names a path outside the folder: ../outside",
        "SHA256SUMS: a.csv is listed twice",
    ]
    (tmp_path / "SHA256SUMS").unlink()
    assert check_sums(tmp_path)[1][0] == "SHA256SUMS: missing"


def test_croissant_fields_are_the_columns_of_the_tables() -> None:
    # the columns of scores.csv
    assert tuple(CELL_FIELDS) == (*COLUMNS, *BOUND_COLUMNS, *INFERENCE_COLUMNS)
    document = build_croissant(
        name="n", description="d", license_id="CC-BY-4.0", version="1", files=[("x.csv", "ab")]
    )
    assert document["@type"] == "sc:Dataset"
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert document["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert document["distribution"][0]["encodingFormat"] == "text/csv"
    cells, scenarios = document["recordSet"]
    assert [f["name"] for f in cells["field"]] == [*COLUMNS, *BOUND_COLUMNS, *INFERENCE_COLUMNS]
    assert [f["source"]["extract"]["column"] for f in scenarios["field"]] == list(SCENARIO_FIELDS)


def test_extra_store_tables_survive_export_and_import(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "run", create=True) as store:
        store.put_cell(RECORDS[0])
    conn = sqlite3.connect(tmp_path / "run" / "run.sqlite")
    with conn:
        conn.execute("CREATE TABLE experiment_a (paper TEXT PRIMARY KEY, label TEXT, n INTEGER)")
        conn.execute("CREATE INDEX experiment_a_label ON experiment_a(label)")
        conn.executemany(
            "INSERT INTO experiment_a VALUES (?, ?, ?)", [("p2", "IV", 3), ("p1", None, 1)]
        )
    conn.close()
    tables = export_tables(tmp_path / "run" / "run.sqlite", tmp_path / "rel")
    assert tables["experiment_a"]["rows"] == 2 and "cells" not in tables
    lines = (tmp_path / "rel" / "records/tables/experiment_a.jsonl").read_text().splitlines()
    assert [json.loads(line)["paper"] for line in lines] == ["p1", "p2"]
    target = sqlite3.connect(tmp_path / "copy.sqlite")
    import_tables(target, tmp_path / "rel", tables)
    rows = target.execute("SELECT * FROM experiment_a ORDER BY paper").fetchall()
    indexes = target.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    target.close()
    assert rows == [("p1", None, 1), ("p2", "IV", 3)]
    assert ("experiment_a_label",) in indexes


def test_sources_refuse_what_is_neither_a_run_nor_a_release(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store"):
        open_cells_source(tmp_path)
    (tmp_path / "release.json").write_text('{"schema": "something-else/9"}')
    assert is_release(tmp_path)
    with pytest.raises(StoreError, match="not supported"):
        read_release_index(tmp_path)


def test_every_field_of_a_cell_record_is_kept_by_a_release() -> None:
    """A field missing from the release's parts is lost on the way, and rescoring a release then
    differs from the run (the canonical inference was, for the L2c layer)."""
    from causalverify.records import CellRecord
    from causalverify.release._records import PARTS

    kept = {field for fields in PARTS.values() for field in fields} | {"key", "prompt", "turns"}
    assert set(CellRecord.model_fields) <= kept, set(CellRecord.model_fields) - kept

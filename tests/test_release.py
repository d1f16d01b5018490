"""Frozen releases end to end: run the reference panel in the real sandbox, freeze, verify.

One small run (four agents, R, the smoke suite: 16 cells, 12 of them executed, plus the offline
calibration arm and Experiment A answers and labels) is frozen once per module; every test that
changes a release works on its own copy.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.models import ModelAccess
from causalverify.release import (
    ReportSettings,
    freeze_run,
    read_records,
    unfreeze,
    verify_release,
)
from causalverify.release._hashes import check_sums, write_sums
from causalverify.release._layout import release_files
from causalverify.runner import RunConfig, run_benchmark
from causalverify.sandbox import environment_manifest
from causalverify.store import RunStore
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite

pytestmark = needs_r_and_sandbox

MODELS = ("reference/textbook", "reference/naive", "reference/fragile", "reference/prose")
SETTINGS = ReportSettings(seed=7, unit="model", n_resamples=50, title="Release test")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("release-run")
    config = RunConfig(
        suite_dir=smoke_suite(shared_root(tmp_path_factory)),
        out_dir=root / "run",
        models=MODELS,
        languages=("r",),
        workers=2,
        access=ModelAccess(cache_path=root / "cache.sqlite"),
        command_line=(sys.executable, "-m", "causalverify", "run", "--out", str(root / "run")),
    )
    run_benchmark(config)
    args = ["calibrate", str(config.out_dir), "--quiet", "--cache", str(root / "cache.sqlite")]
    calibrated = CliRunner().invoke(main, args)  # offline confidences: a store table to carry
    assert calibrated.exit_code == 0, calibrated.output
    cache = ["--cache", str(root / "cache.sqlite")]
    papers = ["papers", "run", str(config.out_dir), "--models", ",".join(MODELS[:2]), "--quiet"]
    labels = ["papers", "label", str(config.out_dir), "--labellers", ",".join(MODELS)]
    for command in (papers + cache, labels + cache):  # Experiment A: papers.sqlite beside the run
        done = CliRunner().invoke(main, command)
        assert done.exit_code == 0, done.output
    return config.out_dir


@pytest.fixture(scope="module")
def release(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("frozen") / "release"
    result = freeze_run(run_dir, out, report=SETTINGS)
    assert result.n_cells == 16 and result.path == out
    return out


@pytest.fixture
def release_copy(release: Path, tmp_path: Path) -> Path:
    target = tmp_path / "release"
    shutil.copytree(release, target)
    return target


def test_round_trip_verifies(release: Path, run_dir: Path) -> None:
    report = verify_release(release)
    assert report.ok, report.problems
    assert report.n_cells == 16 and report.n_files == len(release_files(release)) - 1
    with RunStore.open(run_dir) as store:
        assert read_records(release) == list(store.iter_cells())
    for name in ("suite/data/s001.csv", "suite/scenarios/s004.json", "records/prompts.jsonl",
                 "records/responses.jsonl", "records/executions.jsonl", "scores.csv",
                 "report/summary.json", "report/index.html", "report/figures/cascade.png",
                 "ENVIRONMENT.json", "DATASHEET.md", "croissant.json"):  # fmt: skip
        assert (release / name).is_file(), name


def test_sha256sum_accepts_the_manifest(release: Path) -> None:
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum is not installed")
    done = subprocess.run(
        ["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=release, capture_output=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _rows(database: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(database)
    try:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: sorted(conn.execute(f"SELECT * FROM {n}").fetchall(), key=repr) for n in names}
    finally:
        conn.close()


def test_calibration_and_experiment_a_travel_with_the_release(release: Path, run_dir: Path) -> None:
    with RunStore.open(run_dir) as store:
        stored = list(store.iter_calibration())
    index = json.loads((release / "release.json").read_text())
    assert len(stored) == index["tables"]["calibration"]["rows"] == 16
    summary = json.loads((release / "report/summary.json").read_text())
    assert "calibration" in summary and "experiment_a" in summary
    papers = _rows(run_dir / "papers.sqlite")
    assert papers["answers"] and index["databases"]["papers.sqlite"]["answers"]["rows"] == len(
        papers["answers"]
    )
    unfrozen = unfreeze(release, release.parent / "unfrozen")
    with RunStore.open(unfrozen) as store:
        assert list(store.iter_calibration()) == stored
        assert list(store.iter_cells()) == read_records(release)
    assert _rows(unfrozen / "papers.sqlite") == papers


def test_metadata_files_hold_real_values(release: Path) -> None:
    index = json.loads((release / "release.json").read_text())
    assert index["run"]["suite_path"] == "suite" and index["run"]["models"] == list(MODELS)
    assert index["counts"]["cells"] == 16 and index["counts"]["statuses"]["no_code"] == 4
    environment = json.loads((release / "ENVIRONMENT.json").read_text())
    assert environment["freeze"]["r_version"] == environment_manifest().r_version
    assert environment["run"]["environment"]["r_version"] == environment_manifest().r_version
    assert environment["run"]["sandbox_policy"] is not None
    sheet = (release / "DATASHEET.md").read_text()
    assert "Cells (scenario x model x language x sample): 16" in sheet
    assert "| reference/prose | r | 4 | 4 | 0 | 0 | 0 |" in sheet
    croissant = json.loads((release / "croissant.json").read_text())
    sums = {}
    for line in (release / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        sums[name] = digest
    described = {f["contentUrl"]: f["sha256"] for f in croissant["distribution"]}
    assert described == {k: v for k, v in sums.items() if k != "croissant.json"}


def test_a_release_carries_no_host_path_or_user_name(release: Path, run_dir: Path) -> None:
    import getpass
    import os

    with RunStore.open(run_dir) as store:
        meta = store.meta()
    recorded = json.dumps(meta)
    host = {
        "run folder": str(run_dir.absolute()),
        "suite": str(Path(meta["suite_path"]).absolute()),
        "python prefix": sys.prefix,
        "working folder": os.getcwd(),
        "home": str(Path.home()),
        "user": f"/{getpass.getuser()}/",
    }
    assert host["run folder"] in recorded and host["python prefix"] in recorded  # there to leak
    leaks = [
        (name, kind)
        for name in release_files(release)
        for kind, text in host.items()
        if text.encode() in (release / name).read_bytes()
    ]
    assert leaks == []
    index = json.loads((release / "release.json").read_text())
    assert index["run"]["command_line"][-3:] == ["run", "--out", "<run>"]


def test_freezing_twice_gives_identical_files(release: Path, run_dir: Path, tmp_path: Path) -> None:
    again = freeze_run(run_dir, tmp_path / "again", report=SETTINGS).path
    names = release_files(release)
    assert release_files(again) == names
    different = [n for n in names if (release / n).read_bytes() != (again / n).read_bytes()]
    assert different == []


def _edit_csv(root: Path) -> str:
    path = root / "suite/data/s002.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:1] + lines[2:]))
    return "suite/data/s002.csv: sha256 differs"


def _edit_score(root: Path) -> str:
    path = root / "scores.csv"
    path.write_text(path.read_text().replace(",wrong,", ",correct,", 1))
    return "scores.csv: sha256 differs"


def _edit_manifest(root: Path) -> str:
    path = root / "SHA256SUMS"
    lines = path.read_text().splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if line.endswith("  scores.csv\n"))
    lines[target] = ("0" if lines[target][0] != "0" else "1") + lines[target][1:]
    path.write_text("".join(lines))
    return "SHA256SUMS: the entry for scores.csv was changed"


def _add_file(root: Path) -> str:
    (root / "records" / "notes.txt").write_text("added later\n")
    return "records/notes.txt: extra file"


def _remove_file(root: Path) -> str:
    (root / "records" / "responses.jsonl").unlink()
    return "records/responses.jsonl: missing"


def _break_index(root: Path) -> str:
    path = root / "release.json"
    path.write_text(path.read_text().replace('"tolerance": 0.5', '"tolerance": 5.0'))
    return "release.json: sha256 differs"


TAMPERING = [_edit_csv, _edit_score, _edit_manifest, _add_file, _remove_file, _break_index]


@pytest.mark.parametrize("tamper", TAMPERING)
def test_tampering_fails_and_names_the_file(
    release_copy: Path, tamper: Callable[[Path], str]
) -> None:
    expected = tamper(release_copy)
    report = verify_release(release_copy, rescore=False)
    assert not report.ok
    assert any(p.startswith(expected) for p in report.hash_problems), report.problems
    result = CliRunner().invoke(main, ["verify", str(release_copy), "--hashes-only"])
    assert result.exit_code == 1 and expected in result.output and "FAILED" in result.output


def test_the_published_digest_pins_the_release(release: Path) -> None:
    digest = (release / "SHA256SUMS").read_bytes()
    expected = hashlib.sha256(digest).hexdigest()
    runner = CliRunner()
    good = runner.invoke(main, ["verify", str(release), "--hashes-only", "--digest", expected])
    assert good.exit_code == 0 and expected in good.output and "verified" in good.output
    other = "0" * 64
    bad = runner.invoke(main, ["verify", str(release), "--hashes-only", "--digest", other])
    assert bad.exit_code == 1 and f"is not the expected {other}" in bad.output


def test_a_consistent_forgery_is_caught_by_rescoring(release_copy: Path) -> None:
    """Rewrite a wrong cell as correct and redo every hash: only rescoring can notice."""
    cells = release_copy / "records/cells.jsonl"
    lines = cells.read_text(encoding="utf-8").splitlines()
    target = next(i for i, line in enumerate(lines) if '"status":"wrong"' in line)
    row = json.loads(lines[target])
    row["status"] = "correct"
    row["scores"]["L2b_plus"] = True
    lines[target] = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    cells.write_text("\n".join(lines) + "\n", encoding="utf-8")
    croissant = json.loads((release_copy / "croissant.json").read_text())
    for item in croissant["distribution"]:
        if item["contentUrl"] == "records/cells.jsonl":
            item["sha256"] = hashlib.sha256(cells.read_bytes()).hexdigest()
    (release_copy / "croissant.json").write_text(
        json.dumps(croissant, sort_keys=True, indent=2) + "\n"
    )
    write_sums(release_copy)
    report = verify_release(release_copy)
    key = row["key"]
    label = f"cell {key['scenario_id']}/{key['model']}/r/0: rescoring changes status, scores"
    assert report.hash_problems == ()
    assert any(p.startswith(label) for p in report.rescore_problems), report.problems


def test_rescoring_a_release_twice_is_byte_identical(release: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    summaries = []
    for name in ("a", "b"):
        out = tmp_path / name
        scored = runner.invoke(main, ["score", str(release), "--out", str(out)])
        assert scored.exit_code == 0, scored.output
        args = ["report", str(out), "--out", str(out / "report"), "--seed", "7",
                "--resamples", "50", "--title", "Release test"]  # fmt: skip
        reported = runner.invoke(main, args)
        assert reported.exit_code == 0, reported.output
        summaries.append((out / "report" / "summary.json").read_bytes())
    assert summaries[0] == summaries[1] == (release / "report/summary.json").read_bytes()
    direct = runner.invoke(main, ["report", str(release), "--out", str(tmp_path / "c"),
                                  "--seed", "7", "--resamples", "50", "--title", "Release test"])  # fmt: skip
    assert direct.exit_code == 0, direct.output
    assert (tmp_path / "c/summary.json").read_bytes() == summaries[0]
    refused = runner.invoke(main, ["report", str(release)])
    assert refused.exit_code == 2 and "read-only" in refused.output
    assert check_sums(release)[1] == []  # nothing above wrote into the release


def test_analyze_reads_a_release(release: Path) -> None:
    result = CliRunner().invoke(main, ["analyze", str(release), "--json", "--resamples", "20"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["n_cells"] == 16


def test_reexecution_agrees_with_the_stored_executions(release: Path) -> None:
    report = verify_release(release, reexecute=True, rescore=False, workers=2)
    re = report.reexecution
    assert re is not None and report.ok, report.problems
    executed = [r for r in read_records(release) if r.execution is not None]
    assert re.n_cells == len(executed) == 12
    assert re.l2b_agree == re.value_agree == 12
    assert sum(c.l2b_now for c in re.cells) == sum(
        bool(r.scores and r.scores.L2b) for r in executed
    )


def test_freeze_and_verify_report_every_step_and_verify_takes_a_limit(
    run_dir: Path, tmp_path: Path
) -> None:
    steps: list[tuple[str, int, int | None]] = []

    def record(step: str, done: int, total: int | None) -> None:
        steps.append((step, done, total))

    freeze_run(run_dir, tmp_path / "rel", report=SETTINGS, progress=record)
    names = list(dict.fromkeys(step for step, _, _ in steps))
    assert names[0] == "copying the run store" and names[-1] == "hashing the files"
    assert "writing the report" in names
    steps.clear()
    report = verify_release(tmp_path / "rel", reexecute=True, limit=3, workers=2, progress=record)
    assert report.ok, report.problems
    assert report.reexecution is not None and report.reexecution.n_cells == 3
    names = list(dict.fromkeys(step for step, _, _ in steps))
    assert names == [
        "checking file hashes",
        "checking prompts",
        "rescoring cells and rebuilding the report",
        "re-executing cells",
    ]
    assert [(d, t) for s, d, t in steps if s == "re-executing cells"] == [(i, 3) for i in range(4)]
    # the CLI: --limit needs --reexecute, and --json prints the verification
    runner = CliRunner()
    refused = runner.invoke(main, ["verify", str(tmp_path / "rel"), "--limit", "2"])
    assert refused.exit_code == 2 and "--reexecute" in refused.output
    done = runner.invoke(main, ["verify", str(tmp_path / "rel"), "--json", "--hashes-only"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["ok"] is True and data["cells"] == 16 and data["reexecution"] is None


def test_a_run_rescored_with_other_settings_freezes_into_a_release_that_verifies(
    run_dir: Path, tmp_path: Path
) -> None:
    # `score --profile paper --tolerance 0.25` rescored the cells: verify must rescore them the
    # same way (the settings recorded under `rescored`), not with the run's own
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    runner = CliRunner()
    scored = runner.invoke(main, ["score", str(copy), "--profile", "paper", "--tolerance", "0.25"])
    assert scored.exit_code == 0, scored.output
    frozen = runner.invoke(main, ["freeze", str(copy), "--out", str(tmp_path / "rel")])
    assert frozen.exit_code == 0, frozen.output
    index = json.loads((tmp_path / "rel" / "release.json").read_text())
    assert index["run"]["rescored"] == {
        "profile": "paper",
        "tolerance": 0.25,
        "extractor": "deterministic",
    }
    report = verify_release(tmp_path / "rel")
    assert report.ok, report.problems

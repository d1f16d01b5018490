"""Building and loading suites: determinism, manifest, checks, redraws, errors, CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.errors import SuiteError
from causalverify.estimators import canonical
from causalverify.scenarios import (
    DEFAULT_SEED,
    Suite,
    build_suite,
    check_scenario,
    load_suite,
    usable_canonical,
)
from causalverify.scenarios.build import draw_data
from causalverify.scenarios.dgp import generate, read_csv_bytes, scenario_rng, to_csv_bytes
from causalverify.scenarios.grid import DEFAULT_GRID


@pytest.fixture(scope="module")
def built(default_suite_dir: Path) -> Path:
    """The session's default suite (its build reported 100 scenarios and no violation)."""
    return default_suite_dir


@pytest.fixture(scope="module")
def suite(built: Path) -> Suite:
    return load_suite(built)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_rebuild_is_byte_identical(built: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_suite(again)
    assert _tree(again) == _tree(built)


@pytest.mark.skipif(
    shutil.which("sha256sum") is None, reason="coreutils sha256sum is not installed"
)
def test_sha256sum_accepts_manifest(built: Path) -> None:
    result = subprocess.run(
        ["sha256sum", "--check", "--strict", "SHA256SUMS"],
        cwd=built,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    listed = [line.split("  ", 1)[1] for line in (built / "SHA256SUMS").read_text().splitlines()]
    on_disk = sorted(k for k in _tree(built) if k != "SHA256SUMS")
    assert listed == on_disk and len(listed) == 202  # 100 CSVs, 100 scenarios, index, build log


def test_counts_and_ids(suite: Suite) -> None:
    assert [s.id for s in suite] == [f"s{i:03d}" for i in range(1, 101)]
    assert Counter(s.family for s in suite) == {"did": 30, "event_study": 24, "iv": 24, "rdd": 22}
    for s, entry in zip(suite, DEFAULT_GRID, strict=True):
        assert (s.family, s.difficulty, s.beta, s.params) == (
            entry.family,
            entry.difficulty,
            entry.beta,
            entry.params_dict(),
        )
        assert s.seed_entropy == (DEFAULT_SEED, s.index, s.attempt)


def test_zero_violations_and_canonical_from_disk(suite: Suite) -> None:
    for s in suite:
        data = suite.read_data(s)
        assert check_scenario(s, data) == [], s.id
        result = canonical(data, s.family)
        assert result.estimate == s.canonical.estimate and result.se == s.canonical.se
        assert usable_canonical(s.canonical.estimate, s.beta)


def test_topics_vary(suite: Suite) -> None:
    for family in ("did", "event_study", "iv", "rdd"):
        topics = [s.topic for s in suite if s.family == family]
        assert len(set(topics)) >= 15, family


def test_suite_index_entries(built: Path, suite: Suite) -> None:
    index = json.loads((built / "suite.json").read_text())
    assert index["seed"] == DEFAULT_SEED and index["n_scenarios"] == 100
    assert index["generator_version"] and index["redraws"] == sum(s.attempt for s in suite)
    first = index["scenarios"][0]
    assert set(first) >= {"id", "family", "difficulty", "seed", "attempt", "beta", "canonical"}
    assert first["data_file"] == "data/s001.csv" and len(first["csv_sha256"]) == 64
    text = (built / "suite.json").read_text()
    assert text == json.dumps(index, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_redrawn_scenarios_had_unusable_earlier_draws(suite: Suite) -> None:
    redrawn = [s for s in suite if s.attempt > 0]
    assert redrawn, "the default suite is expected to need at least one redraw"
    for s in redrawn:
        for attempt in range(s.attempt):
            frame = generate(
                s.family, s.params, s.beta, scenario_rng(s.suite_seed, s.index, attempt)
            )
            estimate = canonical(read_csv_bytes(to_csv_bytes(frame)), s.family).estimate
            assert not usable_canonical(estimate, s.beta)


def test_draw_gives_up_loudly() -> None:
    entry = DEFAULT_GRID[0]
    impossible = type(entry)(
        family="iv", group="x", difficulty="hard", beta=0.4, params=(("n", 30), ("sigma", 50.0))
    )
    with pytest.raises(SuiteError, match="no usable draw in 2 attempts"):
        draw_data(impossible, suite_seed=1, index=1, max_attempts=2)


def test_cycled_suite_draws_fresh_data(tmp_path: Path) -> None:
    report = build_suite(tmp_path / "big", n_scenarios=102)
    big = load_suite(tmp_path / "big")
    assert report.n_scenarios == 102 and big.get("s101").family == "did"
    assert big.get("s101").csv_sha256 != big.get("s001").csv_sha256
    assert big.get("s102").beta == big.get("s002").beta


def test_tampering_is_detected(tmp_path: Path) -> None:
    out = tmp_path / "smoke"
    build_suite(out, suite="smoke")
    path = out / "data" / "s001.csv"
    path.write_bytes(path.read_bytes().replace(b"\n1,", b"\n2,", 1))
    with pytest.raises(SuiteError, match=r"data/s001.csv: sha256 differs"):
        load_suite(out)
    assert len(load_suite(out, verify=False)) == 4


def test_extra_file_and_symlink_are_detected(tmp_path: Path) -> None:
    out = tmp_path / "smoke"
    build_suite(out, suite="smoke")
    assert load_suite(out).verify() == []
    (out / "data" / "notes.txt").write_text("not part of the suite")
    with pytest.raises(SuiteError, match=r"data/notes.txt: extra file, not listed in SHA256SUMS"):
        load_suite(out)
    (out / "data" / "notes.txt").unlink()
    # a listed CSV replaced by a link to a file of the same bytes: the bytes match, the link is
    # still refused (a link can point out of the suite)
    csv = out / "data" / "s001.csv"
    copy = tmp_path / "elsewhere.csv"
    shutil.copyfile(csv, copy)
    csv.unlink()
    csv.symlink_to(copy)
    with pytest.raises(SuiteError, match=r"data/s001.csv: is a symbolic link"):
        load_suite(out)
    csv.unlink()
    shutil.copyfile(copy, csv)
    (out / "linked").symlink_to(tmp_path, target_is_directory=True)
    problems = load_suite(out, verify=False).verify()
    assert problems == ["linked: extra symbolic link, not listed in SHA256SUMS"]


def test_load_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="does not exist"):
        load_suite(tmp_path / "missing")
    with pytest.raises(SuiteError, match=r"suite\.json is missing"):
        load_suite(tmp_path)
    (tmp_path / "suite.json").write_text("{not json")
    with pytest.raises(SuiteError, match="not readable JSON"):
        load_suite(tmp_path / "suite.json")


def test_out_folder_rules(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("keep me")
    with pytest.raises(SuiteError, match="not empty and does not hold a suite"):
        build_suite(busy, suite="smoke")
    assert (busy / "notes.txt").read_text() == "keep me"
    out = tmp_path / "s"
    build_suite(out, suite="smoke", seed=1)
    build_suite(out, suite="smoke", seed=2)  # a previous suite is replaced
    assert load_suite(out).seed == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy", "s"]


def test_cli_build(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["build", "--out", str(tmp_path / "cli"), "--suite", "smoke"])
    assert result.exit_code == 0, result.output
    assert "EVENT_STUDY" in result.output and "check violations: 0" in result.output
    assert len(load_suite(tmp_path / "cli")) == 4
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x").write_text("x")
    failed = runner.invoke(main, ["build", "--out", str(tmp_path / "junk")])
    assert failed.exit_code != 0 and "does not hold a suite" in failed.output

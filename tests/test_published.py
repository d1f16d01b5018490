"""Importing a published release: records, data paths, canonicals, defects, determinism."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.errors import SuiteError
from causalverify.published import import_suite, read_release
from causalverify.published._text import column_description, named_identifiers
from causalverify.published.defects import find_defects
from causalverify.published.packages import missing_packages, python_packages, r_packages
from causalverify.scenarios import load_suite
from published_helpers import EXP_B, REFERENCE, SCENARIOS, make_release

#: (scenario, kind) of every defect the fixture texts and data contain
EXPECTED_DEFECTS = {
    ("s19", "column_not_in_data"),  # names `income`
    ("s25", "text_contradicts_data"),  # states a band of 0.25; near_cutoff uses 0.3
    ("s46", "design_name"),  # "parallel trends"
    ("s46", "text_contradicts_data"),  # says period 6; the data switch on at period 4
    ("s46", "canonical_sign"),  # published draw: canonical -0.179 for a DGP effect of +0.08
    ("s46", "fix_note"),
    ("s82", "canonical_sign"),  # published draw: canonical +0.0036 for -0.25
    ("s82", "canonical_near_zero"),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("published")
    release = make_release(root / "release")
    import_suite(release, root / "suite")
    return release, root / "suite"


def test_records_keep_the_published_ids_texts_and_data_paths(imported: tuple[Path, Path]) -> None:
    release, suite_dir = imported
    suite = load_suite(suite_dir)  # verifies SHA256SUMS and CSV hashes
    assert [s.id for s in suite] == list(SCENARIOS)
    for scenario in suite:
        published = json.loads((release / EXP_B / "scenarios" / f"{scenario.id}.json").read_text())
        assert scenario.data_file == f"experiments/exp_b/data/{scenario.id}_data.csv"
        assert scenario.title == published["title"]
        assert scenario.research_question == published["research_question"]
        assert scenario.data_description == published["data_description"]
        assert scenario.beta == published["dgp_truth"]["effect"]
        assert scenario.difficulty == published["difficulty"]
        assert (scenario.suite_seed, scenario.attempt) == (0, 0)
        source = REFERENCE / "data" / f"{scenario.id}_data.csv"
        assert suite.data_path(scenario).read_bytes() == source.read_bytes()
        assert scenario.csv_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
        assert set(scenario.columns) == set(suite.read_data(scenario).columns)
    assert [s.family for s in suite] == ["did", "event_study", "iv", "rdd", "did", "iv"]
    assert suite.meta["seed_recorded"] is False and suite.seed == 0
    assert not (suite_dir / "data").exists()


def test_canonicals_reproduce_the_published_values(imported: tuple[Path, Path]) -> None:
    published = json.loads((REFERENCE / "dgp_verification.json").read_text())
    by_id = {r["scenario_id"]: r["estimated"] for r in published["results"]}
    for scenario in load_suite(imported[1]):
        assert scenario.canonical.profile == "paper"
        assert abs(scenario.canonical.estimate - by_id[scenario.id]) <= 5e-7, scenario.id


def test_column_meanings_come_from_the_text(imported: tuple[Path, Path]) -> None:
    suite = load_suite(imported[1])
    assert suite.get("s19").columns["x"] == "training hours (hundreds)"
    assert suite.get("s01").columns["unit_id"] == "region identifier"
    assert suite.get("s11").columns["mkt_ret"] == "daily market index return"
    # no description in the text: our own plain words
    assert suite.get("s01").columns["treat_x_post"] == "treated times post"


def test_defects_table_lists_exactly_the_known_defects(imported: tuple[Path, Path]) -> None:
    with (imported[1] / "defects.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["scenario_id"], r["kind"]) for r in rows} == EXPECTED_DEFECTS
    assert len(rows) == len(EXPECTED_DEFECTS)
    periods = next(
        r for r in rows if r["scenario_id"] == "s46" and r["kind"] == "text_contradicts_data"
    )
    assert "period 6" in periods["detail"] and "period 4" in periods["detail"]


def test_import_is_byte_identical(imported: tuple[Path, Path], tmp_path: Path) -> None:
    import_suite(imported[0], tmp_path / "again")
    first = sorted(p.relative_to(imported[1]) for p in imported[1].rglob("*") if p.is_file())
    second = sorted(
        p.relative_to(tmp_path / "again") for p in (tmp_path / "again").rglob("*") if p.is_file()
    )
    assert first == second
    for rel in first:
        assert (imported[1] / rel).read_bytes() == (tmp_path / "again" / rel).read_bytes(), rel


def test_malformed_releases_are_clean_errors(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="does not look like a causalverify-2026 release"):
        read_release(tmp_path)
    release = make_release(tmp_path / "r", ("s01",))
    (release / EXP_B / "data" / "s01_data.csv").unlink()
    with pytest.raises(
        SuiteError, match=r"data file experiments/exp_b/data/s01_data\.csv is missing"
    ):
        read_release(release)
    bad = make_release(tmp_path / "b", ("s19",))
    path = bad / EXP_B / "scenarios" / "s19.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "method_family": "SYNTH_CONTROL"}))
    with pytest.raises(SuiteError, match="unknown design family"):
        import_suite(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    path.write_text(json.dumps({**record, "data_file": "../escape.csv"}))
    with pytest.raises(SuiteError, match="not a plain relative path"):
        read_release(bad)


def test_import_suite_command(tmp_path: Path) -> None:
    release = make_release(tmp_path / "release", ("s01", "s46"))
    result = CliRunner().invoke(main, ["import-suite", str(release), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "imported 2 scenarios (did 2)" in result.output
    assert "canonical_sign           1" in result.output
    result = CliRunner().invoke(main, ["import-suite", str(tmp_path), "--out", str(tmp_path / "x")])
    assert result.exit_code != 0 and "no experiments/exp_b/scenarios/ folder" in result.output


def _scenario(release: Path, sid: str, **changes: object) -> object:
    from causalverify.published import PublishedScenario

    record = json.loads((release / EXP_B / "scenarios" / f"{sid}.json").read_text())
    return PublishedScenario.model_validate({**record, **changes})


def test_rdd_cutoff_and_counts_against_the_data(tmp_path: Path) -> None:
    release = make_release(tmp_path, ("s25",))
    data = pd.read_csv(REFERENCE / "data" / "s25_data.csv")
    text = "700 students. Scores at or above the cutoff of 0.6 are treated; y: outcome."
    p = _scenario(release, "s25", data_description=text)
    details = [d.detail for d in find_defects(p, "rdd", data, 0.25)]  # type: ignore[arg-type]
    assert any("cutoff 0.6" in d for d in details)
    assert any("700 observations" in d and "600" in d for d in details)
    fine = _scenario(
        release,
        "s25",
        data_description="600 students; cutoff of 0.5; within 0.3 of it. running_var treated y near_cutoff",
    )
    assert find_defects(fine, "rdd", data, 0.25) == []  # type: ignore[arg-type]


def test_did_period_counts_and_near_zero_canonical(tmp_path: Path) -> None:
    release = make_release(tmp_path, ("s01",))
    data = pd.read_csv(REFERENCE / "data" / "s01_data.csv")
    p = _scenario(
        release,
        "s01",
        data_description="250 units over 10 periods. unit_id period treated post treat_x_post y",
    )
    kinds = [(d.kind, d.detail) for d in find_defects(p, "did", data, -1e-12)]  # type: ignore[arg-type]
    assert ("text_contradicts_data", "text says 250 units; the data have 200") in kinds
    assert ("text_contradicts_data", "text says 10 periods; data have 8") in kinds
    assert any(k == "canonical_near_zero" and "unscoreable" in d for k, d in kinds)


def test_text_helpers() -> None:
    text = "y: log earnings; x: hours (in hundreds); `wage_rate` and s01_data.csv; z (1 = voucher)"
    assert column_description(text, "x") == "hours (in hundreds)"
    assert column_description(text, "z") == "1 = voucher"
    assert column_description(text, "controls") is None
    assert named_identifiers(text) == ["wage_rate"]


def test_package_detection() -> None:
    code = 'library(fixest)\nrequire("AER") # library(foo)\nsandwich::vcovHC(m)\nlibrary(stats)'
    assert r_packages(code) == ["fixest", "AER", "stats", "sandwich"]
    assert missing_packages(code, "r", {"AER", "sandwich"}) == ["fixest"]
    py = "import numpy as np, os\nfrom rdrobust import rdrobust\nfrom . import x\n"
    assert python_packages(py) == ["numpy", "os", "rdrobust"]
    assert missing_packages(py, "python", {"numpy"}) == ["rdrobust"]
    assert missing_packages(None, "r", set()) == []

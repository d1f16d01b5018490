"""``causalverify score`` and ``causalverify audit`` on a run store."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.records import CellRecord
from causalverify.scoring.audit import SHEET_COLUMNS, cell_id
from causalverify.store import CellKey, RunStore
from test_scoring import cell

OUTPUTS = {
    "did": ("DiD estimate: -0.26\n", -0.25),
    "event_study": ("CAR[0,10]: 0.0220\n", 0.002),
    "iv": ("OLS estimate: 0.61\n2SLS estimate: 0.49\n", 0.5),
    "rdd": ("RD estimate: 0.9\n", 0.25),
}


def _records() -> list[CellRecord]:
    out: list[CellRecord] = []
    for i, (family, (stdout, canonical)) in enumerate(sorted(OUTPUTS.items())):
        for model in ("alpha/m1", "beta/m2"):
            for sample in range(3):
                key = CellKey(scenario_id=f"s{i + 1:03d}", model=model, language="r", sample=sample)
                conv = {"per_day": 1, "cumulative_0_10": 11} if family == "event_study" else {}
                out.append(
                    cell(
                        key=key, family=family, canonical=canonical, stdout=stdout, conversions=conv
                    )
                )
    out.append(cell(key=CellKey(scenario_id="s999", model="alpha/m1", language="r"), canonical=0.0))
    return out


def _run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    with RunStore.open(run_dir, create=True) as store:
        store.put_cells(_records())
    return run_dir


def test_score_writes_scores_and_is_byte_identical(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    runner = CliRunner()
    first = runner.invoke(main, ["score", str(run_dir)])
    assert first.exit_code == 0, first.output
    text1 = (run_dir / "scores.csv").read_bytes()
    second = runner.invoke(main, ["score", str(run_dir)])
    assert second.exit_code == 0
    assert (run_dir / "scores.csv").read_bytes() == text1
    assert first.output == second.output
    frame = pd.read_csv(run_dir / "scores.csv")
    assert len(frame) == 25
    by_method = frame.groupby("method")["status"].agg(set).to_dict()
    assert by_method["DID"] == {"correct", "unscoreable"}
    assert by_method["EVENT_STUDY"] == {"correct"}  # CAR over the declared window
    assert by_method["IV"] == {"correct"}  # the 2SLS line, not OLS
    assert by_method["RDD"] == {"wrong"}
    assert set(frame.loc[frame.method == "EVENT_STUDY", "matched_conversion"]) == {
        "cumulative_0_10"
    }
    assert "alpha/m1" in first.output and "L2b+" in first.output


def test_score_profile_and_tolerance_change_the_result(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    with RunStore.open(run_dir) as store:
        store.set_meta({"profile": "default", "tolerance": 0.5})  # what `run` records
    runner = CliRunner()
    result = runner.invoke(main, ["score", str(run_dir), "--tolerance", "3", "--profile", "paper"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(run_dir / "scores.csv")
    assert set(frame.loc[frame.method == "RDD", "status"]) == {"correct"}
    assert f"rerun `causalverify report {run_dir}`" in result.output
    with RunStore.open(run_dir) as store:
        meta = store.meta()
        # the run's own settings are kept (a resumed run repeats them); the rescoring is beside
        assert (meta["profile"], meta["tolerance"]) == ("default", 0.5)
        rescored = {"profile": "paper", "tolerance": 3.0, "extractor": "deterministic"}
        assert meta["rescored"] == rescored
        stored = next(store.iter_cells())
        assert stored.scores is not None and stored.scores.tolerance == 3.0


def test_score_missing_run_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["score", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "Traceback" not in result.output


def test_audit_sample_is_blinded_stratified_and_seeded(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    runner = CliRunner()
    sheet1, sheet2 = tmp_path / "a.csv", tmp_path / "b.csv"
    for sheet in (sheet1, sheet2):
        result = runner.invoke(
            main, ["audit", "sample", str(run_dir), "--n", "8", "--seed", "7", "--out", str(sheet)]
        )
        assert result.exit_code == 0, result.output
    assert sheet1.read_bytes() == sheet2.read_bytes()
    frame = pd.read_csv(sheet1, keep_default_na=False)
    assert tuple(frame.columns) == SHEET_COLUMNS
    assert frame["family"].value_counts().to_dict() == {
        "did": 2,
        "event_study": 2,
        "iv": 2,
        "rdd": 2,
    }
    text = sheet1.read_text()
    assert "alpha/m1" not in text and "canonical" not in text
    assert set(frame["human_effect"]) == {""}
    other = tmp_path / "c.csv"
    runner.invoke(
        main, ["audit", "sample", str(run_dir), "--n", "8", "--seed", "8", "--out", str(other)]
    )
    assert other.read_bytes() != sheet1.read_bytes()


def test_audit_agree_reports_numeric_and_passfail_agreement(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    runner = CliRunner()
    sheet = tmp_path / "sheet.csv"
    runner.invoke(
        main, ["audit", "sample", str(run_dir), "--n", "4", "--seed", "1", "--out", str(sheet)]
    )
    frame = pd.read_csv(sheet, keep_default_na=False, dtype=str)
    human = {"did": "-0.26", "event_study": "0.022", "iv": "0.61", "rdd": "0.9"}
    frame["human_effect"] = [human[f] for f in frame["family"]]
    frame.to_csv(sheet, index=False)
    result = runner.invoke(main, ["audit", "agree", str(run_dir), str(sheet)])
    assert result.exit_code == 0, result.output
    # the human read OLS for the IV cell: numeric disagreement, and 0.61 still passes at 0.5
    assert "numeric agreement: 3/4 (75.0%)" in result.output
    assert "pass/fail agreement (profile default, tau 0.5): 4/4" in result.output
    records = {cell_id(r): r for r in _records()}
    assert all(cid in records for cid in frame["cell_id"])

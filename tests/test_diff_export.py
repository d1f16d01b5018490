"""``causalverify diff`` on hand-made runs whose answer is known and on a single-shot against a
repair run of the offline panel; ``causalverify export`` read back with pandas and Hugging Face
``datasets``."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from causalverify.cli import main
from causalverify.models import ModelAccess
from causalverify.records import (
    CellKey,
    CellRecord,
    ExecResult,
    ExtractionCandidate,
    ExtractionRecord,
    ScoreRecord,
)
from causalverify.runner import RunConfig, run_benchmark
from causalverify.store import RunStore
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks

N_SCENARIOS = 40
CHANGED = [f"s{i:03d}" for i in range(1, 20, 2)]  # ten scenarios that fail in run A


def _record(sid: str, model: str, *, right: bool, family: str = "iv") -> CellRecord:
    estimate = 0.21 if right else 0.9
    extraction = ExtractionRecord(
        method="deterministic",
        value=estimate,
        rule="labelled",
        line=3,
        ambiguous=not right,
        candidates=[
            ExtractionCandidate(value=estimate, rule="labelled", line=3),
            *([ExtractionCandidate(value=0.5, rule="last_number", line=5)] if not right else []),
        ],
    )
    return CellRecord(
        key=CellKey(scenario_id=sid, model=model, language="r"),
        family=family,  # type: ignore[arg-type]
        difficulty="easy",
        beta=0.2,
        canonical=0.2,
        protocol="default",
        prompt=[],
        prompt_sha256="0" * 64,
        execution=ExecResult(
            status="ok", exit_code=0, stdout="", stderr="", wall_seconds=1.5, cpu_seconds=1.0
        ),
        extraction=extraction,
        scores=ScoreRecord(
            profile="default",
            tolerance=0.5,
            extractor="deterministic",
            L1=True,
            L2a=True,
            L2b=True,
            L2b_plus=right,
            rel_error=abs(estimate - 0.2) / 0.2,
            estimate=estimate,
        ),
        status="correct" if right else "wrong",
        timings={"model": 0.25, "execute": 1.5},
    )


def _passes_in_a(i: int) -> bool:
    return i % 2 == 0  # half the scenarios


def _store(run: Path, cells: list[CellRecord], fingerprint: str = "f" * 64) -> Path:
    with RunStore.open(run, create=True) as store:
        store.set_meta({"protocol": "default", "tolerance": 0.5, "suite_fingerprint": fingerprint})
        for cell in cells:
            store.put_cell(cell)
    return run


def _run_a(folder: Path) -> Path:
    cells = [_record(f"s{i:03d}", "m", right=_passes_in_a(i)) for i in range(N_SCENARIOS)]
    return _store(folder / "run-a", cells)


def _run_b(folder: Path, *, lost: int = 0, fingerprint: str = "f" * 64) -> Path:
    """Run A with the model changed: CHANGED now pass; the first ``lost`` passing ones fail."""
    passing = [f"s{i:03d}" for i in range(N_SCENARIOS) if _passes_in_a(i)]
    gained = set(CHANGED[lost:]) if lost else set(CHANGED)
    dropped = set(passing[:lost])
    cells = []
    for i in range(N_SCENARIOS):
        sid = f"s{i:03d}"
        right = (_passes_in_a(i) or sid in gained) and sid not in dropped
        cells.append(_record(sid, "m", right=right))
    return _store(folder / "run-b", cells, fingerprint)


def _diff(*args: str) -> dict:
    result = CliRunner().invoke(main, ["diff", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_model_changed_on_ten_scenarios_is_found_better(tmp_path: Path) -> None:
    a, b = _run_a(tmp_path), _run_b(tmp_path)
    data = _diff(str(a), str(b))
    (entry,) = data["comparisons"]
    plus = entry["layers"]["L2b_plus"]
    assert entry["pairs"] == N_SCENARIOS and entry["scenarios"] == N_SCENARIOS
    assert plus["difference"] == pytest.approx(10 / N_SCENARIOS)
    assert (plus["a_only"], plus["b_only"]) == (0, 10)
    # ten discordant scenarios, all one way: exact p = 2 / 2^10 (one comparison: Holm keeps it)
    assert plus["p"] == pytest.approx(2 / 2**10)
    assert plus["p_holm"] == pytest.approx(2 / 2**10)
    for layer in ("L1", "L2a", "L2b"):
        assert entry["layers"][layer]["difference"] == 0 and entry["layers"][layer]["p"] == 1.0
    # the clustered interval: one pair per scenario, so the t interval of the differences
    d = [1.0 if f"s{i:03d}" in CHANGED else 0.0 for i in range(N_SCENARIOS)]
    half = stats.t.ppf(0.975, N_SCENARIOS - 1) * stats.sem(d)
    assert (plus["lo"], plus["hi"]) == (
        pytest.approx(0.25 - half),
        pytest.approx(0.25 + half),
    )
    assert [f["scenario_id"] for f in entry["flips"]["b_only"]] == CHANGED
    assert entry["flips"]["a_only"] == []
    lo, hi = round(100 * plus["lo"]), round(100 * plus["hi"])
    assert entry["verdict"] == (
        f"run-b:m is better on L2b+ by 25 pp [{lo}, {hi}], p = 0.002, Holm-adjusted."
    )
    text = CliRunner().invoke(main, ["diff", str(a), str(b)])
    assert text.exit_code == 0 and entry["verdict"] in text.output
    assert "L2b+ flipped (B right, A not): 10" in text.output


def test_gains_offset_by_losses_are_no_detectable_difference(tmp_path: Path) -> None:
    a, b = _run_a(tmp_path), _run_b(tmp_path, lost=5)
    (entry,) = _diff(str(a), str(b))["comparisons"]
    plus = entry["layers"]["L2b_plus"]
    assert plus["difference"] == 0 and (plus["a_only"], plus["b_only"]) == (5, 5)
    assert plus["p"] == 1.0
    # null standard error sqrt(Σ D_g²) / N with ten discordant scenarios
    t = stats.t.ppf(0.975, N_SCENARIOS - 1) + stats.t.ppf(0.8, N_SCENARIOS - 1)
    mde = t * math.sqrt(10) / N_SCENARIOS
    assert plus["mde"] == pytest.approx(mde)
    assert entry["verdict"].startswith("No detectable difference on L2b+")
    assert entry["verdict"].endswith(
        f"the smallest difference this design could detect at 80% power is {100 * mde:.0f} pp."
    )


def test_runs_on_different_suites_are_refused(tmp_path: Path) -> None:
    a, b = _run_a(tmp_path), _run_b(tmp_path, fingerprint="e" * 64)
    result = CliRunner().invoke(main, ["diff", str(a), str(b)])
    assert result.exit_code == 1
    assert "different suites" in result.output and "fingerprint" in result.output


def test_two_models_of_one_run_and_links_into_the_explorer(tmp_path: Path) -> None:
    cells = [_record(f"s{i:03d}", "old", right=_passes_in_a(i)) for i in range(N_SCENARIOS)]
    cells += [
        _record(f"s{i:03d}", "new", right=_passes_in_a(i) or f"s{i:03d}" in CHANGED)
        for i in range(N_SCENARIOS)
    ]
    run = _store(tmp_path / "both", cells)
    assert CliRunner().invoke(main, ["report", str(run), "--resamples", "20"]).exit_code == 0
    refused = CliRunner().invoke(main, ["diff", str(run)])
    assert refused.exit_code == 2 and "--models" in refused.output
    (entry,) = _diff(str(run), "--models", "old,new")["comparisons"]
    assert entry["layers"]["L2b_plus"]["b_only"] == 10
    flip = entry["flips"]["b_only"][0]
    link = urlparse(flip["link_b"])
    assert Path(link.path) == (run / "report" / "index.html").resolve()
    assert link.fragment == f"cell/{flip['scenario_id']}/new/r/0"
    # the report of the same run shows the pair in its pairwise table, new ahead of old
    summary = json.loads((run / "report" / "summary.json").read_text())
    (pair,) = summary["pairwise"]["pairs"]
    assert (pair["a"], pair["b"], pair["difference"]) == ("new", "old", 0.25)
    assert summary["pairwise"]["tied_with_leader"] == ["new"]
    html = (run / "report" / "index.html").read_text()
    assert '<tr class="tied">' in html and "Pairwise comparisons" in html


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_export_round_trips_through_pandas_and_datasets(tmp_path: Path, fmt: str) -> None:
    import datasets

    run = _run_b(tmp_path)
    out = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(run), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 0, result.output
    path = out / f"cells.{fmt}"
    frame = {
        "parquet": pd.read_parquet,
        "csv": pd.read_csv,
        "jsonl": lambda p: pd.read_json(p, lines=True),
    }[fmt](path)
    assert len(frame) == N_SCENARIOS and frame["scenario_id"].is_unique
    assert frame["L2b_plus"].sum() == 30 and set(frame["model"]) == {"m"}
    assert frame["wall_seconds"].eq(1.5).all() and frame["time_execute"].eq(1.5).all()
    assert (frame["suite_fingerprint"] == "f" * 64).all()
    wrong = frame[~frame["L2b_plus"].astype(bool)].iloc[0]
    candidates = wrong["candidates"]
    if fmt == "csv":
        candidates = json.loads(candidates)
    assert [c["value"] for c in candidates] == [0.9, 0.5]
    assert json.loads(wrong["extraction_record"])["ambiguous"] is True
    loader = {"parquet": "parquet", "csv": "csv", "jsonl": "json"}[fmt]
    dataset = datasets.load_dataset(
        loader, data_files=str(path), split="train", cache_dir=str(tmp_path / "hf-cache")
    )
    assert dataset.num_rows == N_SCENARIOS
    assert sorted(dataset["scenario_id"]) == sorted(frame["scenario_id"])
    assert sum(bool(v) for v in dataset["L2b_plus"]) == 30
    turns = datasets.load_dataset(
        loader,
        data_files=str(out / f"turns.{fmt}"),
        split="train",
        cache_dir=str(tmp_path / "hf-cache"),
    )
    assert turns.num_rows == N_SCENARIOS and set(turns["turn"]) == {1}


@with_marks(needs_r_and_sandbox)
def test_single_shot_against_repair_mode_of_the_offline_panel(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    suite = smoke_suite(shared_root(tmp_path_factory))
    models = ("reference/mute", "reference/naive")
    base = RunConfig(
        suite_dir=suite,
        out_dir=tmp_path / "single",
        models=models,
        languages=("python",),
        workers=2,
        access=ModelAccess(cache_path=tmp_path / "cache.sqlite"),
    )
    run_benchmark(base)
    repair = dataclasses.replace(base, out_dir=tmp_path / "repair", mode="repair")
    run_benchmark(repair)
    data = _diff(str(base.out_dir), str(repair.out_dir))
    assert "repair (final of" in data["settings"][1] and "single" in data["settings"][0]
    by_model = {e["model_a"]: e for e in data["comparisons"]}
    assert set(by_model) == set(models)
    mute = by_model["reference/mute"]  # prints its estimate once told it printed none
    assert mute["pairs"] == 4 and mute["layers"]["L2b_plus"]["difference"] == 1.0
    assert len(mute["flips"]["b_only"]) == 4 and not mute["flips"]["a_only"]
    assert "cannot detect even a 100 pp difference" in mute["verdict"]  # four scenarios
    plus = mute["layers"]["L2b_plus"]  # Holm over the two models' L2b+ comparisons
    assert plus["p"] == pytest.approx(2 / 2**4) and plus["p_holm"] == pytest.approx(4 / 2**4)
    naive = by_model["reference/naive"]  # a wrong number gets no feedback: nothing changes
    assert all(d["difference"] == 0 and d["p"] == 1.0 for d in naive["layers"].values())
    # every turn of the repair run is exported
    out = tmp_path / "export"
    assert (
        CliRunner().invoke(main, ["export", str(repair.out_dir), "--out", str(out)]).exit_code == 0
    )
    turns = pd.read_parquet(out / "turns.parquet")
    with RunStore.open(repair.out_dir) as store:
        expected = sum(len(c.turn_states()) for c in store.iter_cells())
    assert len(turns) == expected > 8 and set(turns["mode"]) == {"repair"}
    cells = pd.read_parquet(out / "cells.parquet")
    assert (cells.loc[cells["model"] == "reference/mute", "L2b_plus"]).all()
    # the repair report's turn curves carry their scenario-clustered intervals
    report = CliRunner().invoke(main, ["report", str(repair.out_dir), "--resamples", "20"])
    assert report.exit_code == 0, report.output
    summary = json.loads((repair.out_dir / "report" / "summary.json").read_text())
    curve = summary["repair"]["reference/mute"]
    assert curve["L2b_plus_by_turn"][:2] == [0.0, 1.0]
    for rate, (lo, hi) in zip(curve["L2b_plus_by_turn"], curve["L2b_plus_by_turn_ci"], strict=True):
        assert lo <= rate <= hi
    assert curve["L2b_plus_by_turn_ci"][0][1] > 0  # 0 of 4 scenarios is not "surely 0"

"""The report: byte-identical outputs, self-contained HTML, numbers from summary.json, CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from analysis_helpers import ranked_panel
from causalverify.analysis import analyze_cells
from causalverify.cli import main
from causalverify.records import RUN_META_SCHEMA, Summary
from causalverify.report import write_report
from causalverify.sandbox.base import ExecResult
from causalverify.store import CellKey, CellRecord, RunStore, ScoreRecord
from test_analysis_published import write_published_fixture

N_BOOT = 200


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    return ranked_panel([0.9, 0.75, 0.6, 0.45, 0.3], n_scenarios=40, seed=4)


@pytest.fixture(scope="module")
def written(panel: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One report folder shared by the read-only checks."""
    return write_report(panel, tmp_path_factory.mktemp("report"), n_resamples=N_BOOT).parent


def test_write_report_twice_is_byte_identical(panel: pd.DataFrame, tmp_path: Path) -> None:
    first = write_report(panel, tmp_path / "a", n_resamples=N_BOOT, title="T")
    write_report(panel, tmp_path / "b", n_resamples=N_BOOT, title="T")
    assert first.name == "index.html"
    files = sorted(
        p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file()
    )
    assert {str(f) for f in files} >= {
        "summary.json",
        "leaderboard.md",
        "cells.csv",
        "index.html",
        "figures/cascade.png",
        "figures/tolerance_sweep.png",
        "figures/rel_error_cdf.png",
        "figures/family_heatmap.png",
        "figures/rank_agreement.png",
    }
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_summary_json_is_canonical_and_seeded(panel: pd.DataFrame, tmp_path: Path) -> None:
    write_report(panel, tmp_path / "a", n_resamples=50, seed=1)
    text = (tmp_path / "a" / "summary.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    for key in ("models", "n_cells", "rates", "conditional_pass", "rank_correlation"):
        assert key in data
    assert set(data["tolerance_sweep"]) == {"0.1", "0.25", "0.5", "0.75", "1.0"}
    assert set(data["executed_wrong"]) >= {"count", "denominator"}
    assert data["n_cells"] == len(panel)
    other = analyze_cells(panel, n_resamples=50, seed=2)
    ci_a = data["rank_correlation"]["L2b"]["bootstrap_ci"]
    ci_b = other["rank_correlation"]["L2b"]["bootstrap_ci"]
    assert ci_a["seed"] == 1 and ci_b["seed"] == 2
    assert data["rates"] == other["rates"]  # only the bootstrap depends on the seed


def test_index_html_is_self_contained(written: Path) -> None:
    html = (written / "index.html").read_text(encoding="utf-8")
    images = re.findall(r'<img [^>]*src="([^"]+)"', html)
    assert len(images) == 5
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html, flags=re.IGNORECASE)
    assert "<link" not in html and "<script" not in html


def test_shown_numbers_come_from_summary(written: Path) -> None:
    tmp_path = written
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    md = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    for model, rates in summary["rates"].items():
        shown = f"{100 * rates['L2b']:.1f}%"
        assert re.search(rf"\| {re.escape(model)} \| [^\n]*{re.escape(shown)}", md)
    ew = summary["executed_wrong"]
    assert f"{ew['count']}/{ew['denominator']}" in md
    assert f"{ew['count']}/{ew['denominator']}" in html
    tau = summary["rank_correlation"]["L2b"]["kendall_tau"]
    assert f"{tau:.3f}" in md and f"{tau:.3f}" in html


def test_cells_csv_uses_published_names(panel: pd.DataFrame, written: Path) -> None:
    cells = pd.read_csv(written / "cells.csv")
    assert len(cells) == len(panel)
    for column in ("scenario_id", "method", "model", "baseline_effect", "L2b_plus", "rel_error"):
        assert column in cells.columns
    assert cells["L2b_plus"].sum() == panel["L2b_plus"].sum()


def _record(sid: str, model: str, *, ok: bool, right: bool) -> CellRecord:
    execution = ExecResult(
        status="ok" if ok else "error",
        exit_code=0 if ok else 1,
        stdout="",
        stderr="",
        wall_seconds=1.0,
        cpu_seconds=1.0,
    )
    estimate = (0.21 if right else 0.9) if ok else None
    scores = ScoreRecord(
        profile="default",
        tolerance=0.5,
        extractor="deterministic",
        L1=True,
        L2a=True,
        L2b=ok,
        L2b_plus=right if ok else None,
        rel_error=None if estimate is None else abs(estimate - 0.2) / 0.2,
        estimate=estimate,
    )
    return CellRecord(
        key=CellKey(scenario_id=sid, model=model, language="r"),
        family="iv",
        difficulty="easy",
        beta=0.2,
        canonical=0.2,
        protocol="default",
        prompt=[],
        prompt_sha256="0" * 64,
        execution=execution,
        scores=scores,
        status=("correct" if right else "wrong") if ok else "exec_error",
    )


def test_report_command_reads_the_store(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore.open(run, create=True) as store:
        store.set_meta({"protocol": "default", "tolerance": 0.5})
        for i in range(6):
            store.put_cell(_record(f"s{i:03d}", "good", ok=True, right=i != 0))
            store.put_cell(_record(f"s{i:03d}", "poor", ok=i % 2 == 0, right=i == 2))
    result = CliRunner().invoke(main, ["report", str(run), "--seed", "3", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    index = run / "report" / "index.html"
    assert result.output.strip().endswith(str(index))
    summary = json.loads((run / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["rates"]["good"]["L2b_plus"] == pytest.approx(5 / 6, abs=1e-6)
    assert summary["rates"]["poor"]["L2b"] == pytest.approx(0.5)
    assert summary["executed_wrong"] == {
        "by_unit": summary["executed_wrong"]["by_unit"],
        "count": 3,
        "denominator": 9,
        "share": pytest.approx(1 / 3, abs=1e-6),
    }
    assert summary["run"] == {"protocol": "default", "tolerance": 0.5}


def test_report_command_without_a_store(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code != 0
    assert "Error" in result.output


def test_analyze_published_table(tmp_path: Path) -> None:
    table = write_published_fixture(tmp_path / "cells.csv")
    result = CliRunner().invoke(
        main, ["analyze", "--resamples", "50", "--cells", str(table), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["rates"]["Alpha"]["L2b_plus"] == 0.5
    assert summary["tolerance_sweep"]["0.5"] == {"Alpha": 2, "Beta": 1}
    excluded = CliRunner().invoke(
        main,
        [
            "analyze",
            "--resamples",
            "50",
            "--cells",
            str(table),
            "--exclude-model",
            "Beta",
            "--json",
        ],
    )
    assert json.loads(excluded.output)["models"] == ["Alpha"]
    tables = CliRunner().invoke(main, ["analyze", "--resamples", "50", "--cells", str(table)])
    assert tables.exit_code == 0 and "Leaderboard" in tables.output
    out = CliRunner().invoke(
        main, ["analyze", "--resamples", "50", "--cells", str(table), "--out", str(tmp_path / "r")]
    )
    assert out.exit_code == 0, out.output
    assert (tmp_path / "r" / "figures" / "rank_agreement.png").is_file()


def test_analyze_needs_exactly_one_source(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["analyze"])
    assert result.exit_code != 0 and "RUN_DIR" in result.output
    bad = CliRunner().invoke(
        main,
        [
            "analyze",
            "--cells",
            str(write_published_fixture(tmp_path / "c.csv")),
            "--exclude-model",
            "Nobody",
        ],
    )
    assert bad.exit_code != 0 and "Nobody" in bad.output


def test_cells_without_an_answer_are_left_out_and_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from analysis_helpers import cell

    rows = [cell(f"s{i}", "A", rel_error=0.01, estimated=0.2) for i in range(4)]
    rows += [cell(f"s{i}", "B", layers="1110", rel_error=3.0, estimated=0.8) for i in range(4)]
    for row in rows[:2]:  # A's first two cells failed at the API
        row.update(L1=0, L2a=0, L2b=0, L2b_plus=0.0, status="api_error")
    for row in rows[2:]:
        row["status"] = "correct" if row["model"] == "A" else "wrong"
    frame = pd.DataFrame(rows)
    summary = analyze_cells(frame, n_resamples=20)
    assert summary["incomplete"] == {"cells": 2, "by_model": {"A": 2}}
    assert summary["rates"]["A"]["L1"] == 1.0 and summary["rates"]["A"]["L2b_plus"] == 1.0
    assert summary["n_cells"] == 6 and "api_error" not in summary["taxonomy"]["overall"]
    index = write_report(frame, tmp_path / "report", n_resamples=20)
    for text in (index.read_text(), (tmp_path / "report" / "leaderboard.md").read_text()):
        assert "incomplete: 2 cells without an answer (A 2)" in text
    from causalverify.cli.analyze import _print_tables

    _print_tables(Summary.of(summary))  # what `causalverify analyze` prints
    assert "incomplete: 2 cells without an answer" in capsys.readouterr().out


def test_the_summary_is_typed_and_written_back_as_read(written: Path) -> None:
    data = json.loads((written / "summary.json").read_text(encoding="utf-8"))
    summary = Summary.of(data)
    assert summary.stored() == data  # no key added, dropped or retyped
    assert summary.order == data["rankings"]["L2b_plus"]["order"]
    assert (
        summary.rates_detail[summary.order[0]]["L2b_plus"].k
        == (data["rates_detail"][summary.order[0]]["L2b_plus"]["k"])
    )
    with pytest.raises(ValueError, match="rates"):
        Summary.of({k: v for k, v in data.items() if k != "rates"})
    with pytest.raises(ValueError, match="schema"):
        Summary.of({**data, "schema": "causalverify.summary/0"})
    with pytest.raises(ValueError, match="unknown_section"):
        Summary.of({**data, "unknown_section": {}})


def _run_folder(run: Path) -> Path:
    with RunStore.open(run, create=True) as store:
        store.set_meta(
            {
                "schema": RUN_META_SCHEMA,
                "suite": "modern",
                "models": ["good", "poor", "fair"],
                "protocol": "default",
                "tolerance": 0.5,
            }
        )
        for i in range(6):
            store.put_cell(_record(f"s{i:03d}", "good", ok=True, right=i != 0))
            store.put_cell(_record(f"s{i:03d}", "poor", ok=i % 2 == 0, right=i == 2))
            store.put_cell(_record(f"s{i:03d}", "fair", ok=True, right=i % 2 == 0))
    return run


def test_analyze_and_report_write_one_report_of_one_source(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "run")
    common = ["--seed", "3", "--resamples", "50"]
    reported = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r"), *common])
    assert reported.exit_code == 0, reported.output
    analyzed = CliRunner().invoke(
        main, ["analyze", str(run), "--out", str(tmp_path / "a"), *common]
    )
    assert analyzed.exit_code == 0, analyzed.output
    for name in ("summary.json", "leaderboard.md", "cells.csv", "index.html"):
        assert (tmp_path / "r" / name).read_bytes() == (tmp_path / "a" / name).read_bytes(), name
    # without --out, analyze prints the same summary the report wrote
    printed = CliRunner().invoke(main, ["analyze", str(run), "--json", *common])
    assert printed.exit_code == 0, printed.output
    written = (tmp_path / "r" / "summary.json").read_text(encoding="utf-8")
    assert json.loads(printed.output) == json.loads(written)
    summary = json.loads(written)
    assert summary["title"] == "CausalVerify report: the modern suite"
    assert summary["run"]["mode"] == {"name": "single"}


def test_analyze_without_a_model_keeps_the_run_settings_and_records(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "run")
    result = CliRunner().invoke(
        main,
        [
            "analyze",
            str(run),
            "--exclude-model",
            "poor",
            "--resamples",
            "50",
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    assert summary["models"] == ["fair", "good"]
    # the same source as the whole run's report, less one model: settings, title, explorer
    assert summary["run"]["models"] == ["good", "fair"]
    assert summary["run"]["mode"] == {"name": "single"}
    assert summary["title"] == "CausalVerify report: the modern suite"
    assert (tmp_path / "a" / "explorer").is_dir()

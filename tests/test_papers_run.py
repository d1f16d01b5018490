"""Experiment A end to end: offline run, labels, judge (loopback server), RID, audit, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.errors import SetupError
from causalverify.models import ModelAccess
from causalverify.papers.analysis import (
    label_frame,
    load_results,
    prediction_frame,
    rank_contrast,
    score_frame,
)
from causalverify.papers.audit import SHEET_COLUMNS, audit_agreement, audit_sheet
from causalverify.papers.records import default_corpus_path
from causalverify.papers.run import (
    AskSettings,
    labeller_pool,
    rid_subset,
    run_judge,
    run_labels,
    run_papers,
    run_rid,
)
from causalverify.papers.stats import mcnemar_exact
from causalverify.papers.summary import experiment_a_summary
from fake_openai import FakeOpenAIServer, Reply

MODELS = ["reference/textbook", "reference/naive", "reference/wrong-term"]
LABELLERS = ["reference/textbook", "reference/naive", "reference/cumulative", "reference/fragile"]
# two papers of each design family and two others
PICK = ("p001", "p002", "p017", "p018", "p031", "p032", "p043", "p044", "p056", "p057")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    lines = default_corpus_path().read_text(encoding="utf-8").splitlines()
    chosen = [line for line in lines if json.loads(line)["id"] in PICK]
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


def test_offline_run_labels_rid_and_summary(tmp_path: Path, corpus: Path) -> None:
    run_dir = tmp_path / "run"
    first = run_papers(run_dir, models=MODELS, corpus=corpus)
    assert (first.total, first.asked, first.counts) == (30, 30, {"ok": 30})
    again = run_papers(run_dir, models=MODELS)  # the recorded corpus is reused
    assert (again.skipped, again.asked) == (30, 0)
    pool, labels = run_labels(run_dir, labellers=LABELLERS)
    assert pool == LABELLERS and labels.asked == 40
    judged = run_judge(run_dir, judge="reference/textbook")
    assert judged.asked == 60
    subset, arms = run_rid(run_dir, models=MODELS[:2], n=4, seed=11)
    assert subset == rid_subset(list(PICK), n=4, seed=11) and len(subset) == 4
    assert arms[0].asked == 0 and arms[1].asked == 8  # standard answers reused

    summary = experiment_a_summary(run_dir)
    assert summary is not None
    assert summary["label_source"] == "consensus" and summary["papers"] == 10
    assert summary["scorers"] == ["S1", "S2", "S3", "S4"]
    levels = summary["agreement_levels"]["L3"]
    assert sum(v for k, v in levels.items() if k not in ("papers", "scoreable")) == 10
    # wrong-term's JSON contradicts its text: S4 and S2 disagree on L4 for every paper
    wrong = summary["instability"]["reference/wrong-term"]
    assert wrong["range"] > 0.5 and wrong["flip_share"] == 1.0
    _check_rid_against_table(run_dir, summary, subset)


def _check_rid_against_table(run_dir: Path, summary: dict[str, Any], subset: list[str]) -> None:
    results = load_results(run_dir)
    assert results is not None
    labels, _ = label_frame(results)
    scored = score_frame(prediction_frame(results), labels)
    part = scored[(scored["scorer"] == "S2") & scored["paper_id"].isin(subset)]
    for model, entry in summary["rid"]["models"].items():
        rows = part[part["model"] == model].pivot_table(
            index="paper_id", columns="arm", values="L4"
        )
        b = int(((rows["standard"] == 1) & (rows["rid"] == 0)).sum())
        c = int(((rows["standard"] == 0) & (rows["rid"] == 1)).sum())
        assert (entry["L4"]["b"], entry["L4"]["c"]) == (b, c)
        assert entry["L4"]["p_mcnemar"] == mcnemar_exact(b, c)


def test_labeller_pool_exclusion() -> None:
    assert labeller_pool(["a", "b", "c"], ["b"], exclude_evaluated=True) == ["a", "c"]
    assert labeller_pool(["a", "b"], ["b"], exclude_evaluated=False) == ["a", "b"]
    with pytest.raises(SetupError, match="no labeller left"):
        labeller_pool(["b"], ["b"], exclude_evaluated=True)
    with pytest.raises(SetupError, match="twice"):
        labeller_pool(["a", "a"], [], exclude_evaluated=False)


def test_without_labellers_the_hand_labels_are_used(tmp_path: Path, corpus: Path) -> None:
    run_papers(tmp_path, models=["reference/textbook"], corpus=corpus)
    results = load_results(tmp_path)
    assert results is not None
    labels, source = label_frame(results)
    assert source == "reference" and set(labels["method_level"]) == {"hand"}
    assert labels["method_label"].tolist() == labels["reference_method"].tolist()


def _judge_responder(request: dict[str, Any]) -> Reply:
    system = request["messages"][0]["content"]
    return Reply(content="RDD" if "Which design" in system else "negative")


def test_s3_judge_through_the_loopback_openai_server(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run_papers(tmp_path, models=["reference/textbook"], corpus=corpus)
    with FakeOpenAIServer(responder=_judge_responder) as server:
        settings = AskSettings(
            access=ModelAccess(
                concurrency=2, cache_path=tmp_path / "cache.sqlite", base_url=server.url
            )
        )
        summary = run_judge(tmp_path, judge="openai/judge-model", settings=settings)
        # identical answers (the template repeats) give identical prompts: asked once each
        results = load_results(tmp_path)
        assert results is not None
        distinct = 2 * len({ex.text for _, ex in results.answers})
        assert summary.asked == 20 and summary.requests == server.request_count == distinct
        again = run_judge(tmp_path, judge="openai/judge-model", settings=settings)
        assert (again.asked, server.request_count) == (0, distinct)
    results = load_results(tmp_path)
    assert results is not None
    s3 = prediction_frame(results).query("scorer == 'S3'")
    assert len(s3) == 10 and set(s3["method"]) == {"RDD"} and set(s3["direction"]) == {"negative"}


def test_rank_contrast_known_orders() -> None:
    l4 = {"a": 0.9, "b": 0.5, "c": 0.1, "d": 0.3}
    same = rank_contrast(l4, {"a": 0.8, "b": 0.6, "c": 0.2, "d": 0.4})
    assert same is not None and same["kendall_tau"] == pytest.approx(1.0)
    reverse = rank_contrast(l4, {"a": 0.1, "b": 0.3, "c": 0.9, "d": 0.5})
    assert reverse is not None and reverse["spearman_rho"] == pytest.approx(-1.0)
    assert rank_contrast({"a": 0.1, "b": 0.2}, {"a": 0.3, "b": 0.1}) is None


def test_audit_sheet_is_stratified_blinded_and_seeded(tmp_path: Path, corpus: Path) -> None:
    run_papers(tmp_path, models=["reference/textbook"], corpus=corpus)
    run_labels(tmp_path, labellers=LABELLERS)
    results = load_results(tmp_path)
    assert results is not None
    labels, _ = label_frame(results)
    sheet = audit_sheet(labels, results.papers, n=6, seed=3)
    assert tuple(sheet.columns) == SHEET_COLUMNS and len(sheet) == 6
    assert sheet.equals(audit_sheet(labels, results.papers, n=6, seed=3))
    levels = labels.set_index("paper_id").loc[sheet["paper_id"], "method_level"]
    assert set(levels) == set(labels["method_level"])  # every stratum represented
    perfect = sheet.assign(
        human_method=labels.set_index("paper_id").loc[sheet["paper_id"], "method_label"].values,
        human_direction=labels.set_index("paper_id")
        .loc[sheet["paper_id"], "direction_label"]
        .values,
    )
    result = audit_agreement(perfect, labels)
    method = result["method"]["overall"]
    assert method["agree"] == method["n"] == 6 - result["method"]["skipped"]
    flipped = perfect.assign(
        human_direction=perfect["human_direction"].map(
            {"positive": "negative", "negative": "positive"}
        )
    )
    direction = audit_agreement(flipped, labels)["direction"]["overall"]
    assert direction["agree"] == 0 and (math.isnan(direction["kappa"]) or direction["kappa"] <= 0)


def test_cli_papers_commands(tmp_path: Path, corpus: Path) -> None:
    runner = CliRunner()
    run_dir = str(tmp_path / "run")
    models = ",".join(MODELS)
    thin = runner.invoke(main, ["papers", "validate", "--corpus", str(corpus)])
    assert thin.exit_code == 1 and "at least 60" in thin.output
    steps = [
        ["papers", "validate"],
        ["papers", "run", run_dir, "--models", models, "--corpus", str(corpus), "--quiet"],
        ["papers", "label", run_dir, "--labellers", ",".join(LABELLERS), "--quiet"],
        ["papers", "rid", run_dir, "--models", models, "--n", "3", "--seed", "5", "--quiet"],
        ["papers", "show", run_dir],
        [
            "papers",
            "audit",
            "export",
            run_dir,
            "--n",
            "5",
            "--seed",
            "2",
            "--out",
            str(tmp_path / "sheet.csv"),
        ],
    ]
    outputs = []
    for args in steps:
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        outputs.append(result.output)
    assert "papers OK" in outputs[0]
    assert "L3:" in outputs[2] and "exact McNemar" in outputs[3]
    assert "reference/naive" in outputs[4]
    sheet = pd.read_csv(tmp_path / "sheet.csv", dtype=str, keep_default_na=False)
    sheet["human_method"] = "DID"
    sheet.to_csv(tmp_path / "sheet.csv", index=False)
    result = runner.invoke(
        main, ["papers", "audit", "import", run_dir, str(tmp_path / "sheet.csv")]
    )
    assert result.exit_code == 0 and "Cohen's kappa" in result.output
    as_json = runner.invoke(
        main, ["papers", "audit", "import", run_dir, str(tmp_path / "sheet.csv"), "--json"]
    )
    assert as_json.exit_code == 0, as_json.output
    audit = json.loads(as_json.output, parse_constant=_refuse_constant)  # strict JSON: no NaN
    # no human direction was filled in: no row is compared, so rate and kappa are null
    assert audit["direction"]["overall"] == {"n": 0, "agree": 0, "rate": None, "kappa": None}
    assert audit["direction"]["skipped"] == 5 and audit["method"]["overall"]["n"] > 0
    missing = runner.invoke(main, ["papers", "show", str(tmp_path / "nothing")])
    assert missing.exit_code == 1 and "causalverify papers run" in missing.output


def _refuse_constant(name: str) -> None:
    raise ValueError(f"not JSON: {name}")


def test_report_entry_rank_contrast_and_figures(tmp_path: Path, corpus: Path) -> None:
    from causalverify.report.experiment_a import experiment_a_entry, write_experiment_a_figures

    run_papers(tmp_path, models=MODELS, corpus=corpus)
    run_rid(tmp_path, models=MODELS, n=4, seed=1)
    assert experiment_a_entry(tmp_path / "empty", None) is None
    cells = pd.DataFrame(
        {
            "model": [m for m in MODELS for _ in range(4)],
            "unscoreable": [0] * 12,
            "L2b_plus": [1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0],
        }
    )
    entry = experiment_a_entry(tmp_path, cells)
    assert entry is not None and entry["label_source"] == "reference"
    contrast = entry["rank_contrast"]
    assert contrast["models"] == sorted(MODELS)
    assert contrast["L2b_plus"] == [0.25, 0.75, 0.5]  # naive, textbook, wrong-term
    figures = write_experiment_a_figures(entry, tmp_path / "fig")
    assert set(figures) == {"experiment_a_scorers", "experiment_a_rid"}
    first = {k: p.read_bytes() for k, p in figures.items()}
    again = write_experiment_a_figures(entry, tmp_path / "fig")
    assert {k: p.read_bytes() for k, p in again.items()} == first
    assert write_experiment_a_figures(None, tmp_path / "none") == {}

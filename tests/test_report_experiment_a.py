"""The Experiment A tables of the report: shown in index.html and leaderboard.md, from summary.json.

One small offline run folder: a run store with synthetic Experiment B cells for three reference
agents, and Experiment A answers, consensus labels, an S3 judge and a RID arm for the same agents
on ten papers. A twin folder holds the same run store without ``papers.sqlite``.
"""

from __future__ import annotations

import copy
import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from causalverify.papers.records import default_corpus_path
from causalverify.papers.run import run_judge, run_labels, run_papers, run_rid
from causalverify.report import write_report
from causalverify.report.experiment_a_tables import experiment_a_tables
from causalverify.store import RunStore
from test_papers_run import LABELLERS, MODELS, PICK
from test_report import _record

N_BOOT = 50
#: Experiment B: L2b+ passes out of six scenarios per model (distinct, so the ranking is defined)
RIGHT = {"reference/textbook": 5, "reference/naive": 2, "reference/wrong-term": 4}
TITLES = {
    "rates": "Experiment A: method (L3) and direction (L4) agreement, scorer S2",
    "levels": "Experiment A: labels by agreement level (papers)",
    "instability": "Experiment A: L4 by scorer (scorer instability)",
    "rid": "Experiment A: RID pre-commitment ablation, scorer S2",
    "rank": "Experiment A against B: rank agreement of L4 (S2) with L2b+",
    "rank_rates": "Experiment A against B: L4 (S2) and L2b+ per model",
}


def _store(run: Path) -> None:
    with RunStore.open(run, create=True) as store:
        store.set_meta({"protocol": "default", "tolerance": 0.5})
        for model, right in RIGHT.items():
            for i in range(6):
                store.put_cell(_record(f"s{i:03d}", model, ok=True, right=i < right))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Reports of the run with Experiment A results and of its twin without them."""
    root = tmp_path_factory.mktemp("report-experiment-a")
    lines = default_corpus_path().read_text(encoding="utf-8").splitlines()
    corpus = root / "small.jsonl"
    corpus.write_text(
        "\n".join(line for line in lines if json.loads(line)["id"] in PICK) + "\n",
        encoding="utf-8",
    )
    with_a, without_a = root / "with", root / "without"
    _store(with_a)
    shutil.copytree(with_a, without_a)
    run_papers(with_a, models=MODELS, corpus=corpus)
    run_labels(with_a, labellers=LABELLERS)
    run_judge(with_a, judge="reference/textbook")
    run_rid(with_a, models=MODELS[:2], n=4, seed=11)
    for run in (with_a, without_a):
        write_report(run, run / "report", seed=3, n_resamples=N_BOOT, title="T")
    return with_a / "report", without_a / "report"


def _summary(report: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    return data


def _md_rows(report: Path, title: str) -> list[list[str]]:
    """Body rows of the Markdown table under ``## title``."""
    text = (report / "leaderboard.md").read_text(encoding="utf-8")
    block = text.split(f"## {title}\n", 1)[1].split("\n\n", 1)[0]
    lines = block.strip().splitlines()[2:]  # header and the --- line
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]


def _html_rows(report: Path, title: str) -> list[list[str]]:
    """Body rows of the HTML table titled ``title``."""
    page = (report / "index.html").read_text(encoding="utf-8")
    # a table is under its heading, or under its summary when it is collapsed
    heading = re.search(rf"<(h2|summary)>{re.escape(html.escape(title))}</\1>", page)
    assert heading is not None, title
    section = page[heading.end() :].split("</section>", 1)[0]
    body = section.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def _rows(report: Path, key: str) -> list[list[str]]:
    """The table's rows, checked to be the same in leaderboard.md and index.html."""
    md, page = _md_rows(report, TITLES[key]), _html_rows(report, TITLES[key])
    assert md == page and md
    return md


def _p(x: float) -> str:
    return f"{100 * x:.1f}%"


def test_rates_and_levels_come_from_summary(runs: tuple[Path, Path]) -> None:
    report = runs[0]
    entry = _summary(report)["experiment_a"]
    expected = []
    for model in sorted(MODELS):
        e = entry["layers"][model]["S2"]
        cells = [model]
        for layer in ("L3", "L4"):
            d = e[layer]
            cells += [f"{_p(d['rate'])} [{_p(d['lo'])}, {_p(d['hi'])}]", f"{d['k']}/{d['n']}"]
        expected.append(cells)
    assert _rows(report, "rates") == expected
    levels = _rows(report, "levels")
    counts = entry["agreement_levels"]
    for row in levels:
        if row[0] in counts["L3"] or row[0] in counts["L4"]:
            assert row[1:] == [str(counts["L3"].get(row[0], 0)), str(counts["L4"].get(row[0], 0))]
    assert ["papers", "10", "10"] in levels
    agree = entry["reference_agreement"]
    hand = [f"{agree[layer]['agree']}/{agree[layer]['n']}" for layer in ("L3", "L4")]
    assert ["agrees with the hand label", *hand] in levels
    shown = {row[0] for row in levels}
    assert shown >= set(counts["L3"]) - {"scoreable"}  # every level is listed


def test_instability_rid_and_rank_contrast_come_from_summary(runs: tuple[Path, Path]) -> None:
    report = runs[0]
    entry = _summary(report)["experiment_a"]
    assert entry["scorers"] == ["S1", "S2", "S3", "S4"]
    instability = {row[0]: row[1:] for row in _rows(report, "instability")}
    for model, e in entry["instability"].items():
        rates = [_p(e["L4"][s]) for s in entry["scorers"]]
        flips = _p(e["flip_share"])
        assert instability[model] == [*rates, f"{100 * e['range']:.1f} pp", flips, "10"]
    assert instability["reference/wrong-term"][-3] == "100.0 pp"  # its JSON contradicts its text
    rid = {(row[0], row[1]): row[2:] for row in _rows(report, "rid")}
    assert len(rid) == 4  # two models x two layers
    for model, layers in entry["rid"]["models"].items():
        for layer, e in layers.items():
            n, b, c = e["n"], e["b"], e["c"]
            arms = [f"{e[a]}/{n} ({_p(e[a] / n)})" for a in ("standard", "rid")]
            assert rid[(model, layer)] == [str(n), *arms, str(b), str(c), f"{e['p_mcnemar']:.3f}"]
    contrast = entry["rank_contrast"]
    stats = [f"{contrast[k]:.3f}" for k in ("kendall_tau", "kendall_p", "spearman_rho")]
    assert _rows(report, "rank") == [
        ["L4 (S2) vs L2b+", "3", *stats, f"{contrast['spearman_p']:.3f}"]
    ]
    per_model = [
        [m, _p(a), _p(b)]
        for m, a, b in zip(contrast["models"], contrast["L4"], contrast["L2b_plus"], strict=True)
    ]
    assert _rows(report, "rank_rates") == per_model
    assert contrast["L2b_plus"] == [round(RIGHT[m] / 6, 6) for m in contrast["models"]]


def test_a_run_without_papers_has_no_section_and_the_same_summary(
    runs: tuple[Path, Path],
) -> None:
    with_a, without_a = runs
    full, plain = _summary(with_a), _summary(without_a)
    assert "experiment_a" in full and "experiment_a" not in plain
    assert plain == {k: v for k, v in full.items() if k != "experiment_a"}
    md_full = (with_a / "leaderboard.md").read_text(encoding="utf-8")
    md_plain = (without_a / "leaderboard.md").read_text(encoding="utf-8")
    assert "Experiment A" not in md_plain and md_full.startswith(md_plain)
    assert "Experiment A" in md_full[len(md_plain) :]
    page = (without_a / "index.html").read_text(encoding="utf-8")
    assert "Experiment A" not in page and 'id="experiment_a' not in page
    assert 'id="fig-experiment_a_scorers"' in (with_a / "index.html").read_text(encoding="utf-8")


def test_rewriting_the_report_is_byte_identical(runs: tuple[Path, Path], tmp_path: Path) -> None:
    report = runs[0]
    write_report(report.parent, tmp_path, seed=3, n_resamples=N_BOOT, title="T")
    for name in ("summary.json", "leaderboard.md", "index.html"):
        assert (tmp_path / name).read_bytes() == (report / name).read_bytes(), name


def test_null_values_are_shown_as_na(runs: tuple[Path, Path]) -> None:
    entry = _summary(runs[0])["experiment_a"]
    tied = copy.deepcopy(entry)
    tied["rank_contrast"].update(kendall_tau=None, kendall_p=None, spearman_rho=None)
    tied["instability"]["reference/naive"]["range"] = None
    del tied["rid"]
    tables = {t.key: t for t in experiment_a_tables(tied)}
    assert "experiment_a-rid" not in tables  # no RID arm, no RID table
    row = tables["experiment_a-rank_contrast"].rows[0]
    assert row[2:5] == ("n/a", "n/a", "n/a") and row[5] != "n/a"
    naive = [r for r in tables["experiment_a-instability"].rows if r[0] == "reference/naive"]
    assert naive[0][-3] == "n/a"
    tied["rank_contrast"] = None  # fewer than three models in both experiments
    tables = {t.key: t for t in experiment_a_tables(tied)}
    assert tables["experiment_a-rank_contrast"].rows == (
        ("L4 (S2) vs L2b+", "0", "n/a", "n/a", "n/a", "n/a"),
    )
    assert "experiment_a-rank_rates" not in tables
    assert "fewer than three models" in tables["experiment_a-rank_contrast"].note


def test_agreement_levels_list_majorities_then_pluralities_then_ties(
    runs: tuple[Path, Path],
) -> None:
    entry = copy.deepcopy(_summary(runs[0])["experiment_a"])
    counts = {"1-1-1-1": 1, "2-1-1": 2, "2-2": 3, "3/4": 4, "4/4": 5, "scoreable": 11, "papers": 15}
    entry["agreement_levels"] = {"L3": counts, "L4": {**counts, "2-2": 0}}
    table = {t.key: t for t in experiment_a_tables(entry)}["experiment_a-levels"]
    assert [row[:3] for row in table.rows[:5]] == [
        ("4/4", "5", "5"),
        ("3/4", "4", "4"),
        ("2-1-1", "2", "2"),
        ("2-2", "3", "0"),
        ("1-1-1-1", "1", "1"),
    ]
    assert table.rows[5:7] == (("scoreable (labelled)", "11", "11"), ("papers", "15", "15"))

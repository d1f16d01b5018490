"""Layer L2c in the report: summary.json, the HTML table beside the leaderboard, the cell
explorer's data and the export. The cells are scored by ``rescore`` with the judge's reading, so
the reported SE and interval are exactly what each test sets."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from analysis_helpers import ranked_panel
from causalverify.analysis import analyze_cells, inference_summary, prepare_cells
from causalverify.records import CanonicalInference, CellKey, ExtractionRecord
from causalverify.report import write_report
from causalverify.report.export import write_export
from causalverify.scoring import rescore
from causalverify.store import CellRecord, RunStore, cells_frame
from test_scoring import cell

#: DID: clustered 0.10, the unclustered variants 0.08; IV: HC1 0.10, classical 0.09
PANEL = CanonicalInference(
    ses={"cr1": 0.10, "cr1_dummies": 0.107, "hc1": 0.08, "classical": 0.079}, reference="cr1"
)
IV = CanonicalInference(ses={"hc1": 0.10, "hc0": 0.099, "classical": 0.09}, reference="hc1")


def _cell(
    scenario: str,
    model: str,
    family: str,
    *,
    value: float = -0.3,
    se: float | None,
    ci: tuple[float, float] | None = None,
) -> CellRecord:
    """A scored cell: canonical -0.3, β -0.3; the judge read ``value``, ``se`` and ``ci``."""
    judged = ExtractionRecord(method="judge", value=value, rule="judge", se=se, ci=ci)
    record = cell(
        key=CellKey(scenario_id=scenario, model=model, language="r"),
        family=family,
        canonical=-0.3,
        inference=PANEL if family == "did" else IV,
        judge=judged,
        stdout=f"ESTIMATE: {value}\n",
    )
    return rescore(record, extractor="judge")


def _records() -> list[CellRecord]:
    """``textbook``: the reference SE everywhere. ``naive-se``: the right point with the
    classical SE (DID: wrong, IV: matches the classical 2SLS variant) or 1.2x the HC1 SE
    (plausible), one cell without an SE (unread) and one wrong point with the right SE."""
    out = []
    for i in range(4):
        did, iv = f"d{i}", f"i{i}"
        out.append(_cell(did, "textbook", "did", se=0.10, ci=(-0.496, -0.104)))
        out.append(_cell(iv, "textbook", "iv", se=0.10, ci=(-0.496, -0.104)))
        out.append(_cell(did, "naive-se", "did", se=0.079, ci=(-0.455, -0.145)))
    out.append(_cell("i0", "naive-se", "iv", se=0.09))
    out.append(_cell("i1", "naive-se", "iv", se=0.12, ci=(-0.2, -0.1)))  # misses β = -0.3
    out.append(_cell("i2", "naive-se", "iv", se=None))
    out.append(_cell("i3", "naive-se", "iv", value=-0.9, se=0.10))  # wrong point
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("inference") / "run"
    with RunStore.open(run, create=True) as store:
        store.set_meta({"protocol": "default", "tolerance": 0.5})
        for record in _records():
            store.put_cell(record)
    write_report(run, run / "report", n_resamples=50)
    return run


def test_the_cells_are_scored_as_the_test_means() -> None:
    tiers = {(r.key.model, r.key.scenario_id): r.scores.se_tier for r in _records() if r.scores}
    assert tiers[("naive-se", "d0")] == "wrong"  # the classical SE of a clustered design
    assert tiers[("naive-se", "i0")] == "matches"  # the classical 2SLS SE: a variant of IV
    assert tiers[("naive-se", "i1")] == "plausible"
    assert tiers[("naive-se", "i2")] == "unread"
    assert tiers[("naive-se", "i3")] == "matches"


def test_summary_has_layer_l2c_per_model(run_dir: Path) -> None:
    summary = json.loads((run_dir / "report" / "summary.json").read_text(encoding="utf-8"))
    inf = summary["inference"]
    assert inf["layer"] == "L2c" and inf["cells"] == 16
    textbook, naive = inf["by_unit"]["textbook"], inf["by_unit"]["naive-se"]
    assert (textbook["L2c"]["k"], textbook["L2c"]["n"]) == (8, 8)
    assert textbook["se_tier"]["n"] == 8 and textbook["se_tier"]["matches"]["rate"] == 1.0
    assert textbook["ci_covers"]["rate"] == 1.0 and textbook["significance_agrees"]["rate"] == 1.0
    # naive-se: L2c on i0 (matches) and i1 (plausible); the DID cells are wrong, i2 unread,
    # i3 has the wrong point
    assert (naive["L2c"]["k"], naive["L2c"]["n"]) == (2, 8)
    assert (naive["L2b_plus"]["k"], naive["L2b_plus"]["n"]) == (7, 8)
    assert (naive["L2c_given_L2b_plus"]["k"], naive["L2c_given_L2b_plus"]["n"]) == (2, 7)
    tiers = {t: naive["se_tier"][t]["k"] for t in ("matches", "plausible", "wrong", "unread")}
    assert tiers == {"matches": 2, "plausible": 1, "wrong": 4, "unread": 1}
    assert naive["se_tier"]["wrong"]["rate"] == pytest.approx(0.5)
    # intervals: five of the naive cells carry one, i1's misses the DGP's effect
    assert (naive["ci_covers"]["k"], naive["ci_covers"]["n"]) == (4, 5)
    # every rate is clustered by scenario, with its interval
    assert naive["L2c"]["clusters"] == 8 and naive["L2c"]["lo"] <= 0.25 <= naive["L2c"]["hi"]
    family = inf["by_family"]["naive-se"]
    assert family["DID"]["se_tier"]["wrong"]["k"] == 4 and family["DID"]["L2c"]["k"] == 0


def test_l2c_never_replaces_the_headline(run_dir: Path) -> None:
    summary = json.loads((run_dir / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["rates"]["naive-se"]["L2b_plus"] == pytest.approx(7 / 8)
    assert summary["rankings"]["L2b_plus"]["order"][0] == "textbook"
    page = (run_dir / "report" / "index.html").read_text(encoding="utf-8")
    lead, inference = (
        page.index('<section id="leaderboard">'),
        page.index('<section id="inference">'),
    )
    assert lead < inference < page.index('<section id="explorer">')
    section = page[inference : page.index("</section>", inference)]
    assert "<details>" not in section  # shown open, as its own table
    assert "Inference: layer L2c, beside L2b+" in section
    assert "#cells?se_tier=wrong&amp;unit=naive-se" in section
    assert re.search(r"<td><a [^>]*>50\.0% \(4\)</a></td>", section)  # naive-se: 4 wrong SEs
    markdown = (run_dir / "report" / "leaderboard.md").read_text(encoding="utf-8")
    assert markdown.index("## Leaderboard") < markdown.index("## Inference: layer L2c")
    assert "## SE tiers by design family" in markdown


def test_cells_csv_and_the_explorer_carry_the_reported_and_canonical_se(run_dir: Path) -> None:
    cells = pd.read_csv(run_dir / "report" / "cells.csv")
    row = cells[(cells["model"] == "naive-se") & (cells["scenario_id"] == "d0")].iloc[0]
    assert (row["reported_se"], row["canonical_se"]) == (0.079, 0.10)
    assert (row["se_tier"], row["se_variant"], row["L2c"]) == ("wrong", "classical", 0.0)
    assert row["se_ratio"] == pytest.approx(0.79)
    text = (run_dir / "report" / "explorer" / "cells.js").read_text(encoding="utf-8")
    index = json.loads(text.removeprefix("window.CV_INDEX=").rstrip().removesuffix(";"))
    fields = index["fields"]
    rows = {(r[fields.index("model")], r[fields.index("scenario")]): r for r in index["rows"]}
    got = rows[("naive-se", "d0")]
    assert [got[fields.index(f)] for f in ("reported_se", "canonical_se", "se_tier")] == [
        0.079,
        0.1,
        "wrong",
    ]
    assert got[fields.index("se_variant")] == "classical"
    assert got[fields.index("se_ratio")] == pytest.approx(0.79)
    chunk = (run_dir / "report" / "explorer" / "chunk-0000.js").read_text(encoding="utf-8")
    details = json.loads(chunk.removeprefix("CV_CHUNK(0,").rstrip().removesuffix(");"))
    detail = next(d for address, d in details.items() if "/d0/naive-se/" in address)
    assert detail["inference"] == {"ses": PANEL.ses, "reference": "cr1"}
    assert detail["last"]["judge"]["se"] == 0.079


def test_export_has_the_inference_columns(run_dir: Path, tmp_path: Path) -> None:
    with RunStore.open(run_dir) as store:
        records, meta = list(store.iter_cells()), store.run_meta()
    paths = write_export(records, meta, tmp_path, "csv")
    cells = pd.read_csv(paths["cells"])
    row = cells[(cells["model"] == "naive-se") & (cells["scenario_id"] == "i1")].iloc[0]
    assert (row["reported_se"], row["reported_ci_low"], row["reported_ci_high"]) == (
        0.12,
        -0.2,
        -0.1,
    )
    assert (row["canonical_se"], row["se_reference"]) == (0.10, "hc1")
    assert json.loads(row["canonical_ses"]) == IV.ses
    assert (row["se_tier"], bool(row["ci_covers"]), bool(row["L2c"])) == ("plausible", False, True)
    unread = cells[(cells["model"] == "naive-se") & (cells["scenario_id"] == "i2")].iloc[0]
    assert unread["se_tier"] == "unread" and math.isnan(unread["reported_se"])
    turns = pd.read_csv(paths["turns"])
    assert list(turns["se_tier"]) == list(cells["se_tier"])  # single-shot: a cell is its turn


def test_tables_without_inference_have_no_layer() -> None:
    panel = ranked_panel([0.9, 0.5], n_scenarios=10, seed=1)
    assert inference_summary(prepare_cells(panel).assign(unit=lambda d: d["model"])) is None
    assert "inference" not in analyze_cells(panel, n_resamples=20)


def test_prepare_cells_keeps_the_inference_columns() -> None:
    frame = prepare_cells(cells_frame(_records()))
    assert {"reported_se", "canonical_se", "se_tier", "se_variant", "L2c"} <= set(frame.columns)
    assert set(frame["se_tier"]) == {"matches", "plausible", "wrong", "unread"}
    assert frame["se_variant"].map(type).eq(str).all()  # "" where no variant was named

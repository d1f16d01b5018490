"""End to end, offline: the reference panel on a built smoke suite, in the real sandbox.

One scenario per family; all eight agents in R and in Python (the session's shared run, the
``reference_panel`` fixture). Each agent must land where its documented behaviour says, and a
rerun must neither add nor change anything.
"""

from __future__ import annotations

import pytest

from causalverify.reference import AGENTS
from causalverify.reference._agents import fragile_fault
from causalverify.runner import REFERENCE_PANEL, run_benchmark
from causalverify.store import CellRecord, RunStore, cells_frame, stable_view
from run_e2e_helpers import PanelRun, needs_r_and_sandbox

pytestmark = needs_r_and_sandbox


@pytest.fixture
def panel(reference_panel: PanelRun) -> PanelRun:
    return reference_panel


def by_agent(records: tuple[CellRecord, ...], agent: str) -> list[CellRecord]:
    return [r for r in records if r.key.model == f"reference/{agent}"]


def test_the_panel_is_the_default_and_every_cell_is_stored(panel: PanelRun) -> None:
    assert tuple(f"reference/{a}" for a in AGENTS) == REFERENCE_PANEL
    assert panel.summary.total == panel.summary.computed == 4 * 8 * 2 == len(panel.records)
    assert {r.family for r in panel.records} == {"did", "event_study", "iv", "rdd"}
    assert {r.key.language for r in panel.records} == {"r", "python"}
    assert all(r.execution is None or r.execution.sandboxed for r in panel.records)
    assert panel.summary.cost_usd == 0.0 and panel.summary.requests == 0


def test_textbook_is_always_correct_in_both_languages(panel: PanelRun) -> None:
    cells = by_agent(panel.records, "textbook")
    assert len(cells) == 8 and {c.key.language for c in cells} == {"r", "python"}
    assert [c.status for c in cells] == ["correct"] * 8, [c.execution for c in cells]
    errors = [c.scores.rel_error for c in cells if c.scores is not None]
    assert len(errors) == 8 and max(e for e in errors if e is not None) < 1e-6


def test_prose_mute_and_fragile_fail_where_documented(panel: PanelRun) -> None:
    assert {c.status for c in by_agent(panel.records, "prose")} == {"no_code"}
    assert {c.status for c in by_agent(panel.records, "mute")} == {"no_estimate"}
    expected = {None: "correct", "missing": "missing_package", "typo": "exec_error"}
    fragile = by_agent(panel.records, "fragile")
    for cell in fragile:
        assert cell.status == expected[fragile_fault(cell.key.scenario_id)], cell.execution
        if cell.status == "missing_package":
            assert cell.execution is not None and cell.execution.missing_package
    assert any(c.status == "missing_package" for c in fragile)


def test_code_that_runs_and_returns_the_wrong_number(panel: PanelRun) -> None:
    """naive and wrong-term execute everywhere and miss on most cells (the central phenomenon)."""
    for agent in ("naive", "wrong-term"):
        cells = by_agent(panel.records, agent)
        assert all(c.scores is not None and c.scores.L2b for c in cells), agent
        assert sum(c.status == "wrong" for c in cells) >= len(cells) // 2, agent
    cumulative = by_agent(panel.records, "cumulative")
    assert all(c.scores is not None and c.scores.L2b for c in cumulative)
    assert {c.status for c in cumulative if c.family == "did"} == {"wrong"}


def test_inference_layer_separates_textbook_from_naive_se(panel: PanelRun) -> None:
    """Both get the point; textbook's SE is the reference variant, naive-se's is wrong on the
    clustered designs (an unclustered variant, named) and wrong elsewhere on this suite."""
    textbook = by_agent(panel.records, "textbook")
    naive_se = by_agent(panel.records, "naive-se")
    for cell in textbook:
        assert cell.scores is not None and cell.inference is not None
        assert (cell.scores.se_tier, cell.scores.se_variant) == (
            "matches",
            cell.inference.reference,
        )
        assert cell.scores.se_ratio == pytest.approx(1.0, rel=1e-6)
        assert cell.scores.L2c is True and cell.scores.significance_agrees is True
    assert len(naive_se) == 8
    for cell in naive_se:
        assert cell.status == "correct" and cell.scores is not None
        assert cell.scores.se_tier == "wrong" and cell.scores.L2c is False, cell.key
        if cell.family in ("did", "event_study"):
            assert cell.scores.se_variant in ("hc1", "classical")

    frame = cells_frame(panel.records)
    assert not frame.duplicated(["scenario_id", "model", "language", "sample"]).any()
    for model in panel.summary.models:
        rows = frame[frame["model"] == model.model]
        assert model.cells == len(rows) == 8
        assert model.L2b == pytest.approx(rows["L2b"].mean())
        assert model.L2b_plus == pytest.approx(rows["L2b_plus"].mean())
    textbook = next(m for m in panel.summary.models if m.model == "reference/textbook")
    assert (textbook.L1, textbook.L2a, textbook.L2b, textbook.L2b_plus) == (1.0, 1.0, 1.0, 1.0)


def test_rerun_adds_and_changes_nothing(panel: PanelRun) -> None:
    with RunStore.open(panel.config.out_dir) as store:
        seq_before = store._conn.execute("SELECT seq FROM cells ORDER BY seq").fetchall()
    again = run_benchmark(panel.config)
    assert again.computed == 0 and again.skipped == again.total == 64
    with RunStore.open(panel.config.out_dir) as store:
        after = tuple(store.iter_cells())
        assert store._conn.execute("SELECT seq FROM cells ORDER BY seq").fetchall() == seq_before
        meta = store.meta()
    assert after == panel.records  # byte-identical records, timings included
    assert [stable_view(r) for r in after] == [stable_view(r) for r in panel.records]
    assert meta["environment"]["r_version"] and meta["sandbox_policy"]["unsafe"] is False
    assert meta["models"] == list(REFERENCE_PANEL) and meta["languages"] == ["r", "python"]

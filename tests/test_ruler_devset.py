"""The ruler against real answers: the development set's hand-read cells, replayed here.

The development set (``../shared/reference/causalverify-2026/release/`` beside the checkout) holds
published scenarios, cached answers of several models, the published per-cell table and
``reported_estimates.dev.jsonl``: what some scripts reported, read by hand. The cells with a
hand-read label are replayed in the real sandbox with R and rescored; every one of them must be
read right or left undecided, never confidently wrong. The first tests check the reading of the
labels and the verdicts on hand-made cells, without R.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from causalverify.published.devset import LABELS_FILE, Replayed, devset_figures, replay_devset
from causalverify.published.handlabels import (
    DevSetError,
    HandLabel,
    read_labels,
    same_reading,
    verdict,
)
from causalverify.records import (
    CellKey,
    CellRecord,
    CodeRecord,
    ExecResult,
    ExtractionRecord,
    Message,
    ModelResponse,
    ScoreRecord,
)
from run_e2e_helpers import needs_r_and_sandbox, with_marks

ROOT = Path(__file__).resolve().parents[1]
DEVSET = ROOT.parent / "shared" / "reference" / "causalverify-2026" / "release"
needs_devset = pytest.mark.skipif(
    not DEVSET.is_dir(),
    reason="needs the development set in ../shared/reference/causalverify-2026/release",
)


def _cell(value: float | None, *, ok: bool = True, status: str = "correct") -> CellRecord:
    extraction = ExtractionRecord(method="deterministic", value=value, rule="test")
    return CellRecord(
        key=CellKey(scenario_id="s07", model="replay/x:m", language="r"),
        family="event_study",
        difficulty="easy",
        beta=0.03,
        canonical=0.03,
        protocol="paper",
        prompt=[Message(role="user", content="q")],
        prompt_sha256="0" * 64,
        response=ModelResponse(content="```r\ncat(1)\n```"),
        code=CodeRecord(language="r", code="cat(1)", block_index=0, parses=True),
        execution=ExecResult(
            status="ok" if ok else "error",
            exit_code=0 if ok else 1,
            stdout="",
            stderr="",
            wall_seconds=0.1,
            cpu_seconds=0.1,
        ),
        extraction=extraction,
        scores=ScoreRecord(
            profile="paper",
            tolerance=0.5,
            extractor="deterministic",
            L1=True,
            L2a=True,
            L2b=ok,
            L2b_plus=False,
            estimate=value,
        ),
        status=status,  # type: ignore[arg-type]
    )


def _label(status: str, value: float | None, **extra: object) -> HandLabel:
    return HandLabel.model_validate(
        {"scenario_id": "s7", "model_slug": "m", "status": status, "value": value, **extra}
    )


def test_a_reading_equals_a_label_at_the_coarser_printed_precision() -> None:
    assert same_reading(0.21752, 0.2175)  # the table's digits against the label's
    assert same_reading(-0.24, -0.2386637)  # the same estimate printed at two decimals
    assert same_reading(-0.035800000000000005, -0.0358)  # a percent divided by 100
    assert not same_reading(0.211, 0.218)  # a later fit, not the main line
    assert not same_reading(0.21798, 0.21752)
    assert not same_reading(1.0, 0.4169)
    assert not same_reading(float("nan"), 0.2)


def test_verdicts_respect_units_alternatives_and_none() -> None:
    clear = _label("clear", 0.0327)
    assert verdict(_cell(0.0327), clear) == "right"
    assert verdict(_cell(0.0174), clear) == "wrong"
    assert verdict(_cell(None, status="no_estimate"), clear) == "no_estimate"
    assert verdict(_cell(0.0327, ok=False, status="exec_error"), clear) == "not_executed"
    assert verdict(None, clear) == "no_cell"
    # a label in percent is the fraction the extractor reports, not the printed number
    percent = _label("clear", 3.27, unit="percent")
    assert verdict(_cell(0.0327), percent) == "right"
    assert verdict(_cell(3.27), percent) == "wrong"
    assert verdict(_cell(0.000327), _label("clear", 3.27, unit="bp")) == "right"
    ambiguous = _label("ambiguous", 0.0327, alternatives=[0.0174, 0.0431])
    assert [verdict(_cell(v), ambiguous) for v in (0.0327, 0.0431, 0.0894)] == [
        "right",
        "right",
        "wrong",
    ]
    # alternatives of a clear label are not accepted readings
    assert verdict(_cell(0.0174), _label("clear", 0.0327, alternatives=[0.0174])) == "wrong"
    none = _label("none", None)
    assert verdict(_cell(None, status="no_estimate"), none) == "right"
    assert verdict(_cell(0.1948), none) == "wrong"


def test_an_undecided_extraction_is_recognised_by_its_flag_or_status() -> None:
    record = _cell(0.0174)
    assert verdict(record, _label("clear", 0.0327)) == "wrong"
    by_status = record.model_copy(update={"status": "undecided"})
    assert verdict(by_status, _label("clear", 0.0327)) == "undecided"
    flagged = ExtractionRecord(method="deterministic", value=None, rule="t", undecided=True)
    assert verdict(record.model_copy(update={"extraction": flagged}), _label("none", None)) == (
        "undecided"
    )


def test_labels_are_validated(tmp_path: Path) -> None:
    path = tmp_path / LABELS_FILE
    path.write_text('{"scenario_id": "s1", "model_slug": "m", "status": "clear"}\n')
    with pytest.raises(DevSetError, match="needs a value"):
        read_labels(path)
    path.write_text('{"scenario_id": "s1", "model_slug": "m", "status": "maybe", "value": 1}\n')
    with pytest.raises(DevSetError, match="not a hand-read label"):
        read_labels(path)
    path.write_text(
        '{"scenario_id": "s1", "model_slug": "m", "status": "clear", "value": 1, "unit": "log"}\n'
    )
    with pytest.raises(DevSetError, match="unknown unit 'log'"):
        read_labels(path)


# -- the development set, replayed ---------------------------------------------------------------


@pytest.fixture(scope="module")
def labels() -> list[HandLabel]:
    return read_labels(DEVSET / LABELS_FILE)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, labels: list[HandLabel]) -> Replayed:
    work = tmp_path_factory.mktemp("ruler") / "work"
    cells = [(label.scenario_id, label.model_slug) for label in labels]
    return replay_devset(DEVSET, work, cells=cells, workers=2)


@pytest.fixture(scope="module")
def figures(replayed: Replayed) -> dict[str, object]:
    return devset_figures(replayed.run_dirs, DEVSET)


devset_cells = with_marks([needs_devset, *needs_r_and_sandbox])


@devset_cells
def test_every_hand_read_cell_is_replayed_and_runs_unless_a_package_is_missing(
    labels: list[HandLabel], replayed: Replayed, figures: dict[str, object]
) -> None:
    assert replayed.computed == len({(label.scenario_id, label.model_slug) for label in labels})
    rows = figures["labels"]
    assert isinstance(rows, list) and len(rows) == len(labels)
    # the published harness executed every labelled cell; here only a missing package may stop one
    for row in rows:
        assert row["verdict"] != "no_cell", row
        if row["verdict"] == "not_executed":
            assert row["status"] == "missing_package" and row["missing_package"], row
    compared = figures["compare"]
    assert isinstance(compared, dict) and compared["r"]["matched_cells"] == len(rows)


@devset_cells
def test_a_second_replay_and_a_rescore_only_run_execute_nothing(
    replayed: Replayed, figures: dict[str, object]
) -> None:
    work = replayed.run_dirs[0].parent.parent
    labelled = [(str(r["scenario_id"]), str(r["model"])) for r in figures["labels"]]  # type: ignore[attr-defined]
    again = replay_devset(DEVSET, work, cells=labelled, workers=2)
    assert (again.computed, again.kept) == (0, replayed.computed)
    rescored = replay_devset(DEVSET, work, cells=labelled, rescore_only=True)
    assert (rescored.computed, rescored.replay_seconds) == (0, 0.0)
    assert devset_figures(rescored.run_dirs, DEVSET) == figures
    # the benchmark script reads the same stored executions
    script = [sys.executable, str(ROOT / "benchmarks" / "ruler.py"), "--release", str(DEVSET)]
    script += ["--work", str(work), "--cells", "labelled", "--rescore-only", "--json"]
    out = subprocess.run(script, capture_output=True, text=True, check=True, timeout=300)
    printed = json.loads(out.stdout)
    assert printed["accuracy"] == figures["accuracy"]
    assert printed["replay"] == {"computed": 0, "kept": rescored.kept}


@devset_cells
def test_every_hand_read_cell_is_read_right_or_left_undecided(figures: dict[str, object]) -> None:
    rows = figures["labels"]
    assert isinstance(rows, list)
    assessed = [r for r in rows if r["verdict"] not in ("not_executed", "no_cell")]
    assert assessed
    misread = [
        f"{r['scenario_id']} {r['model']}: {r['verdict']}, extracted {r['extracted']}, "
        f"hand-read {r['hand_read']} ({r['line']})"
        for r in assessed
        if r["verdict"] not in ("right", "undecided")
    ]
    assert not misread, "\n".join(misread)


@devset_cells
def test_undecided_cells_are_few_and_scoring_settles_them(figures: dict[str, object]) -> None:
    ran = figures["executed"]
    assert isinstance(ran, dict) and ran["executed"] > 0
    assert ran["unresolved"] <= 0.05 * ran["executed"], ran
    assert ran["undecided"] <= 0.2 * ran["executed"], ran

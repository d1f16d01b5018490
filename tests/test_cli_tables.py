"""Terminal tables fit the terminal: names shortened, numbers whole, one model order, ties shown."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from causalverify.cli import main
from causalverify.cli._tables import print_table, short_names
from causalverify.records import CellRecord
from causalverify.store import CellKey, RunStore
from test_scoring import cell

LONG_A = "openai/an-extremely-long-fine-tuned-model-name-2025-11-30"
LONG_B = "anthropic/another-very-long-model-name-used-for-tests"
SHORT = "reference/textbook"
#: a table row whose label is a shortened model name
TABLE_ROW = re.compile(r"^\s*(?:\d+=?\s+)?M\d\s{2,}")


def test_shared_prefix_is_dropped_at_a_separator() -> None:
    names = short_names(["reference/textbook", "reference/naive", "reference/wrong-term"])
    assert names("reference/textbook") == "textbook"
    assert names("reference/wrong-term") == "wrong-term"
    assert names.legend == ("model names without their shared prefix 'reference/'",)


def test_one_name_or_no_shared_separator_keeps_names() -> None:
    assert short_names(["openai/gpt-4o"])("openai/gpt-4o") == "openai/gpt-4o"
    both = short_names(["model-a", "model-ab"])  # no "/" shared: names are kept whole
    assert both("model-ab") == "model-ab" and both.legend == ()
    two = short_names(["openai/model-a", "openai/model-b"])  # cut at "/", never inside a name
    assert (two("openai/model-a"), two("openai/model-b")) == ("model-a", "model-b")
    replay = short_names(["replay/runs/x:gpt-4o", "replay/runs/x:gpt-4o-mini"])
    assert replay("replay/runs/x:gpt-4o") == "x:gpt-4o"
    same = short_names(["x/a", "y/a"])
    assert same("x/a") == "x/a" and same.legend == ()


def test_names_too_long_get_a_legend() -> None:
    names = short_names([LONG_A, LONG_B, SHORT])
    assert [names(n) for n in (LONG_A, LONG_B, SHORT)] == ["M1", "M2", "M3"]
    assert names.legend == (f"M1 = {LONG_A}", f"M2 = {LONG_B}", f"M3 = {SHORT}")


def test_a_wide_table_is_split_into_blocks_and_no_number_is_cut() -> None:
    out = io.StringIO()
    console = Console(file=out, width=60, color_system=None)
    header = ("model", *(f"column number {i}" for i in range(8)))
    rows = [(name, *(f"{1000.0 * i + j:.3f}%" for i in range(8))) for j, name in enumerate("ab")]
    print_table(console, title="Wide", header=header, rows=rows)
    text = out.getvalue()
    assert all(len(line) <= 60 for line in text.splitlines())
    assert "…" not in text
    for row in rows:
        for value in row[1:]:
            assert value in text
    assert "Wide (continued)" in text
    # the label column is repeated in every block
    assert len(re.findall(r"^a\s", text, flags=re.MULTILINE)) == text.count("Wide")


def _records() -> list[CellRecord]:
    """Three models: SHORT always right, LONG_A and LONG_B tied at one in two."""
    out = []
    for i in range(4):
        for model, right in ((LONG_A, i % 2 == 0), (LONG_B, i % 2 == 1), (SHORT, True)):
            key = CellKey(scenario_id=f"s{i + 1:03d}", model=model, language="r")
            stdout = "DiD estimate: -0.26\n" if right else "DiD estimate: 9.5\n"
            out.append(cell(key=key, family="did", canonical=-0.25, stdout=stdout))
    return out


def _run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    with RunStore.open(run_dir, create=True) as store:
        store.put_cells(_records())
    return run_dir


def _order(text: str, labels: tuple[str, ...]) -> list[str]:
    """The labels in the order they first start a line of ``text``."""
    found = [m.group(1) for m in re.finditer(r"^\s*(?:\d+=?\s+)?(M\d)\s", text, re.MULTILINE)]
    return [label for label in dict.fromkeys(found) if label in labels]


def test_score_and_analyze_fit_80_columns_with_one_order_and_ties(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    runner = CliRunner()
    env = {"COLUMNS": "80"}
    scored = runner.invoke(main, ["score", str(run_dir)], env=env)
    assert scored.exit_code == 0, scored.output
    analyzed = runner.invoke(main, ["analyze", str(run_dir), "--resamples", "20"], env=env)
    assert analyzed.exit_code == 0, analyzed.output
    for text in (scored.output, analyzed.output):
        assert "…" not in text
        rows = [line for line in text.splitlines() if "─" in line or TABLE_ROW.match(line)]
        assert len(rows) >= 4 and all(len(line) <= 80 for line in rows), text
        assert f"= {LONG_A}" in text and f"= {SHORT}" in text  # the legend, whole
    # the leaderboard's order (best first, ties by name) in both commands
    legend = short_names([SHORT, LONG_B, LONG_A])
    expected = [legend(SHORT), legend(LONG_B), legend(LONG_A)]
    assert _order(scored.output, tuple(expected)) == expected
    assert _order(analyzed.output, tuple(expected)) == expected
    # ties share a place
    places = re.findall(r"^\s*(\d+=?)\s+M\d", analyzed.output, re.MULTILINE)
    assert places[:3] == ["1", "2=", "2="]


def test_score_json_and_positive_tolerance(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["score", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["cells"] == 12
    assert {row["model"]: row["L2b+"] for row in data["models"]}[SHORT] == 1.0
    zero = runner.invoke(main, ["score", str(run_dir), "--tolerance", "0"])
    assert zero.exit_code == 2 and "0" in zero.output  # as `run` refuses it


def test_tied_units_share_a_place_and_a_point_in_the_rank_figure() -> None:
    import pandas as pd

    from analysis_helpers import cell as frame_cell
    from causalverify.analysis import analyze_cells
    from causalverify.records import Summary
    from causalverify.report._figures import rank_points
    from causalverify.report._tables import leaderboard

    rows = []
    for i in range(4):
        for model, layers in (("a", "1111"), ("b", "1110"), ("c", "1110"), ("d", "1000")):
            rows.append(frame_cell(f"s{i}", model, layers=layers))
    summary = Summary.of(analyze_cells(pd.DataFrame(rows), n_resamples=10))
    places = {row[1]: row[0] for row in leaderboard(summary).rows}
    assert places == {"a": "1", "b": "2=", "c": "2=", "d": "2="}
    points = rank_points(summary)
    assert sorted(map(sorted, points.values())) == [["a"], ["b", "c"], ["d"]]

"""A repair-mode run says so wherever its results are shown: ``run``'s closing table, ``analyze``,
the report's settings line, ``summary.json`` and the turn table near the top of the page, and the
repair gain carries its paired interval."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks


@with_marks(needs_r_and_sandbox)
def test_a_repair_run_shows_its_mode_turns_and_gain_everywhere(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    suite = smoke_suite(shared_root(tmp_path_factory))
    out = tmp_path / "repair"
    args = ["run", "--suite", str(suite), "--models", "reference/mute,reference/textbook"]
    args += ["--languages", "r", "--mode", "repair", "--max-turns", "2", "--out", str(out)]
    args += ["--cache", str(tmp_path / "cache.sqlite"), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Repair mode (up to 2 turns)" in result.output
    table = result.output[result.output.index("Repair mode (up to 2 turns)") :]
    mute_rows = [line for line in table.splitlines() if line.startswith("mute ")]
    assert re.search(r"0\.0% +100\.0%$", mute_rows[0]), mute_rows  # L2b+ right at turn 2
    assert "+100.0 pts [+51.0, +100.0]" in mute_rows[1], mute_rows  # the gain, with its interval

    as_json = CliRunner().invoke(main, [*args[:-1], "--json"])
    assert as_json.exit_code == 0, as_json.output
    mute = json.loads(as_json.output)["repair"]["reference/mute"]
    assert mute["L2b_plus_by_turn"] == [0.0, 1.0]
    gain = mute["repair_gain_ci"]["L2b_plus"]
    assert 0 < gain["lo"] < 1.0 <= gain["hi"] and gain["p"] < 1.0

    analyzed = CliRunner().invoke(main, ["analyze", str(out), "--resamples", "50"])
    assert analyzed.exit_code == 0, analyzed.output
    assert "Repair mode: turn by turn" in analyzed.output
    assert "mode repair (up to 2 turns per cell)" in analyzed.output

    report = CliRunner().invoke(main, ["report", str(out), "--resamples", "50"])
    assert report.exit_code == 0, report.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["run"]["mode"] == {"name": "repair", "max_turns": 2}
    assert summary["repair"]["reference/mute"]["repair_gain_ci"]["L2b_plus"]["hi"] >= 1.0
    page = (out / "report" / "index.html").read_text()
    assert "mode repair (up to 2 turns per cell)" in page
    repair_at = page.index('<section id="repair">')
    assert repair_at < page.index('id="tables"')  # open near the top, before the other tables
    assert not page[repair_at:].startswith('<section id="repair"><details>')

"""End to end on the published-format fixtures: import, replay in the real sandbox with R, compare.

The cached answers are R in the published three-section format: three correct, one reporting the
wrong term, one using ``fixest`` and one using ``rdrobust`` (neither is installed for R here).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.store import RunStore
from published_helpers import EXP_B, FIXTURES, make_release
from run_e2e_helpers import needs_r_and_sandbox

pytestmark = needs_r_and_sandbox

EXPECTED_STATUS = {
    "s01": "correct",
    "s11": "missing_package",
    "s19": "correct",
    "s25": "missing_package",
    "s46": "wrong",
    "s82": "correct",
}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replay")
    release = make_release(root / "release")
    runner = CliRunner()
    result = runner.invoke(main, ["import-suite", str(release), "--out", str(root / "suite")])
    assert result.exit_code == 0, result.output
    args = [
        "run",
        "--suite",
        str(root / "suite"),
        "--models",
        f"replay/{release / EXP_B / 'outputs'}",
    ]
    args += ["--protocol", "paper", "--profile", "paper", "--languages", "r", "--workers", "2"]
    args += ["--out", str(root / "run"), "--cache", str(root / "cache.sqlite"), "--quiet"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    return root


def test_replay_runs_the_first_r_block_with_the_csv_at_the_published_path(replayed: Path) -> None:
    with RunStore.open(replayed / "run") as store:
        records = {r.key.scenario_id: r for r in store.iter_cells()}
    assert {sid: r.status for sid, r in records.items()} == EXPECTED_STATUS
    for record in records.values():
        assert record.code is not None and record.code.block_index == 0
        assert record.execution is not None and record.execution.sandboxed
    # the answer for s19 has a second R block that stops; only the first one ran
    assert "this second block" not in (records["s19"].code.code or "")  # type: ignore[union-attr]
    missing = {sid: records[sid].execution.missing_package for sid in ("s11", "s25")}  # type: ignore[union-attr]
    assert missing == {"s11": "fixest", "s25": "rdrobust"}
    assert records["s01"].scores is not None and records["s01"].scores.estimate == -0.2387
    assert records["s46"].scores is not None and records["s46"].scores.estimate == 0.4834


def test_compare_lists_every_disagreement_with_its_reason(replayed: Path) -> None:
    cells = FIXTURES / "cells.csv"
    out = replayed / "comparison.csv"
    args = ["compare", str(replayed / "run"), "--cells", str(cells), "--json", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert list(summary["model_map"].values()) == ["gpt-4o"]
    assert summary["published_models_not_compared"] == ["claude-3-5-sonnet"]
    reasons = {c["scenario_id"]: c["reason"] for c in summary["disagreements"]}
    assert reasons == {
        "s11": "missing package fixest",
        "s25": "missing package rdrobust",
        "s46": "extraction differs",
        "s82": "execution differs",
    }
    overall = summary["all"]["overall"]
    assert (overall["L2a"]["agree"], overall["L2a"]["n"]) == (6, 6)
    assert (overall["L2b"]["agree"], overall["L2b"]["n"]) == (3, 6)
    assert (overall["value"]["agree"], overall["value"]["n"]) == (2, 3)
    assert (overall["L2b_plus"]["agree"], overall["L2b_plus"]["n"]) == (2, 6)
    installed = summary["installed_only"]["overall"]
    assert installed["cells"] == 4 and installed["L2b"]["agree"] == 3
    assert set(summary["installed_only"]["by_family"]) == {"DID", "IV"}
    assert summary["all"]["by_family"]["EVENT_STUDY"]["L2b"]["agree"] == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 7 and lines[0].startswith("scenario_id,method,model,published_model")


def test_compare_tables(replayed: Path) -> None:
    args = ["compare", str(replayed / "run"), "--cells", str(FIXTURES / "cells.csv")]
    result = CliRunner().invoke(main, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Agreement, code using installed packages only" in result.output
    assert "missing package rdrobust" in result.output

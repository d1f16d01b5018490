"""``causalverify canonical`` through click's runner and once as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import estimators_synth as synth
from causalverify.cli import main
from causalverify.estimators import canonical
from estimators_reference import needs_reference, published_cases

S01 = next((c for c in published_cases() if c.scenario_id == "s01"), None)
pytestmark = needs_reference


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["canonical", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("spelling", ["did", "DID", " Did "])
def test_json_output_is_exactly_the_three_fields(spelling: str) -> None:
    code, out, _ = _invoke(str(S01.path), "--family", spelling, "--json")
    assert code == 0
    payload = json.loads(out)
    assert list(payload) == ["estimate", "se", "n"]
    expected = canonical(pd.read_csv(S01.path), "did")
    assert payload == {"estimate": expected.estimate, "se": expected.se, "n": expected.n}
    assert out == json.dumps(payload) + "\n"


def test_table_output_shows_estimate_se_n_and_method(tmp_path: Path) -> None:
    path = tmp_path / "es.csv"
    synth.event_study(3).to_csv(path, index=False)
    code, out, _ = _invoke(str(path), "--family", "EVENT_STUDY")
    assert code == 0
    expected = canonical(pd.read_csv(path), "event_study")
    for text in (repr(expected.estimate), repr(expected.se), str(expected.n), "clustered"):
        assert text in out


def test_missing_column_is_a_clean_error(tmp_path: Path) -> None:
    code, out, err = _invoke(str(S01.path), "--family", "iv")
    assert code == 1
    assert "no column 'x'" in err and "y, x, z, controls" in err
    assert "Traceback" not in out + err


def test_unknown_family_is_a_usage_error() -> None:
    code, _, err = _invoke(str(S01.path), "--family", "bunching")
    assert code == 2
    assert "unknown design family" in err


def test_unreadable_csv_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("")
    code, _, err = _invoke(str(path), "--family", "rdd")
    assert code == 1
    assert "cannot read" in err


def test_real_process_prints_json_and_is_deterministic() -> None:
    script = Path(sys.executable).with_name("causalverify")
    assert script.is_file(), f"console script not installed next to {sys.executable}"
    command = [str(script), "canonical", str(S01.path), "--family", "DID", "--json"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert first.stdout == again.stdout
    payload = json.loads(first.stdout)
    assert abs(payload["estimate"] - S01.estimated) <= 5e-7
    assert abs(payload["se"] - S01.standard_error) <= 5e-7
    assert payload["n"] == S01.n_observations

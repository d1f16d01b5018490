"""``causalverify prompt``: the rendered prompt or a reference answer for one scenario."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.prompts import render_experiment_b
from causalverify.reference import write_response
from causalverify.scenarios import Suite, build_suite, load_suite


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    out = tmp_path_factory.mktemp("cli") / "suite"
    build_suite(out, n_scenarios=2)
    return load_suite(out)


def test_prints_the_rendered_prompt_and_its_hash(suite: Suite) -> None:
    scenario = suite.scenarios[0]
    result = CliRunner().invoke(
        main, ["prompt", str(suite.root), scenario.id, "--protocol", "paper", "--language", "r"]
    )
    assert result.exit_code == 0, result.output
    rendered = render_experiment_b(
        scenario, suite.read_data(scenario), language="r", protocol="paper", manifest=None
    )
    expected = (
        "".join(f"===== {m.role} =====\n{m.content}" for m in rendered.messages)
        + f"===== sha256 {rendered.sha256} =====\n"
    )
    assert result.output == expected


def test_prints_a_reference_answer(suite: Suite) -> None:
    scenario = suite.scenarios[1]
    args = ["prompt", str(suite.root), scenario.id, "--agent", "naive", "--language", "python"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output == write_response("naive", scenario, language="python", protocol="default")


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["s999"], "no scenario 's999'"), (["s001", "--agent", "oracle"], "unknown reference agent")],
)
def test_errors_are_one_line_messages(suite: Suite, extra: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["prompt", str(suite.root), *extra])
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_missing_suite_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["prompt", str(tmp_path / "nowhere"), "s001"])
    assert result.exit_code != 0
    assert "does not exist" in result.output

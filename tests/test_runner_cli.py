"""The ``causalverify run`` command: options, errors, summary and progress output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.errors import SuiteError
from causalverify.runner.suite import ensure_suite
from causalverify.store import RunStore
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks


def test_a_folder_without_a_suite_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["run", "--suite", str(tmp_path), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 1
    assert "is not a built suite" in result.output and "causalverify build" in result.output
    with pytest.raises(SuiteError):
        ensure_suite(tmp_path / "missing", tmp_path)


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--languages", "fortran", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "expected a comma list of r, python" in result.output
    result = CliRunner().invoke(main, ["run", "--samples", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2
    script, data = tmp_path / "a.R", tmp_path / "d.csv"
    script.write_text("print(1)\n")
    data.write_text("y\n1\n")
    args = ["exec", str(script), "--data", str(data), "--wall-seconds", "-5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "--wall-seconds" in result.output


def test_language_names_are_case_insensitive() -> None:
    from causalverify.cli.run import _languages

    assert _languages(None, None, "R, Python") == ("r", "python")  # type: ignore[arg-type]


def test_default_suite_is_built_once_into_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import causalverify.runner.suite

    builds: list[tuple[Path, str]] = []

    def build(out: Path, *, suite: str, progress: object = None) -> None:
        builds.append((out, suite))
        out.mkdir(parents=True)
        (out / "suite.json").write_text("{}\n")

    monkeypatch.setattr(causalverify.runner.suite, "build_suite", build)
    assert ensure_suite("default", tmp_path) == tmp_path / "suite"
    assert ensure_suite("default", tmp_path) == tmp_path / "suite"
    assert builds == [(tmp_path / "suite", "default")]
    assert ensure_suite(tmp_path / "suite", tmp_path / "elsewhere") == tmp_path / "suite"
    assert ensure_suite("smoke", tmp_path) == tmp_path / "suite-smoke"  # named like default
    assert builds[-1] == (tmp_path / "suite-smoke", "smoke")


@pytest.mark.parametrize("quiet", [True, False])
@with_marks(needs_r_and_sandbox)
def test_run_summary_and_incompatible_rerun(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, quiet: bool
) -> None:
    suite = smoke_suite(shared_root(tmp_path_factory))
    base = [
        "run",
        "--suite",
        str(suite),
        "--out",
        str(tmp_path / "run"),
        "--languages",
        "r",
        "--models",
        "reference/prose",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--workers",
        "1",
    ]
    result = CliRunner().invoke(main, base + (["--quiet"] if quiet else []))
    assert result.exit_code == 0, result.output
    assert re.search(r"^model\s+cells\s+L1\s+L2a\s+L2b\s+L2b\+\s+no_code$", result.output, re.M)
    assert re.search(r"^reference/prose\s+4\s+100\.0%\s+(0\.0%\s+){3}4$", result.output, re.M)
    assert "4 cells: 4 computed now, 0 already stored" in result.output
    with RunStore.open(tmp_path / "run") as store:
        assert store.count_cells() == 4
        assert store.meta()["tolerance"] == 0.5
    again = CliRunner().invoke(main, [*base, "--quiet", "--tolerance", "0.25"])
    assert again.exit_code == 1
    assert "different run configuration" in again.output and "tolerance" in again.output
    other = ["run", "--suite", str(suite), "--out", str(tmp_path / "x"), "--models", "nope/x"]
    unknown = CliRunner().invoke(main, other)
    assert unknown.exit_code == 1 and "unknown model 'nope/x'" in unknown.output

"""The Python ``paper`` estimators agree with an independent R implementation to 1e-8.

``tests/r/canonical_paper.R`` uses lm with factor fixed effects, estimatr::lm_robust (CR1),
AER::ivreg with sandwich (HC0) and sandwich HC3. The live checks need ``Rscript`` and are skipped
only when it is not installed; the golden file (made by ``tests/r/make_golden_reference.sh``) is
checked without R.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import estimators_synth as synth
from causalverify.estimators import canonical
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import Family
from estimators_reference import REFERENCE_DIR, needs_reference, published_cases

TOL = 1e-8
HERE = Path(__file__).resolve().parent
R_SCRIPT = HERE / "r" / "canonical_paper.R"
GOLDEN = HERE / "golden" / "estimators" / "r_paper_reference.tsv"


def _parse(stdout: str) -> list[tuple[Family, str, float, float, int]]:
    rows = []
    for line in stdout.splitlines():
        family, path, estimate, se, n = line.split("\t")
        rows.append((family, path, float(estimate), float(se), int(n)))  # type: ignore[arg-type]
    return rows


def _run_r(cases: list[tuple[Family, Path]]) -> list[tuple[Family, str, float, float, int]]:
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.skip("Rscript is not installed, so the live R cross-check cannot run")
    args = [f"{family}={path}" for family, path in cases]
    proc = subprocess.run(
        [rscript, "--vanilla", str(R_SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return _parse(proc.stdout)


def _assert_close(family: Family, path: Path, estimate: float, se: float, n: int) -> None:
    result = canonical(pd.read_csv(path), family)
    assert result.estimate == pytest.approx(estimate, abs=TOL), path.name
    assert result.se == pytest.approx(se, rel=TOL), path.name
    assert result.n == n


@needs_reference
def test_python_matches_golden_r_output() -> None:
    rows = _parse(GOLDEN.read_text())
    assert {name for _, name, *_ in rows} == {c.path.name for c in published_cases()}
    for family, name, estimate, se, n in rows:
        _assert_close(family, REFERENCE_DIR / "data" / name, estimate, se, n)


@pytest.mark.r
@needs_reference
def test_live_r_reproduces_golden_output() -> None:
    golden = _parse(GOLDEN.read_text())
    live = _run_r([(family, REFERENCE_DIR / "data" / name) for family, name, *_ in golden])
    for (fam, name, est, se, n), (live_fam, live_path, live_est, live_se, live_n) in zip(
        golden, live, strict=True
    ):
        assert (fam, name, n) == (live_fam, Path(live_path).name, live_n)
        assert live_est == pytest.approx(est, abs=1e-12)
        assert live_se == pytest.approx(se, rel=1e-12)


@pytest.mark.r
def test_live_r_matches_python_on_generated_data(tmp_path: Path) -> None:
    cases: list[tuple[Family, Path]] = []
    for family in FAMILIES:
        for seed in (0, 1):
            path = tmp_path / f"{family}_{seed}.csv"
            synth.GENERATORS[family](seed).to_csv(path, index=False)
            cases.append((family, path))
    unbalanced = tmp_path / "did_unbalanced.csv"
    synth.did_unbalanced(3).to_csv(unbalanced, index=False)
    cases.append(("did", unbalanced))
    rows = _run_r(cases)
    assert len(rows) == len(cases)
    for family, path, estimate, se, n in rows:
        _assert_close(family, Path(path), estimate, se, n)


@pytest.mark.r
def test_live_r_matches_python_on_suite_csvs(tmp_path: Path) -> None:
    """The CSVs the suite builder writes (one scenario per family), as a model would read them."""
    from causalverify.scenarios import build_suite, load_suite

    build_suite(tmp_path / "suite", suite="smoke")
    suite = load_suite(tmp_path / "suite")
    cases = [(s.family, suite.data_path(s)) for s in suite.scenarios]
    assert {family for family, _ in cases} == set(FAMILIES)
    rows = _run_r(cases)
    assert len(rows) == len(cases)
    for family, path, estimate, se, n in rows:
        _assert_close(family, Path(path), estimate, se, n)
    for scenario in suite.scenarios:
        # The suite records the canonical computed on the CSV as written.
        assert (
            scenario.canonical.estimate
            == canonical(suite.read_data(scenario), scenario.family).estimate
        )

"""R-package fidelity: the fit-log hooks against stand-ins of the CRAN packages the test machines
lack (rdrobust, lfe, fixest, pacman: tiny byte-compiled packages of the same shape, installed in
a managed library made here), against the real packages whenever they are installed, and the
recommended set, pinned versions and run-time installs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from causalverify.sandbox import Limits, extract_code
from causalverify.sandbox._toolchain import SANDBOX_R_LIBRARY, discover
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.fitlog import hook_selfcheck
from causalverify.sandbox.packages import r_packages
from causalverify.sandbox.rlibrary import LIBRARY_ENV, RECOMMENDED
from r_standins import FIT_DATA as DATA
from r_standins import build_tarball, install_standins

pytestmark = [
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]
LIMITS = Limits(wall_seconds=120, cpu_seconds=120)
CLI = [str(Path(sys.executable).parent / "causalverify")]
ROOT = Path(__file__).resolve().parents[1]
DEVSET = ROOT.parent / "shared" / "reference" / "causalverify-2026" / "release"


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BwrapSandbox, BwrapSandbox]]:
    """A hooked and an unhooked sandbox whose managed library holds the stand-ins."""
    library = tmp_path_factory.mktemp("rlib") / "library"
    install_standins(library)
    old = os.environ.get(LIBRARY_ENV)
    os.environ[LIBRARY_ENV] = str(library)
    discover.cache_clear()
    try:
        hooked, plain = BwrapSandbox(warm=False), BwrapSandbox(warm=False, fit_log=False)
        yield hooked, plain
    finally:
        if old is None:
            os.environ.pop(LIBRARY_ENV, None)
        else:
            os.environ[LIBRARY_ENV] = old
        discover.cache_clear()


def test_hooked_stand_ins_keep_their_byte_code(boxes: tuple[BwrapSandbox, BwrapSandbox]) -> None:
    checks = {c.name: c for c in hook_selfcheck(boxes[0])}
    for name in ("rdrobust::rdrobust", "lfe::felm", "fixest::feols", "stats::lm"):
        check = checks[f"fit log: {name}"]
        assert check.ok, check  # wrapped, and the original's body is still byte-code
    assert checks["fit log: stats::lm logged as coef()"].ok


RD_CODE = (
    DATA
    + """
library(rdrobust)
sharp <- rdrobust(d$yr, d$run, c = 0)
fuzzy <- rdrobust(d$yr, d$run, c = 0, fuzzy = d$treat)
print(fuzzy)
cat(sprintf("TRUTH %.17g %.17g\\n", sharp$coef[1, 1], fuzzy$coef[1, 1]))
print(fuzzy$call)
"""
)


def test_a_fuzzy_rdrobust_is_marked_fuzzy_and_prints_as_unhooked(
    boxes: tuple[BwrapSandbox, BwrapSandbox],
) -> None:
    hooked, plain = (box.run(RD_CODE, "r", {}, LIMITS) for box in boxes)
    assert hooked.ok, hooked.stderr[-2000:]
    assert hooked.stdout == plain.stdout and hooked.stderr == plain.stderr
    assert "rdrobust(y = d$yr, x = d$run, c = 0, fuzzy = d$treat)" in hooked.stdout
    truth = [float(v) for v in hooked.stdout.split("TRUTH ")[1].splitlines()[0].split()]
    assert [(f.function, f.rd, f.fuzzy) for f in hooked.fits] == [
        ("rdrobust::rdrobust", True, False),
        ("rdrobust::rdrobust", True, True),
    ]
    assert [f.terms[0].estimate for f in hooked.fits] == truth


FELM_CODE = (
    DATA
    + """
library(lfe)
fit <- felm(y ~ w | 0 | (x ~ z), data = d)
cat(sprintf("TRUTH %.17g\\n", coef(fit)[["`x(fit)`"]]))
"""
)


def test_a_felm_iv_fit_carries_the_iv_flag_and_its_endogenous_regressor(
    boxes: tuple[BwrapSandbox, BwrapSandbox],
) -> None:
    result = boxes[0].run(FELM_CODE, "r", {}, LIMITS)
    assert result.ok, result.stderr[-2000:]
    [fit] = result.fits
    assert fit.function == "lfe::felm" and fit.iv and fit.endogenous == ["x"]
    terms = {t.term: t for t in fit.terms}
    truth = float(result.stdout.split("TRUTH ")[1])
    assert terms["`x(fit)`"].estimate == truth and terms["`x(fit)`"].std_error


SUMMARY_CODE = (
    DATA
    + """
suppressPackageStartupMessages({library(AER); library(lmtest)})
a <- ivreg(y ~ x + w | z + w, data = d)
b <- ivreg(y ~ x | z, data = d)
print(summary(a)); print(summary(b, diagnostics = TRUE))
"""
)


def test_summary_of_ivreg_fits_adds_no_entries(boxes: tuple[BwrapSandbox, BwrapSandbox]) -> None:
    hooked, plain = (box.run(SUMMARY_CODE, "r", {}, LIMITS) for box in boxes)
    assert hooked.ok, hooked.stderr[-2000:]
    assert hooked.stdout == plain.stdout
    assert [(f.function, f.iv, f.endogenous) for f in hooked.fits] == [
        ("AER::ivreg", True, ["x"])
    ] * 2


@pytest.mark.parametrize(
    ("code", "package"),
    [
        pytest.param(
            'req_pkgs <- c("cvabsent")\nfor (p in req_pkgs) install.packages(p)\n',
            "cvabsent",
            id="underscore-variable",
        ),
        pytest.param(
            'install.packages(paste0("cv", "dynamic"))\n', "cvdynamic", id="unresolvable-name"
        ),
        pytest.param(
            'need <- c("stats", "cvderived")\n'
            "inst <- need[!(need %in% rownames(installed.packages()))]\n"
            "if (length(inst)) install.packages(inst)\nlibrary(cvderived)\n",
            "cvderived",
            id="derived-vector",
        ),
        pytest.param(
            'pacman::p_load(rdrobust, char = NULL)\npacman::p_load(char = paste0("cv", "pac"))\n',
            "cvpac",
            id="pacman-installs-only-what-is-missing",
        ),
    ],
)
def test_a_failed_run_time_install_is_a_missing_package(
    boxes: tuple[BwrapSandbox, BwrapSandbox], code: str, package: str
) -> None:
    result = boxes[0].run(code, "r", {}, LIMITS)
    assert result.status == "error", result
    assert result.missing_package == package, (result.detail, result.stderr[-1500:])
    # the library R could not write to is named by its sandbox path, never the host's
    library = os.environ[LIBRARY_ENV]
    assert library not in result.stderr and "/home/" not in result.stderr
    if "unable to install" in result.stderr:
        assert SANDBOX_R_LIBRARY in result.stderr


def test_pacman_loading_installed_packages_is_no_install(
    boxes: tuple[BwrapSandbox, BwrapSandbox],
) -> None:
    result = boxes[0].run('pacman::p_load(rdrobust, lfe)\nstop("later failure")\n', "r", {}, LIMITS)
    assert result.status == "error" and result.missing_package is None, result.detail


def _repository(root: Path) -> Path:
    """A CRAN-style repository: cvpin 0.2.0 current, 0.1.0 in the archive."""
    contrib = root / "repo" / "src" / "contrib"
    (contrib / "Archive" / "cvpin").mkdir(parents=True)
    for version, where in (("0.1.0", contrib / "Archive" / "cvpin"), ("0.2.0", contrib)):
        code = f'cvpin_version <- function() "{version}"\n'
        tarball = build_tarball(root, "cvpin", code, "export(cvpin_version)\n", version)
        shutil.move(str(tarball), where)
    subprocess.run(
        ["Rscript", "--vanilla", "-e", f'tools::write_PACKAGES("{contrib}", type = "source")'],
        check=True,
        capture_output=True,
    )
    return root / "repo"


@pytest.mark.slow
def test_pinned_versions_from_the_archive_and_the_index(tmp_path: Path) -> None:
    repo = f"file://{_repository(tmp_path)}"
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "c"),
    }
    env.pop(LIBRARY_ENV, None)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=600)

    def listed() -> dict[str, object]:
        done = cli("r-packages", "list", "--json")
        assert done.returncode == 0, done.stderr
        [row] = [p for p in json.loads(done.stdout)["packages"] if p["name"] == "cvpin"]
        return dict(row)

    old = cli("r-packages", "install", "cvpin==0.1.0", "--repos", repo)
    assert old.returncode == 0, old.stderr + old.stdout
    assert listed() == {"name": "cvpin", "version": "0.1.0", "pinned": "0.1.0", "repository": repo}
    same = cli("r-packages", "install", "cvpin==0.1.0", "--repos", repo)
    assert "already installed" in same.stdout
    new = cli("r-packages", "install", "cvpin==0.2.0", "--repos", repo)
    assert new.returncode == 0, new.stderr
    assert listed()["version"] == "0.2.0" and listed()["pinned"] == "0.2.0"
    absent = cli("r-packages", "install", "cvpin==9.9.9", "--repos", repo)
    assert absent.returncode != 0 and "cvpin==9.9.9" in absent.stderr
    manifest = subprocess.run(
        [sys.executable, "-c", "import json; from causalverify.sandbox import "
         "environment_manifest as m; print(json.dumps(m().r_packages))"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert json.loads(manifest.stdout)["cvpin"] == "0.2.0"


@pytest.mark.skipif(not DEVSET.is_dir(), reason="needs the development set in ../shared/reference")
def test_the_recommended_set_covers_what_the_development_set_loads() -> None:
    from causalverify.sandbox.manifest import environment_manifest

    installed = environment_manifest().r_packages
    used: set[str] = set()
    for path in sorted((DEVSET / "experiments" / "exp_b" / "outputs").glob("*.json")):
        content = json.loads(path.read_text())["llm_response"].get("content") or ""
        block = extract_code(content, "r")
        if block is not None:
            used |= set(r_packages(block.code))
    # every package an answer loads is in R, Debian's packages or the recommended set
    assert used - set(installed) - set(RECOMMENDED) == set()
    assert {"rdrobust", "fixest", "rddensity", "stargazer", "lfe"} <= set(RECOMMENDED)

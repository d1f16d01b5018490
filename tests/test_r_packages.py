"""The managed R library end to end, against a local CRAN-style repository built here; run-time
install attempts in the sandbox; the package scan on tricky code."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from causalverify.sandbox import Limits, get_sandbox
from causalverify.sandbox.packages import (
    missing_packages,
    python_packages,
    python_runtime_installs,
    r_packages,
    r_runtime_installs,
)

needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
CLI = [str(Path(sys.executable).parent / "causalverify")]


def _build_repository(root: Path) -> Path:
    """A CRAN-style repository holding one tiny source package, ``cvtiny``."""
    pkg = root / "cvtiny"
    (pkg / "R").mkdir(parents=True)
    (pkg / "DESCRIPTION").write_text(
        "Package: cvtiny\nVersion: 0.1.0\nTitle: A Tiny Test Package\n"
        "Description: One function, for the test of the managed R library.\n"
        "License: MIT\nAuthor: CausalVerify tests\nMaintainer: Tests <tests@example.org>\n"
        "Encoding: UTF-8\n"
    )
    (pkg / "NAMESPACE").write_text("export(hello)\n")
    (pkg / "R" / "hello.R").write_text('hello <- function() "hello from cvtiny"\n')
    subprocess.run(
        ["R", "CMD", "build", "--no-manual", str(pkg)], cwd=root, check=True, capture_output=True
    )
    contrib = root / "repo" / "src" / "contrib"
    contrib.mkdir(parents=True)
    shutil.move(str(root / "cvtiny_0.1.0.tar.gz"), contrib)
    subprocess.run(
        ["Rscript", "--vanilla", "-e", f'tools::write_PACKAGES("{contrib}", type = "source")'],
        check=True,
        capture_output=True,
    )
    return root / "repo"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("rlib")
    return {
        **os.environ,
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "HOME_FOR_TEST": str(home),
    }


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=600)


@needs_r
@needs_bwrap
@pytest.mark.slow
def test_install_list_and_use_read_only_in_the_sandbox(env: dict[str, str]) -> None:
    home = Path(env["HOME_FOR_TEST"])
    repo = _build_repository(home)
    done = _cli(["r-packages", "install", "cvtiny", "--repos", f"file://{repo}"], env)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "cvtiny" in done.stdout

    listed = _cli(["r-packages", "list", "--json"], env)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert Path(data["library"]).is_relative_to(Path(env["XDG_DATA_HOME"]))
    [row] = [p for p in data["packages"] if p["name"] == "cvtiny"]
    assert row["version"] == "0.1.0" and row["repository"] == f"file://{repo}"

    script = home / "use.R"
    script.write_text(
        "library(cvtiny)\ncat(hello(), '\\n')\n"
        "where <- find.package('cvtiny')\n"
        "ok <- suppressWarnings(file.create(file.path(where, 'planted')))\n"
        "cat('writable:', ok, '\\n')\n"
    )
    data_csv = home / "d.csv"
    data_csv.write_text("a\n1\n")
    ran = _cli(["exec", str(script), "--data", str(data_csv), "--json"], env)
    result = json.loads(ran.stdout)
    assert result["status"] == "ok", result["stderr"]
    assert "hello from cvtiny" in result["stdout"]
    assert "writable: FALSE" in result["stdout"]
    assert not (Path(data["library"]) / "cvtiny" / "planted").exists()

    manifest = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from causalverify.sandbox import environment_manifest as m; "
            "print(json.dumps(m().r_packages))",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert json.loads(manifest.stdout).get("cvtiny") == "0.1.0"

    doctor = _cli(["doctor"], env)  # doctor says which recommended packages are present
    assert "R (managed): fixest" in doctor.stdout and "R (managed): rdrobust" in doctor.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@needs_r
def test_an_unreachable_repository_fails_with_one_clear_line(env: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    done = _cli(
        ["r-packages", "install", "cvabsent", "--repos", url, "--connect-timeout", "2"], env
    )
    assert done.returncode != 0
    assert url in done.stderr and "no CRAN mirror answered" in done.stderr
    assert "Traceback" not in done.stderr
    soft = _cli(["r-packages", "install", "--recommended", "--repos", url, "--if-reachable"], env)
    assert soft.returncode == 0
    assert len(soft.stdout.strip().splitlines()) == 1 and url in soft.stdout


@needs_bwrap
@pytest.mark.parametrize(
    ("language", "code", "package"),
    [
        pytest.param(
            "r",
            'if (!require("cvnotthere")) install.packages("cvnotthere")\nlibrary(cvnotthere)\n',
            "cvnotthere",
            marks=needs_r,
            id="r-require-or-install",
        ),
        pytest.param(
            "r",
            'pkgs <- c("stats", "cvmissing")\n'
            "for (p in pkgs) if (!requireNamespace(p, quietly = TRUE)) install.packages(p)\n"
            "stopifnot(requireNamespace('cvmissing'))\n",
            "cvmissing",
            marks=needs_r,
            id="r-loop-install",
        ),
        pytest.param(
            "python",
            "import subprocess, sys\n"
            "subprocess.check_call([sys.executable, '-m', 'pip', 'install', '-q', "
            "'--retries', '0', '--timeout', '1', 'cvnotthere'])\n"
            "import cvnotthere\n",
            "cvnotthere",
            id="python-pip-subprocess",
        ),
    ],
)
def test_a_run_time_install_in_the_sandbox_is_a_missing_package(
    language: str, code: str, package: str
) -> None:
    result = get_sandbox().run(
        code,
        language,
        {"data/d.csv": b"a\n1\n"},  # type: ignore[arg-type]
        Limits(wall_seconds=60, cpu_seconds=60),
    )
    assert result.status == "error", result
    assert result.missing_package == package, (result.detail, result.stderr[-1500:])


TRICKY_R = """
# library(commented_out)
pkgs <- c("fixest", "AER")
invisible(lapply(pkgs, library, character.only = TRUE))
for (p in c("rdrobust", "ivreg")) {
  if (!require(p, character.only = TRUE)) install.packages(p)
}
lapply(c("did"), function(q) if (!requireNamespace(q, quietly = TRUE)) install.packages(q))
pacman::p_load(modelsummary, broom)
x <- sandwich::vcovHC(fit)
remotes::install_github("someone/HonestDiD")
"""


def test_the_r_scan_names_only_packages_the_code_asks_for() -> None:
    used = r_packages(TRICKY_R)
    assert used[:5] == ["fixest", "AER", "rdrobust", "ivreg", "did"]
    assert {"did", "modelsummary", "broom", "sandwich", "pacman", "remotes"} <= set(used)
    assert not {"p", "q", "pkgs", "commented_out"} & set(used)
    installs = r_runtime_installs(TRICKY_R)
    assert installs[:3] == ["rdrobust", "ivreg", "did"]
    assert "HonestDiD" in installs and not {"p", "q"} & set(installs)
    missing = missing_packages(TRICKY_R, "r", {"AER", "broom", "sandwich"})
    assert missing[:3] == ["fixest", "rdrobust", "ivreg"] and "AER" not in missing


def test_the_python_scan_reads_imports_dynamic_imports_and_pip() -> None:
    code = (
        "import os, sys as system\nfrom linearmodels.iv import IV2SLS\n"
        "import importlib\nm = importlib.import_module('differences')\n"
        "subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', 'csdid==0.2.1', "
        "'scikit-learn'])\nos.system('pip install rdrobust')\n"
    )
    assert python_packages(code) == ["os", "sys", "linearmodels", "importlib", "differences"]
    assert python_runtime_installs(code) == ["csdid", "sklearn", "rdrobust"]
    assert missing_packages(code, "python", {"linearmodels", "rdrobust"}) == [
        "differences",
        "csdid",
        "sklearn",
    ]

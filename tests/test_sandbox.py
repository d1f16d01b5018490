"""The bubblewrap sandbox on ordinary scripts: files, output, statuses, R auto-printing, CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.errors import SandboxUnavailableError
from causalverify.families import Language
from causalverify.sandbox import Limits, Sandbox, check_parses, environment_manifest, get_sandbox
from causalverify.sandbox._classify import RunFacts, missing_package, to_result
from causalverify.sandbox._process import Outcome

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")
pytestmark = [pytest.mark.sandbox, needs_bwrap]

CSV = b"x,y\n1,2.0\n2,4.1\n3,5.9\n4,8.2\n"
SMALL = Limits(wall_seconds=60, cpu_seconds=30, memory_mb=1024)


READ_AND_FIT: dict[Language, str] = {
    "r": 'd <- read.csv("data/s001.csv")\nfit <- lm(y ~ x, data = d)\nsummary(fit)\ncoef(fit)[["x"]]\n',
    "python": (
        "import csv\nrows = list(csv.DictReader(open('data/s001.csv')))\n"
        "xs = [float(r['x']) for r in rows]; ys = [float(r['y']) for r in rows]\n"
        "mx, my = sum(xs) / len(xs), sum(ys) / len(ys)\n"
        "b = sum((a - mx) * (c - my) for a, c in zip(xs, ys)) / sum((a - mx) ** 2 for a in xs)\n"
        "print(f'slope {b:.4f}')\n"
    ),
}


@pytest.mark.r_only
@needs_r
def test_r_top_level_autoprints_summary(sandbox: Sandbox) -> None:
    res = sandbox.run(READ_AND_FIT["r"], "r", {"data/s001.csv": CSV}, SMALL)
    assert res.status == "ok", res.stderr
    assert "Coefficients:" in res.stdout  # summary(fit) printed without print()
    assert "[1] 2.04" in res.stdout
    assert res.sandboxed and res.exit_code == 0
    assert res.cpu_seconds > 0 and res.peak_memory_mb is not None and res.peak_memory_mb > 10


def test_python_reads_file_at_relative_path(sandbox: Sandbox, tmp_path: Path) -> None:
    host_csv = tmp_path / "anything.csv"
    host_csv.write_bytes(CSV)
    res = sandbox.run(READ_AND_FIT["python"], "python", {"data/s001.csv": host_csv}, SMALL)
    assert res.status == "ok", res.stderr
    assert res.stdout == "slope 2.0400\n"


def test_project_python_packages_import_inside(sandbox: Sandbox) -> None:
    code = "import numpy, pandas, statsmodels.api, sys\nprint(sys.prefix)\n"
    res = sandbox.run(code, "python", {}, SMALL)
    assert res.status == "ok", res.stderr
    assert res.stdout.strip() != ""


@pytest.mark.parametrize(
    ("language", "code", "missing"),
    [
        pytest.param("r", "library(fixest)\n", "fixest", marks=needs_r),
        ("python", "import pyfixest_not_here.sub\n", "pyfixest_not_here"),
    ],
)
def test_missing_package_is_reported(
    sandbox: Sandbox, language: Language, code: str, missing: str
) -> None:
    res = sandbox.run(code, language, {}, SMALL)
    assert res.status == "error"
    assert res.missing_package == missing


def test_missing_package_patterns() -> None:
    assert missing_package(
        "Error in library(rdrobust) : there is no package called ‘rdrobust’"
    ) == ("rdrobust")
    assert missing_package("there is no package called 'did'") == "did"
    assert missing_package("ModuleNotFoundError: No module named 'csdid.att_gt'") == "csdid"
    assert missing_package("Error: object 'x' not found") is None


def _killed(cpu: float, *, limit: float = 1.0, code: int | None = None) -> str:
    outcome = Outcome(
        reason="exited",
        exit_code=code,
        term_signal=None if code is not None else 9,
        stdout=b"",
        stderr=b"",
        stdout_truncated=False,
        stderr_truncated=False,
        side=b"",
        side_truncated=False,
        wall_seconds=2.2,
        cpu_seconds=cpu,
        peak_memory_mb=None,
    )
    facts = RunFacts(limits=Limits(cpu_seconds=limit), sandboxed=True, signal_in_exit_code=True)
    return to_result(outcome, facts).status


def test_a_kill_near_the_cpu_limit_is_the_cpu_limit() -> None:
    # the kernel counts CPU for RLIMIT_CPU in whole ticks: on a loaded machine it killed a 1 s
    # loop that wait4 then reported at 0.895 s (bwrap passes the signal on as 128 + 9)
    assert _killed(0.895, code=137) == "cpu_limit"
    assert _killed(0.6) == "cpu_limit"
    assert _killed(0.6, limit=0.3) == "cpu_limit"  # the kernel's limit is a whole second
    assert _killed(14.0, limit=30) == "killed"  # far from the limit: not the limit's kill
    assert _killed(0.1, code=137) == "killed"


@pytest.mark.parametrize("language", [pytest.param("r", marks=needs_r), "python"])
def test_failing_script_is_a_result(sandbox: Sandbox, language: Language) -> None:
    code = 'stop("boom")\n' if language == "r" else "raise RuntimeError('boom')\n"
    res = sandbox.run(code, language, {}, SMALL)
    assert res.status == "error" and res.exit_code == 1
    assert "boom" in res.stderr and res.missing_package is None


def test_bad_scratch_path_is_rejected(sandbox: Sandbox) -> None:
    for bad in ("../x.csv", "/etc/x.csv", "data/../../x"):
        with pytest.raises(ValueError, match="relative"):
            sandbox.run("print(1)\n", "python", {bad: b""}, SMALL)


@pytest.mark.r_only
@needs_r
def test_r_parse_check_runs_real_parser(sandbox: Sandbox) -> None:
    assert check_parses(READ_AND_FIT["r"], "r", sandbox).ok
    bad = check_parses("x <- c(1, 2\ny <- 3\n", "r", sandbox)
    assert not bad.ok and bad.error is not None and "unexpected" in bad.error
    # the code is data for parse(), never evaluated
    evil = 'cat("CAUSALVERIFY_PARSE_OK")\nquit(status = 0)\n) ('
    assert not check_parses(evil, "r", sandbox).ok


#: what an R script sees of its session: the attached packages and whether the fit log's hook
#: (which replaces ``lm``) is there
_R_SESSION = 'cat(search(), environmentName(environment(lm)), sep = "\\n")\n'


@pytest.mark.r_only
@needs_r
@pytest.mark.parametrize("unsafe", [False, True], ids=["sandboxed", "unsafe"])
def test_bare_r_has_only_base_and_no_hook(unsafe: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the parse check's R: base only and no fit log; a model's script keeps R's default packages
    # and the hook
    if unsafe:
        monkeypatch.setenv("CAUSALVERIFY_ALLOW_UNSAFE", "1")
    box = get_sandbox(unsafe=unsafe, warm=False)
    bare = box.run("cat(search(), sep = '\\n')\n", "r", {}, SMALL, bare=True)
    assert bare.status == "ok", bare.stderr
    assert bare.stdout.split() == [".GlobalEnv", "Autoloads", "package:base"]
    assert bare.outputs == []  # no output-provenance hook either
    full = box.run(_R_SESSION, "r", {}, SMALL)
    assert full.status == "ok", full.stderr
    assert {"package:stats", "package:utils", "package:methods"} <= set(full.stdout.split())
    assert full.stdout.split()[-1] != "stats", "lm is not the fit log's wrapper"
    assert [o.function for o in full.outputs] == ["cat"]
    # a parse check goes bare: it still tells good code from bad
    assert check_parses("fit <- lm(y ~ x, data = d)\n", "r", box).ok
    assert not check_parses("fit <- lm(y ~ x, data = d\n", "r", box).ok


def test_unsafe_mode_needs_two_opt_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAUSALVERIFY_ALLOW_UNSAFE", raising=False)
    with pytest.raises(SandboxUnavailableError, match="CAUSALVERIFY_ALLOW_UNSAFE"):
        get_sandbox(unsafe=True)
    monkeypatch.setenv("CAUSALVERIFY_ALLOW_UNSAFE", "1")
    unsafe = get_sandbox(unsafe=True)
    res = unsafe.run(
        "import os\nprint(sorted(os.listdir('data')))\n", "python", {"data/a.csv": CSV}
    )
    assert res.status == "ok" and res.stdout == "['a.csv']\n"
    assert res.sandboxed is False and "UNSAFE" in res.detail


def test_unsafe_mode_still_limits_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAUSALVERIFY_ALLOW_UNSAFE", "1")
    res = get_sandbox(unsafe=True).run(
        "import time\ntime.sleep(30)\n", "python", {}, Limits(wall_seconds=1)
    )
    assert res.status == "timeout" and res.wall_seconds < 10 and not res.sandboxed


@needs_r
def test_environment_manifest_lists_r_and_python() -> None:
    manifest = environment_manifest()
    assert manifest.r_version is not None and manifest.r_version.startswith("4.")
    assert "estimatr" in manifest.r_packages
    assert {"numpy", "pandas", "statsmodels"} <= set(manifest.python_packages)
    assert environment_manifest() == manifest


@needs_r
def test_cli_exec_runs_script_like_a_cell(tmp_path: Path) -> None:
    script = tmp_path / "fit.R"
    script.write_text(READ_AND_FIT["r"])
    csv = tmp_path / "s001.csv"
    csv.write_bytes(CSV)
    result = CliRunner().invoke(main, ["exec", str(script), "--data", str(csv), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["status"] == "ok" and data["sandboxed"] is True
    assert "Coefficients:" in data["stdout"]


def test_cli_exec_reports_failure_status(tmp_path: Path) -> None:
    script = tmp_path / "fail.py"
    script.write_text("import os\nprint(os.listdir('data'))\nraise SystemExit(3)\n")
    csv = tmp_path / "s002.csv"
    csv.write_bytes(CSV)
    result = CliRunner().invoke(
        main, ["exec", str(script), "--data", str(csv), "--data-path", "input/d.csv", "--json"]
    )
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["status"] == "error" and data["exit_code"] == 1
    assert "FileNotFoundError" in data["stderr"]  # the CSV is at input/d.csv, not data/


def test_selftest_covers_every_protection(sandbox: Sandbox) -> None:
    from causalverify.sandbox.selftest import run_selftest

    checks = run_selftest(sandbox)
    names = [c.name for c in checks]
    warm = ["warm interpreter"] if getattr(sandbox, "warm", None) is not None else []
    assert names == [
        *warm,
        "network cut",
        "read-only system",
        "private scratch",
        "unprivileged",
        "system call filter",
        "no secrets",
        "CPU",
        "memory",
        "processes",
        "output",
        "wall clock",
    ]
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]


def test_concurrent_runs_are_isolated(sandbox: Sandbox) -> None:
    from concurrent.futures import ThreadPoolExecutor

    code = (
        "import os, sys\nname = open('data/id.txt').read()\nopen(name + '.out', 'w').write(name)\n"
        "print(name, sorted(os.listdir('.')), sorted(os.listdir('data')))\n"
    )

    def one(i: int) -> str:
        res = sandbox.run(code, "python", {"data/id.txt": f"cell{i}".encode()}, SMALL)
        assert res.status == "ok", res
        return res.stdout

    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = list(pool.map(one, range(4)))
    assert outputs == [f"cell{i} ['cell{i}.out', 'data'] ['id.txt']\n" for i in range(4)]


@pytest.mark.slow
def test_cli_doctor_is_green_here() -> None:
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "ready" in result.output and "MISSING" not in result.output


def test_cli_exec_unsafe_needs_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAUSALVERIFY_ALLOW_UNSAFE", raising=False)
    script = tmp_path / "a.py"
    script.write_text("print(1)\n")
    csv = tmp_path / "d.csv"
    csv.write_bytes(CSV)
    result = CliRunner().invoke(
        main, ["exec", str(script), "--data", str(csv), "--unsafe-no-sandbox"]
    )
    assert result.exit_code != 0
    assert "CAUSALVERIFY_ALLOW_UNSAFE" in result.output


@pytest.mark.skipif(os.geteuid() != 0, reason="uid slots are used only when running as root")
def test_uid_slots_are_exclusive_and_released() -> None:
    from causalverify.sandbox._uidslot import BASE_UID, UidSlot

    with UidSlot() as a, UidSlot() as b:
        assert a.uid != b.uid and min(a.uid, b.uid) >= BASE_UID
        held = {a.uid, b.uid}
    with UidSlot() as c:
        assert c.uid <= max(held)  # the lowest free slot: released ones are handed out again


def test_policy_describes_isolation_as_json(sandbox: Sandbox) -> None:
    policy = sandbox.policy()  # type: ignore[attr-defined]
    data = json.loads(json.dumps(policy))
    assert data["kind"] == "bubblewrap"
    assert {"mount", "pid", "net"} <= set(data["namespaces"])
    assert "OPENAI_API_KEY" not in data["environment"]
    assert data["default_limits"]["max_processes"] == Limits().max_processes

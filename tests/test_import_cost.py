"""Starting a command costs no heavy import it does not use.

``causalverify run`` on a finished run only prints a summary, and ``causalverify --help`` only
lists the commands: neither needs scipy's statistics, matplotlib, statsmodels or linearmodels,
which together cost over a second of CPU per process (every test that starts the command line
as a subprocess paid it). They are imported inside the functions that compute or draw with them.
The check is on ``sys.modules`` of a fresh interpreter, not on time.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "causalverify"

#: third-party packages the run path and the command list must not load
HEAVY = ("scipy.stats", "matplotlib", "statsmodels", "linearmodels")


def _run_path_modules() -> list[str]:
    """Every one of our modules ``cli/run.py`` imports, at its top or inside its functions (the
    command line loads its packages when a command runs), plus the runner itself."""
    tree = ast.parse((PACKAGE / "cli" / "run.py").read_text(encoding="utf-8"))
    names = {"causalverify.cli", "causalverify.cli.run", "causalverify.runner"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("causalverify"):
            names.add(str(node.module))
    return sorted(names)


_PROBE = """
import importlib, json, sys
from click.testing import CliRunner
from causalverify.cli import main

heavy = {heavy!r}
for name in {modules!r}:
    importlib.import_module(name)
help_run = CliRunner().invoke(main, ["--help"])
run_help = CliRunner().invoke(main, ["run", "--help"])
loaded = [h for h in heavy if h in sys.modules]

from causalverify.analysis import wilson_interval
wilson_interval(1, 2)  # computing an interval loads scipy.stats
print(json.dumps({{"codes": [help_run.exit_code, run_help.exit_code], "loaded": loaded,
                  "after_use": "scipy.stats" in sys.modules}}))
"""


def test_run_path_and_help_import_no_scipy_stats_or_matplotlib() -> None:
    """Importing every module of ``causalverify run``'s path (the summary printing included:
    analysis, report, store) and the runner, then printing ``--help`` (which imports every
    command's module) and ``run --help``, leaves scipy.stats, matplotlib, statsmodels and
    linearmodels unloaded. The probe then computes a Wilson interval and sees scipy.stats loaded,
    so the check names the right module and the lazy import still works."""
    modules = _run_path_modules()
    assert {"causalverify.analysis", "causalverify.report", "causalverify.store"} <= set(modules)
    code = _PROBE.format(heavy=HEAVY, modules=modules)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["codes"] == [0, 0]
    assert result["loaded"] == []
    assert result["after_use"] is True

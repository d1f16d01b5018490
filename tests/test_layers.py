"""The structure tells the truth: layers that import one way, and no import hidden in a function
to get round a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "causalverify"


def test_the_layer_contract_holds() -> None:
    """``lint-imports`` with the contract in pyproject.toml: no cycles, nothing imports upward."""
    tool = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(tool), "--config", str(PACKAGE.parents[1] / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parents[1],
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 kept, 0 broken" in done.stdout


def _function_level_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("causalverify"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}")
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("causalverify")]
                found += [f"{path.relative_to(PACKAGE)}:{node.lineno} {n}" for n in names]
    return found


def test_no_package_imports_its_own_modules_inside_functions() -> None:
    """Outside the command line (whose subcommands load their packages only when run, to keep
    ``--help`` fast), every import of our own modules is at the top of its module; third-party
    heavy or optional dependencies may still be imported lazily."""
    modules = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "cli"]
    assert len(modules) > 100
    hidden = [entry for path in sorted(modules) for entry in _function_level_imports(path)]
    assert hidden == []

"""The one exception hierarchy: every public error class lives in ``causalverify.errors``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import causalverify
from causalverify import errors

SRC = Path(causalverify.__file__).parent


def _public_exception_classes() -> list[tuple[str, str]]:
    """``(module file, class name)`` of every public class in the package deriving from an
    exception (by the name of a base: ``...Error``, ``...Exception``)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            bases = [ast.unparse(base) for base in node.bases]
            if any(b.endswith(("Error", "Exception")) for b in bases):
                found.append((path.relative_to(SRC).as_posix(), node.name))
    return found


def test_every_public_error_is_defined_in_errors() -> None:
    outside = [(rel, name) for rel, name in _public_exception_classes() if rel != "errors.py"]
    assert outside == []


def test_every_error_derives_from_the_base() -> None:
    classes = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__
    ]
    assert len(classes) >= 13
    assert all(issubclass(c, errors.CausalVerifyError) for c in classes)


def test_moved_errors_keep_their_import_paths() -> None:
    from causalverify.analysis import CellsFormatError, SuiteMismatchError
    from causalverify.published.compare import CompareError
    from causalverify.published.handlabels import DevSetError
    from causalverify.sandbox.rlibrary import InstallError, RepositoryUnreachableError

    moved = (
        CellsFormatError,
        SuiteMismatchError,
        CompareError,
        DevSetError,
        InstallError,
        RepositoryUnreachableError,
    )
    assert all(getattr(errors, c.__name__) is c for c in moved)

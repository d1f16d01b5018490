"""``SHA256SUMS``: the manifest of a folder (a suite or a release) and the one check against it.

The format is the one ``sha256sum -c`` reads: ``<64 hex digits><two spaces><relative path>``,
one line per file, sorted by path, covering every file except ``SHA256SUMS`` itself. The check
is strict: a changed, missing or extra file, a symbolic link, a path leaving the folder, a
malformed or repeated line are each named.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

SUMS_FILE: Final = "SHA256SUMS"

_LINE: Final = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tree_files(root: Path) -> list[str]:
    """Every regular file under ``root`` as a POSIX path relative to it, sorted.

    Symbolic links are listed too (:func:`check_sums` rejects them), folders are not; a linked
    folder is not entered.
    """
    found = [
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_symlink() or p.is_file()
    ]
    return sorted(found)


def write_sums(root: Path) -> str:
    """Write ``root/SHA256SUMS`` over every other file; return the digest of the manifest."""
    lines = [f"{sha256_file(root / rel)}  {rel}\n" for rel in tree_files(root) if rel != SUMS_FILE]
    (root / SUMS_FILE).write_text("".join(lines), encoding="utf-8", newline="\n")
    return sha256_file(root / SUMS_FILE)


def read_sums(root: Path) -> tuple[dict[str, str], list[str]]:
    """Parse ``SHA256SUMS``: ``(path -> sha256, problems)``; problems name the bad lines."""
    path = root / SUMS_FILE
    if not path.is_file():
        return {}, [f"{SUMS_FILE}: missing"]
    listed: dict[str, str] = {}
    problems: list[str] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        match = _LINE.match(line)
        if match is None:
            problems.append(f"{SUMS_FILE}: line {number} is malformed")
            continue
        digest, rel = match.groups()
        if not _safe(rel) or rel == SUMS_FILE:
            problems.append(f"{SUMS_FILE}: line {number} names a path outside the folder: {rel}")
        elif rel in listed:
            problems.append(f"{SUMS_FILE}: {rel} is listed twice")
        else:
            listed[rel] = digest
    if text and not text.endswith("\n"):
        problems.append(f"{SUMS_FILE}: the last line has no line end")
    return listed, problems


def check_sums(
    root: Path, *, changed: Callable[[str, str], str] | None = None
) -> tuple[int, list[str]]:
    """Check every file under ``root`` against ``root/SHA256SUMS``.

    Parameters
    ----------
    root
        The folder the manifest describes.
    changed
        Called as ``changed(rel, actual_sha256)`` for a listed file whose hash differs, to name
        the problem (a release tells a changed manifest from a changed file); by default the
        file is named as changed.

    Returns
    -------
    tuple
        The number of files listed, and the problems found (empty when everything matches).
    """
    listed, problems = read_sums(root)
    present = set(tree_files(root)) - {SUMS_FILE}
    for rel, expected in sorted(listed.items()):
        path = root / rel
        if path.is_symlink():
            problems.append(f"{rel}: is a symbolic link")
        elif not path.is_file():
            problems.append(f"{rel}: missing (listed in {SUMS_FILE})")
        else:
            actual = sha256_file(path)
            if actual != expected:
                problems.append(changed(rel, actual) if changed else _changed(rel))
    for rel in sorted(present - set(listed)):
        kind = "symbolic link" if (root / rel).is_symlink() else "file"
        problems.append(f"{rel}: extra {kind}, not listed in {SUMS_FILE}")
    return len(listed), problems


def digest_of(root: Path) -> str | None:
    """SHA-256 of ``SHA256SUMS`` (the folder's digest), or None when it is missing."""
    path = root / SUMS_FILE
    return sha256_file(path) if path.is_file() else None


def _changed(rel: str) -> str:
    return f"{rel}: sha256 differs from {SUMS_FILE} (file changed)"


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return not rel.startswith("/") and ".." not in parts and "" not in parts and "\\" not in rel

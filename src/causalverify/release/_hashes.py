"""``SHA256SUMS``: writing the manifest of a release and checking a release against it.

The format is the one ``sha256sum -c`` reads: ``<64 hex digits><two spaces><relative path>``,
one line per file, sorted by path, covering every file except ``SHA256SUMS`` itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

from causalverify.release._layout import CROISSANT_FILE, SUMS_FILE, release_files, sha256_file

_LINE: Final = re.compile(r"^([0-9a-f]{64})  (\S.*)$")


def write_sums(root: Path) -> str:
    """Write ``root/SHA256SUMS`` over every other file; return the digest of the manifest."""
    lines = [
        f"{sha256_file(root / rel)}  {rel}\n" for rel in release_files(root) if rel != SUMS_FILE
    ]
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
            problems.append(f"{SUMS_FILE}: line {number} names a path outside the release: {rel}")
        elif rel in listed:
            problems.append(f"{SUMS_FILE}: {rel} is listed twice")
        else:
            listed[rel] = digest
    if text and not text.endswith("\n"):
        problems.append(f"{SUMS_FILE}: the last line has no line end")
    return listed, problems


def check_sums(root: Path) -> tuple[int, list[str]]:
    """Check every file of a release against ``SHA256SUMS``.

    A changed, missing or extra file is reported by name. When ``SHA256SUMS`` disagrees with a
    file that still matches the hash recorded in ``croissant.json``, the manifest itself is
    named as changed; a file that matches ``SHA256SUMS`` but not ``croissant.json`` names
    ``croissant.json``.

    Returns
    -------
    tuple
        The number of files checked, and the problems found (empty when everything matches).
    """
    listed, problems = read_sums(root)
    second = _croissant_hashes(root)
    present = set(release_files(root)) - {SUMS_FILE}
    for rel, expected in sorted(listed.items()):
        path = root / rel
        if path.is_symlink():
            problems.append(f"{rel}: is a symbolic link")
        elif not path.is_file():
            problems.append(f"{rel}: missing (listed in {SUMS_FILE})")
        else:
            actual = sha256_file(path)
            if actual == expected:
                continue
            if second.get(rel) == actual:
                problems.append(
                    f"{SUMS_FILE}: the entry for {rel} was changed "
                    f"({rel} still matches {CROISSANT_FILE})"
                )
            else:
                problems.append(f"{rel}: sha256 differs from {SUMS_FILE} (file changed)")
    for rel in sorted(present - set(listed)):
        problems.append(f"{rel}: extra file, not listed in {SUMS_FILE}")
    for rel, recorded in sorted(second.items()):
        stale = rel in listed and listed[rel] != recorded and (root / rel).is_file()
        if stale and sha256_file(root / rel) == listed[rel]:
            problems.append(f"{CROISSANT_FILE}: the sha256 of {rel} does not match the file")
    return len(listed), problems


def digest_of(root: Path) -> str | None:
    """SHA-256 of ``SHA256SUMS`` (the release digest), or None when it is missing."""
    path = root / SUMS_FILE
    return sha256_file(path) if path.is_file() else None


def _croissant_hashes(root: Path) -> dict[str, str]:
    """``contentUrl -> sha256`` of the FileObjects in ``croissant.json`` (empty if unreadable)."""
    try:
        data = json.loads((root / CROISSANT_FILE).read_text(encoding="utf-8"))
        return {
            str(item["contentUrl"]): str(item["sha256"])
            for item in data.get("distribution", [])
            if isinstance(item, dict) and "sha256" in item and "contentUrl" in item
        }
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return {}


def _safe(rel: str) -> bool:
    parts = rel.split("/")
    return not rel.startswith("/") and ".." not in parts and "" not in parts and "\\" not in rel

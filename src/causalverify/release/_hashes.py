"""``SHA256SUMS`` of a release: the shared check (:mod:`causalverify.checksums`), and what a
release adds to it, ``croissant.json``'s second record of every file's hash.
"""

from __future__ import annotations

import json
from pathlib import Path

from causalverify.checksums import check_sums as check_tree
from causalverify.checksums import digest_of, read_sums, write_sums
from causalverify.release._layout import CROISSANT_FILE, SUMS_FILE, sha256_file

__all__ = ["check_sums", "digest_of", "read_sums", "write_sums"]


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
    second = _croissant_hashes(root)

    def changed(rel: str, actual: str) -> str:
        if second.get(rel) == actual:
            return f"{SUMS_FILE}: the entry for {rel} was changed ({rel} still matches {CROISSANT_FILE})"
        return f"{rel}: sha256 differs from {SUMS_FILE} (file changed)"

    n_files, problems = check_tree(root, changed=changed)
    listed, _ = read_sums(root)
    for rel, recorded in sorted(second.items()):
        stale = rel in listed and listed[rel] != recorded and (root / rel).is_file()
        if stale and sha256_file(root / rel) == listed[rel]:
            problems.append(f"{CROISSANT_FILE}: the sha256 of {rel} does not match the file")
    return n_files, problems


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

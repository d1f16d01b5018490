"""Where everything lives inside a release folder, and how JSON is written there."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Final

RELEASE_SCHEMA: Final = "causalverify-release/1"

RELEASE_FILE: Final = "release.json"
SUMS_FILE: Final = "SHA256SUMS"
SUITE_DIR: Final = "suite"
RECORDS_DIR: Final = "records"
CELLS_FILE: Final = "records/cells.jsonl"
PROMPTS_FILE: Final = "records/prompts.jsonl"
RESPONSES_FILE: Final = "records/responses.jsonl"
EXECUTIONS_FILE: Final = "records/executions.jsonl"
EXTRACTIONS_FILE: Final = "records/extractions.jsonl"
#: only in releases of repair-mode runs: every turn of each cell (an empty list for one turn)
TURNS_FILE: Final = "records/turns.jsonl"
TABLES_DIR: Final = "records/tables"
SCORES_FILE: Final = "scores.csv"
SCENARIOS_FILE: Final = "scenarios.csv"
REPORT_DIR: Final = "report"
ENVIRONMENT_FILE: Final = "ENVIRONMENT.json"
DATASHEET_FILE: Final = "DATASHEET.md"
CROISSANT_FILE: Final = "croissant.json"

#: report files whose bytes ``verify`` recomputes from the rescored cells
REPORT_TEXT_FILES: Final[tuple[str, ...]] = ("summary.json", "cells.csv", "leaderboard.md")


def is_release(path: Path) -> bool:
    """Whether ``path`` is a release folder (it holds ``release.json``)."""
    return (Path(path) / RELEASE_FILE).is_file()


def dumps_json(value: Any) -> str:
    """JSON as every release file writes it: sorted keys, ``indent=2``, a trailing newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def dumps_line(value: Any) -> str:
    """One JSON Lines record: sorted keys, compact, no trailing newline."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text with ``\\n`` line ends, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def release_files(root: Path) -> list[str]:
    """Every regular file under ``root`` as a POSIX path relative to it, sorted.

    Symbolic links are listed too (``verify`` rejects them), folders are not.
    """
    found = [
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_symlink() or p.is_file()
    ]
    return sorted(found)

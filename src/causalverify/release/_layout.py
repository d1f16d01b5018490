"""Where everything lives inside a release folder, and how JSON is written there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from causalverify.checksums import SUMS_FILE as SUMS_FILE
from causalverify.checksums import sha256_file as sha256_file
from causalverify.checksums import tree_files

RELEASE_SCHEMA: Final = "causalverify-release/1"

#: every file of a release (symbolic links too), sorted: the one listing of checksums
release_files: Final = tree_files

RELEASE_FILE: Final = "release.json"
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

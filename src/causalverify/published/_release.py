"""Reading the published release's files (format ``causalverify-2026``, BENCHMARK.md §2.6).

Layout of a release folder (the root of a downloaded copy of the authors' repository)::

    experiments/exp_b/scenarios/sNN.json      one scenario (s01 .. s100)
    experiments/exp_b/data/sNN_data.csv       its realised data (path given by ``data_file``)
    experiments/exp_b/outputs/sNN_<slug>.json cached model answers (replayed, not read here)
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from causalverify.errors import SuiteError

ReleaseFormat = Literal["causalverify-2026"]
FORMATS: Final[tuple[str, ...]] = ("causalverify-2026",)
#: where the scenario JSONs live inside a release folder
SCENARIO_DIR: Final[str] = "experiments/exp_b/scenarios"
_ID: Final[re.Pattern[str]] = re.compile(r"^s(\d+)$")


class PublishedTruth(BaseModel):
    """``dgp_truth``: the true effect of the data-generating process."""

    model_config = ConfigDict(frozen=True, extra="allow")

    effect: float
    type: str = ""
    direction: str = ""


class PublishedScenario(BaseModel):
    """One ``experiments/exp_b/scenarios/sNN.json`` record (unknown keys are kept, not used)."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    scenario_id: str
    method_family: str
    difficulty: str
    title: str
    research_question: str
    data_description: str
    data_file: str
    dgp_truth: PublishedTruth
    ground_truth: dict[str, Any] = Field(default_factory=dict)
    fix_notes: Any = Field(default=None, alias="_fix_notes")

    @property
    def number(self) -> int:
        """The scenario number (``s07`` -> 7)."""
        match = _ID.match(self.scenario_id)
        if match is None:  # validated on reading; kept for type checkers
            raise SuiteError(f"scenario id {self.scenario_id!r} is not sNN")
        return int(match[1])


def check_format(fmt: str) -> ReleaseFormat:
    """Return ``fmt`` if it is a known release format, else raise :class:`SuiteError`."""
    if fmt != "causalverify-2026":
        raise SuiteError(f"unknown release format {fmt!r}; known: {', '.join(FORMATS)}")
    return "causalverify-2026"


def _safe_relative(value: str, where: Path) -> PurePosixPath:
    rel = PurePosixPath(value)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or "\\" in value:
        raise SuiteError(f"{where}: data_file {value!r} is not a plain relative path")
    return rel


def read_scenario(path: Path) -> PublishedScenario:
    """Read and validate one published scenario JSON.

    Raises
    ------
    SuiteError
        If the file is unreadable, lacks required keys, or has a malformed id or data path.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        record = PublishedScenario.model_validate(raw)
    except (OSError, json.JSONDecodeError) as exc:
        raise SuiteError(f"{path} is not readable JSON: {exc}") from exc
    except ValidationError as exc:
        raise SuiteError(f"{path} is not a causalverify-2026 scenario: {exc}") from exc
    if _ID.match(record.scenario_id) is None:
        raise SuiteError(f"{path}: scenario_id {record.scenario_id!r} is not of the form sNN")
    _safe_relative(record.data_file, path)
    return record


def read_release(root: Path) -> list[tuple[PublishedScenario, Path]]:
    """Every scenario of a release folder with the absolute path of its CSV, in number order.

    Parameters
    ----------
    root
        The release folder (holding ``experiments/exp_b/scenarios``).

    Returns
    -------
    list of (PublishedScenario, Path)
        Scenarios sorted by number, each with its data file resolved against ``root``.

    Raises
    ------
    SuiteError
        If the folder has no scenarios, a scenario is malformed, ids repeat, or a CSV is missing.
    """
    folder = Path(root) / SCENARIO_DIR
    if not folder.is_dir():
        raise SuiteError(
            f"{root} does not look like a causalverify-2026 release: no {SCENARIO_DIR}/ folder "
            "(give the root of the downloaded release)"
        )
    records = [read_scenario(p) for p in sorted(folder.glob("s*.json"))]
    if not records:
        raise SuiteError(f"{folder} holds no scenario files sNN.json")
    seen: dict[str, int] = {}
    out: list[tuple[PublishedScenario, Path]] = []
    for record in sorted(records, key=lambda r: r.number):
        if record.scenario_id in seen or record.number in seen.values():
            raise SuiteError(f"{folder}: scenario {record.scenario_id} appears twice")
        seen[record.scenario_id] = record.number
        data = Path(root) / record.data_file
        if not data.is_file():
            raise SuiteError(
                f"scenario {record.scenario_id}: its data file {record.data_file} is missing "
                f"under {root}"
            )
        out.append((record, data))
    return out

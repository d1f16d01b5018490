"""Loading a suite written by :func:`causalverify.scenarios.build_suite`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from causalverify.checksums import check_sums, sha256_file
from causalverify.errors import SuiteError
from causalverify.scenarios.model import Scenario


@dataclass(frozen=True)
class Suite:
    """A suite on disk: its scenarios (in suite order) and where their data live.

    Attributes
    ----------
    root : Path
        The suite folder; every path in the suite is relative to it.
    scenarios : list of Scenario
        The scenario records, in suite order.
    meta : dict
        ``suite.json`` without its ``scenarios`` list (seed, generator version, ...).
    """

    root: Path
    scenarios: list[Scenario]
    meta: dict[str, Any] = field(default_factory=dict)
    _by_id: dict[str, Scenario] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {s.id: s for s in self.scenarios})

    def __len__(self) -> int:
        return len(self.scenarios)

    def __iter__(self) -> Iterator[Scenario]:
        return iter(self.scenarios)

    @property
    def seed(self) -> int:
        """The suite seed."""
        return int(self.meta["seed"])

    def get(self, scenario_id: str) -> Scenario:
        """Return the scenario with this id, or raise :class:`SuiteError`."""
        try:
            return self._by_id[scenario_id]
        except KeyError:
            ids = list(self._by_id)
            shown = ", ".join(ids) if len(ids) <= 8 else f"{ids[0]} ... {ids[-1]} ({len(ids)} ids)"
            raise SuiteError(
                f"suite {self.root} has no scenario {scenario_id!r}; its scenarios: {shown}"
            ) from None

    def data_path(self, scenario: Scenario | str) -> Path:
        """Absolute path of a scenario's CSV."""
        s = self.get(scenario) if isinstance(scenario, str) else scenario
        return self.root / s.data_file

    def read_data(self, scenario: Scenario | str) -> pd.DataFrame:
        """Read a scenario's CSV as a data frame."""
        return pd.read_csv(self.data_path(scenario))

    def verify(self) -> list[str]:
        """Check the folder against ``SHA256SUMS`` and every CSV against its scenario's hash.

        The check is :func:`causalverify.checksums.check_sums`, the one releases use: a
        changed, missing or extra file and a symbolic link are each named.

        Returns
        -------
        list of str
            Problems found; empty when the suite is intact.
        """
        _, problems = check_sums(self.root)
        for s in self.scenarios:
            path = self.data_path(s)
            if path.is_file() and not path.is_symlink() and sha256_file(path) != s.csv_sha256:
                problems.append(f"{s.data_file}: sha256 differs from scenario {s.id}'s record")
        return problems


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(
            f"{path} is missing; build a suite with `causalverify build --out DIR`"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise SuiteError(f"{path} is not readable JSON: {exc}") from exc


def _load_scenario(root: Path, entry: dict[str, Any]) -> Scenario:
    rel = entry.get("scenario_file", f"scenarios/{entry.get('id')}.json")
    try:
        scenario = Scenario.model_validate(_read_json(root / rel))
    except ValidationError as exc:
        raise SuiteError(f"{root / rel} is not a valid scenario record: {exc}") from exc
    if scenario.id != entry.get("id") or scenario.csv_sha256 != entry.get("csv_sha256"):
        raise SuiteError(f"{root / rel} disagrees with its entry in suite.json (id or CSV hash)")
    return scenario


def load_suite(path: Path | str, *, verify: bool = True) -> Suite:
    """Load a suite folder (or its ``suite.json``).

    Parameters
    ----------
    path : Path or str
        The suite folder, or the path of its ``suite.json``.
    verify : bool
        Check every file against ``SHA256SUMS`` (reads every CSV once).

    Returns
    -------
    Suite
        The loaded suite.

    Raises
    ------
    SuiteError
        If the folder, ``suite.json`` or a scenario file is missing or malformed, a record
        disagrees with ``suite.json``, or (with ``verify``) a file's hash does not match.
    """
    root = Path(path)
    if root.name == "suite.json":
        root = root.parent
    if not root.is_dir():
        raise SuiteError(f"suite folder {root} does not exist; build one with `causalverify build`")
    index = _read_json(root / "suite.json")
    if not isinstance(index, dict) or not isinstance(index.get("scenarios"), list):
        raise SuiteError(f"{root / 'suite.json'} has no 'scenarios' list; is it a suite index?")
    scenarios = [_load_scenario(root, entry) for entry in index["scenarios"]]
    meta = {k: v for k, v in index.items() if k != "scenarios"}
    suite = Suite(root=root.resolve(), scenarios=scenarios, meta=meta)
    if verify:
        problems = suite.verify()
        if problems:
            shown = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise SuiteError(f"suite {root} failed verification:\n  {shown}{more}")
    return suite

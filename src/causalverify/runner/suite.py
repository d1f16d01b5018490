"""Finding the suite a run uses: a built folder, or the default suite built inside the run folder."""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from causalverify.errors import SuiteError
from causalverify.scenarios import build_suite
from causalverify.scenarios.grid import SUITES
from causalverify.store.sqlite import writer_lock

if TYPE_CHECKING:
    from causalverify.scenarios.model import Scenario

S = TypeVar("S", bound="Scenario")

#: the ``--suite`` value that means "the default suite, built into RUN_DIR/suite if absent"
DEFAULT_SUITE = "default"


def ensure_suite(
    spec: str | Path, run_dir: Path, *, progress: Callable[[int, int], None] | None = None
) -> Path:
    """Return the folder of the suite named by ``spec``, building the default suite if needed.

    Parameters
    ----------
    spec
        A named suite (``"default"``, ``"smoke"``) or the folder of a built suite.
    run_dir
        The run folder; the default suite lives in ``run_dir/suite``, another named suite in
        ``run_dir/suite-<name>``.
    progress
        Passed to ``build_suite`` when the default suite is built.

    Raises
    ------
    SuiteError
        If ``spec`` is a folder that does not hold a built suite.
    StoreError
        If the suite must be built and another process is writing ``run_dir``.
    """
    name = str(spec)
    if name not in SUITES:
        folder = Path(spec)
        if not folder.exists() or folder.is_file():
            close = difflib.get_close_matches(name, SUITES, n=1)
            hint = f"did you mean --suite {close[0]}? " if close else ""
            what = "a file" if folder.is_file() else "no such folder"
            raise SuiteError(
                f"--suite {name}: {what}, and not a named suite ({', '.join(SUITES)}); "
                f"{hint}or build a suite folder with `causalverify build --out DIR` and pass DIR"
            )
        if not (folder / "suite.json").is_file():
            raise SuiteError(
                f"{folder} is not a built suite (no suite.json); "
                f"build one with `causalverify build --out {folder}`"
            )
        return folder
    folder = Path(run_dir) / ("suite" if name == DEFAULT_SUITE else f"suite-{name}")
    if not (folder / "suite.json").is_file():
        # the run folder's writer lock first: a second run into the folder stops here with the
        # lock's message instead of building the same suite in the same place
        with writer_lock(run_dir):
            if not (folder / "suite.json").is_file():
                build_suite(folder, suite=name, progress=progress)
    return folder


def balanced_subset(scenarios: Sequence[S], n: int | None) -> list[S]:
    """``n`` scenarios spread evenly over the design families, in suite order.

    Each family's scenarios are shuffled with a seed derived from the suite seed, and the families
    take turns; so the subset is reproducible, a larger ``n`` contains every smaller one, and
    ``n`` at least the suite size gives the whole suite.
    """
    if n is None or n >= len(scenarios):
        return list(scenarios)
    groups: dict[str, list[S]] = {}
    for scenario in scenarios:
        groups.setdefault(str(scenario.family), []).append(scenario)
    seed = scenarios[0].suite_seed if scenarios else 0
    for family, group in groups.items():
        random.Random(f"{seed}:{family}").shuffle(group)
    order: list[S] = []
    while len(order) < n:
        for group in groups.values():
            if group and len(order) < n:
                order.append(group.pop(0))
    position = {id(s): i for i, s in enumerate(scenarios)}
    return sorted(order, key=lambda s: position[id(s)])

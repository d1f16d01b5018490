"""The parameter grid of the default 100-scenario suite (BENCHMARK.md §2.1).

Each family's grid groups live in its design module (:mod:`causalverify.designs`). The grid lists
groups in the published order (DID base, ES base, IV base, RDD base, then the easy, medium and
hard groups of each family), so scenario ``s001`` corresponds to the published ``s01``
and so on. A suite of any other size cycles through the grid; the scenario index keeps growing, so
every cycle draws fresh data (the seed is ``(suite_seed, index, attempt)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from causalverify.designs import DESIGNS, GridGroup
from causalverify.families import CORE_FAMILIES, MODERN_FAMILIES, Difficulty, Family

#: Default suite seed (recorded in every scenario and in suite.json).
DEFAULT_SEED: Final[int] = 20260101

#: Named suites accepted by :func:`suite_entries` (``build --suite``).
SUITES: Final[tuple[str, ...]] = ("default", "smoke", "modern", "modern-smoke")


@dataclass(frozen=True, kw_only=True)
class GridEntry:
    """One cell of the parameter grid (what a scenario is drawn from)."""

    family: Family
    group: str
    difficulty: Difficulty
    beta: float
    params: tuple[tuple[str, float | int], ...]

    def params_dict(self) -> dict[str, float | int]:
        """Parameters as a plain dict (``n_units``, ``n_periods``, ``sigma`` ...)."""
        return dict(self.params)


def _entries(family: Family, group: GridGroup) -> list[GridEntry]:
    return [
        GridEntry(
            family=family,
            group=group.group,
            difficulty=difficulty,
            beta=beta,
            params=group.params,
        )
        for beta, difficulty in zip(group.betas, group.difficulties, strict=True)
    ]


def _default_grid() -> tuple[GridEntry, ...]:
    """The textbook designs' groups in the published order: each family's first (``base``)
    group, then the remaining groups family by family."""
    designs = [DESIGNS[family] for family in CORE_FAMILIES]
    firsts = [(d.family, d.groups[0]) for d in designs]
    rest = [(d.family, g) for d in designs for g in d.groups[1:]]
    return tuple(e for family, group in firsts + rest for e in _entries(family, group))


#: The 100 entries of the default grid, in suite order.
DEFAULT_GRID: Final[tuple[GridEntry, ...]] = _default_grid()


def _first_of_each(grid: tuple[GridEntry, ...]) -> tuple[GridEntry, ...]:
    seen: dict[Family, GridEntry] = {}
    for entry in grid:
        seen.setdefault(entry.family, entry)
    return tuple(seen.values())


def _smoke_grid() -> tuple[GridEntry, ...]:
    """First base entry of each family: a 4-scenario suite for quick end-to-end checks."""
    return _first_of_each(DEFAULT_GRID)


def _modern_grid() -> tuple[GridEntry, ...]:
    """The modern-designs suite: 20 scenarios per design (easy, medium, hard), interleaved by
    design so any prefix covers all three (see :mod:`causalverify.scenarios.modern`)."""
    columns = [
        [e for group in DESIGNS[family].groups for e in _entries(family, group)]
        for family in MODERN_FAMILIES
    ]
    return tuple(e for row in zip(*columns, strict=True) for e in row)


#: The 60 entries of the modern-designs suite, in suite order.
MODERN_GRID: Final[tuple[GridEntry, ...]] = _modern_grid()


def grid_for(suite: str) -> tuple[GridEntry, ...]:
    """The grid of a named suite.

    Parameters
    ----------
    suite : str
        ``"default"`` (the 100-scenario grid), ``"smoke"`` (one scenario per family),
        ``"modern"`` (60 scenarios of the modern designs) or ``"modern-smoke"`` (one each).

    Returns
    -------
    tuple of GridEntry
        The entries, in suite order.

    Raises
    ------
    ValueError
        For an unknown suite name.
    """
    if suite == "default":
        return DEFAULT_GRID
    if suite == "smoke":
        return _smoke_grid()
    if suite == "modern":
        return MODERN_GRID
    if suite == "modern-smoke":
        return _first_of_each(MODERN_GRID)
    raise ValueError(f"unknown suite {suite!r}; expected one of {', '.join(SUITES)}")


def scenario_id(index: int, total: int) -> str:
    """Id of the ``index``-th scenario (1-based): ``s001``; wider when ``total`` has more digits."""
    width = max(3, len(str(total)))
    return f"s{index:0{width}d}"


def suite_entries(suite: str, n_scenarios: int | None) -> Iterator[tuple[int, GridEntry]]:
    """Yield ``(index, entry)`` for a suite of ``n_scenarios`` (default: the grid's size).

    Indices start at 1. Beyond the grid's length the grid is cycled; indices keep growing, so
    each cycle's seeds differ.
    """
    grid = grid_for(suite)
    total = len(grid) if n_scenarios is None else n_scenarios
    if total < 1:
        raise ValueError(f"a suite needs at least one scenario, got {total}")
    for index in range(1, total + 1):
        yield index, grid[(index - 1) % len(grid)]

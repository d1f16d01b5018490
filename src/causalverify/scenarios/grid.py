"""The parameter grid of the default 100-scenario suite (BENCHMARK.md §2.1).

The grid lists groups in the published order (DID base, ES base, IV base, RDD base, then the easy,
medium and hard groups of each family), so scenario ``s001`` corresponds to the published ``s01``
and so on. A suite of any other size cycles through the grid; the scenario index keeps growing, so
every cycle draws fresh data (the seed is ``(suite_seed, index, attempt)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from causalverify.families import Difficulty, Family
from causalverify.scenarios.modern import MODERN_GROUPS

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


@dataclass(frozen=True, kw_only=True)
class _Group:
    family: Family
    group: str
    difficulties: tuple[Difficulty, ...]
    params: tuple[tuple[str, float | int], ...]
    betas: tuple[float, ...]


def _split(easy: int, medium: int, hard: int) -> tuple[Difficulty, ...]:
    levels: tuple[Difficulty, ...] = ("easy", "medium", "hard")
    counts = (easy, medium, hard)
    return tuple(level for level, count in zip(levels, counts, strict=True) for _ in range(count))


def _did(n_units: int, n_periods: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n_units", n_units), ("n_periods", n_periods), ("sigma", sigma))


def _es(n_stocks: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n_stocks", n_stocks), ("sigma", sigma))


def _n(n: int, sigma: float) -> tuple[tuple[str, float | int], ...]:
    return (("n", n), ("sigma", sigma))


# fmt: off
_GROUPS: Final[tuple[_Group, ...]] = (
    _Group(family="did", group="base", difficulties=_split(3, 4, 3), params=_did(200, 8, 0.5),
           betas=(-0.30, -0.15, 0.25, 0.20, 0.18, 0.22, -0.12, -0.25, 0.28, 0.35)),
    _Group(family="event_study", group="base", difficulties=_split(2, 3, 3), params=_es(80, 0.015),
           betas=(-0.020, -0.025, -0.018, 0.022, 0.030, -0.028, -0.035, -0.015)),
    _Group(family="iv", group="base", difficulties=_split(2, 2, 2), params=_n(500, 0.3),
           betas=(0.40, 0.40, -0.15, 0.40, 0.40, -0.30)),
    _Group(family="rdd", group="base", difficulties=_split(2, 2, 2), params=_n(600, 0.15),
           betas=(0.25, 0.25, 0.25, -0.25, 0.25, 0.25)),
    _Group(family="did", group="easy", difficulties=_split(7, 0, 0), params=_did(200, 8, 0.4),
           betas=(-0.30, 0.25, -0.20, 0.18, -0.35, 0.22, -0.15)),
    _Group(family="did", group="medium", difficulties=_split(0, 7, 0), params=_did(150, 8, 0.5),
           betas=(-0.20, 0.15, 0.30, -0.10, 0.20, -0.25, 0.12)),
    _Group(family="did", group="hard", difficulties=_split(0, 0, 6), params=_did(100, 10, 0.7),
           betas=(-0.12, 0.08, -0.18, 0.10, -0.15, 0.25)),
    _Group(family="event_study", group="easy", difficulties=_split(5, 0, 0), params=_es(100, 0.012),
           betas=(-0.020, 0.025, -0.030, 0.018, -0.028)),
    _Group(family="event_study", group="medium", difficulties=_split(0, 6, 0),
           params=_es(80, 0.015), betas=(0.022, -0.015, -0.025, 0.030, -0.020, 0.018)),
    _Group(family="event_study", group="hard", difficulties=_split(0, 0, 5), params=_es(60, 0.020),
           betas=(-0.018, 0.015, -0.022, 0.028, -0.012)),
    _Group(family="iv", group="easy", difficulties=_split(6, 0, 0), params=_n(500, 0.25),
           betas=(0.40, -0.35, 0.30, -0.25, 0.45, -0.40)),
    _Group(family="iv", group="medium", difficulties=_split(0, 6, 0), params=_n(400, 0.3),
           betas=(0.35, -0.30, 0.25, -0.20, 0.50, -0.45)),
    _Group(family="iv", group="hard", difficulties=_split(0, 0, 6), params=_n(300, 0.4),
           betas=(0.20, -0.15, 0.30, -0.25, 0.15, -0.35)),
    _Group(family="rdd", group="easy", difficulties=_split(5, 0, 0), params=_n(600, 0.12),
           betas=(0.25, -0.20, 0.30, -0.15, 0.22)),
    _Group(family="rdd", group="medium", difficulties=_split(0, 6, 0), params=_n(500, 0.15),
           betas=(-0.25, 0.18, -0.30, 0.20, -0.22, 0.28)),
    _Group(family="rdd", group="hard", difficulties=_split(0, 0, 5), params=_n(400, 0.2),
           betas=(0.15, -0.18, 0.12, -0.25, 0.22)),
)
# fmt: on


def _expand() -> tuple[GridEntry, ...]:
    entries: list[GridEntry] = []
    for grp in _GROUPS:
        if len(grp.betas) != len(grp.difficulties):  # pragma: no cover - table typo guard
            raise AssertionError(f"grid group {grp.family}/{grp.group} is inconsistent")
        for beta, difficulty in zip(grp.betas, grp.difficulties, strict=True):
            entries.append(
                GridEntry(
                    family=grp.family,
                    group=grp.group,
                    difficulty=difficulty,
                    beta=beta,
                    params=grp.params,
                )
            )
    return tuple(entries)


#: The 100 entries of the default grid, in suite order.
DEFAULT_GRID: Final[tuple[GridEntry, ...]] = _expand()


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
    by_family: dict[str, list[GridEntry]] = {}
    for group in MODERN_GROUPS:
        for beta in group.betas:
            by_family.setdefault(group.family, []).append(
                GridEntry(
                    family=group.family,  # type: ignore[arg-type]
                    group=group.difficulty,
                    difficulty=group.difficulty,  # type: ignore[arg-type]
                    beta=beta,
                    params=group.params,
                )
            )
    columns = list(by_family.values())
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

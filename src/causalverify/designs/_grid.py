"""Helpers for writing a family's grid groups."""

from __future__ import annotations

from causalverify.families import Difficulty


def split(easy: int, medium: int, hard: int) -> tuple[Difficulty, ...]:
    """Difficulty labels of a group: ``easy`` easy ones, then medium, then hard."""
    levels: tuple[Difficulty, ...] = ("easy", "medium", "hard")
    counts = (easy, medium, hard)
    return tuple(level for level, count in zip(levels, counts, strict=True) for _ in range(count))


def same(difficulty: Difficulty, count: int) -> tuple[Difficulty, ...]:
    """``count`` scenarios of one difficulty."""
    return (difficulty,) * count

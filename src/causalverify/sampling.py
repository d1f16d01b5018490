"""Reproducible subsets for ``--limit``: the same inputs always give the same choice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def evenly(items: Sequence[T], limit: int | None) -> list[T]:
    """``limit`` items at even steps through ``items``, in their order (all of them when
    ``limit`` is None or not smaller); a spread, not the first few."""
    if limit is None or limit >= len(items):
        return list(items)
    return [items[(i * len(items)) // limit] for i in range(limit)]

"""Consensus reference labels from several labeller models.

Each labeller answers the labelling prompt with strict JSON; an answer that does not parse (or
gives no valid value) is an abstention. With the labellers' votes for one layer (method family
or direction), the most frequent value is the label when it is strictly more frequent than every
other value; otherwise the paper has no label for that layer and is unscoreable there.

The agreement level names the pattern of votes, abstentions counting as single votes of their
own: with four labellers ``4/4``, ``3/4``, ``2-1-1`` give a label, ``2-2`` and ``1-1-1-1`` do not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from causalverify.papers.scorers import json_objects, normalise_direction, normalise_method

#: levels that give a label, best first (four labellers)
LABEL_LEVELS: tuple[str, ...] = ("4/4", "3/4", "2-1-1")
NO_LABEL_LEVELS: tuple[str, ...] = ("2-2", "1-1-1-1")


@dataclass(frozen=True)
class Consensus:
    """The consensus of one layer for one paper: the label (or ``None``) and the level."""

    label: str | None
    level: str


def consensus(votes: Sequence[str | None]) -> Consensus:
    """Combine labeller votes (``None`` = abstained) into a label and an agreement level.

    Parameters
    ----------
    votes
        One vote per labeller.

    Returns
    -------
    Consensus
        ``label`` is the strict plurality value or ``None``; ``level`` is ``"k/n"`` when a
        value holds a strict majority of the ``n`` labellers, else the vote pattern such as
        ``"2-1-1"`` or ``"2-2"``.
    """
    n = len(votes)
    if n == 0:
        return Consensus(None, "0/0")
    counts = Counter(v for v in votes if v is not None)
    pattern = sorted([*counts.values(), *([1] * sum(v is None for v in votes))], reverse=True)
    ranked = counts.most_common()
    top = ranked[0][1] if ranked else 0
    unique = bool(ranked) and (len(ranked) == 1 or ranked[1][1] < top)
    label = ranked[0][0] if unique else None
    if label is not None and 2 * top > n:
        return Consensus(label, f"{top}/{n}")
    return Consensus(label, "-".join(str(k) for k in pattern))


@dataclass(frozen=True)
class Vote:
    """One labeller's parsed answer for one paper."""

    method: str | None
    direction: str | None


def parse_vote(text: str | None) -> Vote:
    """Read a labeller's JSON answer; anything missing or invalid is an abstention."""
    for obj in reversed(json_objects(text or "")):
        method = obj.get("method_family", obj.get("method"))
        if method is not None or "direction" in obj:
            return Vote(normalise_method(method), normalise_direction(obj.get("direction")))
    return Vote(None, None)

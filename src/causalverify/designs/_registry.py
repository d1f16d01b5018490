"""The registry of design families: one :class:`Design` per :data:`~causalverify.families.Family`.

Built at import from the family modules listed in :data:`_MODULE_DESIGNS`; a family without a
design, a design registered twice or under another name, or a design missing a piece raises
(:class:`KeyError` for a missing family or piece), so an incomplete family fails on first import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import Final

from causalverify.designs import (
    did,
    event_study,
    fuzzy_rdd,
    iv,
    rdd,
    staggered_did,
    synthetic_control,
)
from causalverify.designs._base import Design
from causalverify.families import FAMILIES, MODERN_FAMILIES, Family

#: the design of each family module, in :data:`~causalverify.families.FAMILIES` order
_MODULE_DESIGNS: Final[tuple[Design, ...]] = (
    did.DESIGN,
    event_study.DESIGN,
    iv.DESIGN,
    rdd.DESIGN,
    staggered_did.DESIGN,
    fuzzy_rdd.DESIGN,
    synthetic_control.DESIGN,
)

#: pieces a design may leave out, and the families that must still provide them
_OPTIONAL: Final[dict[str, tuple[Family, ...]]] = {
    "naive_answer": MODERN_FAMILIES,
    "analyses": MODERN_FAMILIES,
    "effect_alias": (),
    "discontinuity": (),
    "inference": (),
    "scales": (),
}


def check_design(design: Design) -> None:
    """Raise :class:`KeyError` naming the first piece ``design`` lacks.

    A piece is missing when it is ``None`` or empty, except the optional pieces (``naive_answer``
    and ``analyses`` for the designs whose textbook regression is the canonical, ``effect_alias``,
    ``discontinuity``, ``inference``, ``scales``). The layout must hold the canonical's columns.
    """
    for f in fields(design):
        value = getattr(design, f.name)
        needed_by = _OPTIONAL.get(f.name)
        if needed_by is not None and design.family not in needed_by:
            continue
        if value is None or (isinstance(value, tuple | str) and not value):
            raise KeyError(f"design {design.family!r} has no {f.name}")
    missing = [c for c in design.required_columns if c not in design.columns]
    if missing:
        raise KeyError(f"design {design.family!r}: required columns {missing} not in its layout")


def build_registry(designs: Iterable[Design]) -> Mapping[Family, Design]:
    """Key ``designs`` by family; every family of :data:`FAMILIES` needs exactly one, complete.

    Raises
    ------
    KeyError
        If a family has no design, or a design lacks a piece (:func:`check_design`).
    ValueError
        If a family has two designs or a design names an unknown family.
    """
    out: dict[Family, Design] = {}
    for design in designs:
        if design.family not in FAMILIES:
            raise ValueError(f"design of unknown family {design.family!r}")
        if design.family in out:
            raise ValueError(f"family {design.family!r} has two designs")
        check_design(design)
        out[design.family] = design
    for family in FAMILIES:
        if family not in out:
            raise KeyError(f"design family {family!r} has no module in causalverify.designs")
    return MappingProxyType({family: out[family] for family in FAMILIES})


#: every family's design
DESIGNS: Final[Mapping[Family, Design]] = build_registry(_MODULE_DESIGNS)


def design(family: Family) -> Design:
    """The design of ``family``; :class:`KeyError` for an unknown family."""
    try:
        return DESIGNS[family]
    except KeyError:
        raise KeyError(
            f"unknown design family {family!r}; expected one of {', '.join(FAMILIES)}"
        ) from None

"""Topic records shared by several designs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PanelTopic:
    """A policy some units of a panel adopted (staggered adoption, synthetic control)."""

    title: str
    unit: str
    units: str
    period: str
    policy: str
    outcome: str

"""What an offline agent may know about a scenario: never the answer.

The reference agents and replayed answers need to know which scenario a cell is (to write code
for its columns, or to find its cached answer); they must not be able to see the true effect,
the data-generating parameters or the canonical estimate. :class:`ScenarioBrief` is that view:
the scenario's id, design family, the path of its CSV and the facts its text states.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from causalverify.families import Family


class ScenarioFacts(Protocol):
    """Anything with a scenario's public face (a full scenario or its brief)."""

    @property
    def id(self) -> str: ...

    @property
    def family(self) -> Family: ...

    @property
    def data_file(self) -> str: ...

    @property
    def facts(self) -> dict[str, Any]: ...


class ScenarioBrief(BaseModel):
    """A scenario as an offline agent sees it: the id, the family, where the CSV is, and the
    facts the prompt's text states (periods, windows, cutoffs, codings)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    family: Family
    data_file: str
    facts: dict[str, Any]

    @classmethod
    def of(cls, scenario: ScenarioFacts) -> ScenarioBrief:
        """The brief of a full scenario (or a copy of a brief)."""
        return cls(
            id=scenario.id,
            family=scenario.family,
            data_file=scenario.data_file,
            facts=dict(scenario.facts),
        )

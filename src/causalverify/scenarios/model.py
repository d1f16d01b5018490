"""The frozen records of a scenario suite (what ``causalverify build`` writes and everything reads)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from causalverify.families import Difficulty, Family


class Canonical(BaseModel):
    """The canonical estimate computed on the scenario's realised CSV."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    estimate: float
    se: float
    n: int
    method: str
    profile: str = "paper"


class Scenario(BaseModel):
    """One benchmark scenario: text handed to the model, DGP facts, and the canonical answer.

    ``facts`` holds the machine-checkable statements the text makes, by family:

    - did: ``n_units``, ``n_periods``, ``treat_start`` (first treated period), ``treated_units``
      (description, e.g. "unit_id < 100")
    - event_study: ``n_stocks``, ``event_window`` ([-10, 10]), ``effect_window`` ([0, 10])
    - iv: ``n``, ``instrument_coding`` ("z = 1 if ..., 0 otherwise")
    - rdd: ``n``, ``cutoff`` (0.5), ``treated_side`` ("above": running_var >= cutoff),
      ``bandwidth`` (0.3)

    ``conversions`` (event studies only) are the scales the text declares acceptable for the
    reported effect: ``{"per_day": 1, "cumulative_0_10": 11}``. The ``default`` scoring profile
    accepts only these.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    index: int = Field(ge=1)
    family: Family
    difficulty: Difficulty
    group: str
    suite_seed: int
    attempt: int = Field(ge=0, description="redraws needed before the draw was usable")
    beta: float = Field(description="the DGP's true effect")
    params: dict[str, float | int]
    topic: str
    title: str
    research_question: str
    data_description: str
    columns: dict[str, str] = Field(description="column name -> plain-words meaning")
    target: str = Field(description="the quantity to estimate, in plain words")
    facts: dict[str, object]
    conversions: dict[str, int] = Field(default_factory=dict)
    data_file: str = Field(
        description="path of the CSV relative to the suite folder, data/<id>.csv"
    )
    csv_sha256: str
    canonical: Canonical

    @property
    def seed_entropy(self) -> tuple[int, int, int]:
        """The ``SeedSequence`` entropy that generated this scenario's data."""
        return (self.suite_seed, self.index, self.attempt)

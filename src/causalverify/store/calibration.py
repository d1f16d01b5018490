"""The calibration record: one retrospective confidence elicitation of one stored cell.

A calibration row belongs to a cell (same key) and to the calibration prompt protocol it was
asked with (``default`` or ``paper``), so both prompts can live in one run store. The record keeps
the rendered prompt, the raw answer and the parsed confidences, so the metrics can be recomputed
from the store without calling a model.

Schema (added to ``run.sqlite``; older stores gain the empty table when opened)::

    calibration(scenario_id TEXT, model TEXT, language TEXT, sample INTEGER, protocol TEXT,
                status TEXT, record TEXT, seq INTEGER,
                PRIMARY KEY (scenario_id, model, language, sample, protocol))
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from causalverify.records import CellKey, Message, ModelResponse

CalibrationProtocol = Literal["default", "paper"]

CalibrationStatus = Literal[
    "ok",  # all three confidences parsed
    "partial",  # an object was found but at least one confidence is missing or invalid
    "unparsable",  # no JSON object with any confidence key could be read
    "no_response",  # the model returned an empty answer
    "api_error",  # the provider failed after retries: asked again on resume
]

#: the three confidence types, in report order
CONFIDENCE_TYPES: Final[tuple[str, ...]] = ("method", "specification", "numerical")

CALIBRATION_SCHEMA: Final[str] = """
CREATE TABLE IF NOT EXISTS calibration (
    scenario_id TEXT NOT NULL,
    model TEXT NOT NULL,
    language TEXT NOT NULL,
    sample INTEGER NOT NULL,
    protocol TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (scenario_id, model, language, sample, protocol)
);
"""


class CalibrationRecord(BaseModel):
    """The stored result of asking a model how confident it is in one of its answers.

    ``confidences`` maps each of :data:`CONFIDENCE_TYPES` to a value in [0, 1] or None;
    ``missing`` gives the reason for every None (never a silent drop). ``scale`` records how
    the numbers were read: ``"unit"`` (0-1), ``"percent"`` (written with ``%``) or
    ``"percent_scale"`` (all values in (1, 100] and read as percentages).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: CellKey
    protocol: CalibrationProtocol
    prompt: list[Message]
    prompt_sha256: str
    response: ModelResponse | None = None
    confidences: dict[str, float | None] = Field(default_factory=dict)
    missing: dict[str, str] = Field(default_factory=dict)
    scale: str | None = None
    status: CalibrationStatus

    def confidence(self, kind: str) -> float | None:
        """The parsed confidence of ``kind`` (one of :data:`CONFIDENCE_TYPES`), or None."""
        return self.confidences.get(kind)

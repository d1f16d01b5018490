"""Hand-read labels of what a script reported, and how our reading of a cell stands against one.

A label (one line of ``reported_estimates.dev.jsonl``) says what the script itself reported as
its estimate: ``clear`` (one value), ``ambiguous`` (a preferred value and defensible
``alternatives``) or ``none`` (the script reported no estimate). Values are in the label's
``unit`` (``as_printed``: the number as the script printed it; ``percent``: the printed number is
in percent; ``bp``: basis points); the ``window`` of an event-study label is what its value
covers (for people: the value already says it).

A cell we executed is read *right* when our extracted estimate is the labelled value (or, for an
``ambiguous`` label, one of its alternatives; for a ``none`` label, when we extracted nothing),
*undecided* when the extractor says it cannot decide, *no estimate* when it extracted nothing
where the script reported one, and *wrong* (confidently wrong) when it extracted another value.
Values are equal at the coarser of the two printed precisions (:func:`same_reading`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from causalverify.errors import DevSetError as DevSetError
from causalverify.families import Language
from causalverify.records import CellRecord

#: a label's unit -> the factor that turns its numbers into the scale the extractor reports
#: (the extractor divides a printed percent by 100)
UNIT_SCALE: Final[Mapping[str, float]] = {
    "as_printed": 1.0,
    "fraction": 1.0,
    "percent": 0.01,
    "pct": 0.01,
    "%": 0.01,
    "percentage_points": 0.01,
    "bp": 1e-4,
    "basis_points": 1e-4,
}
#: relative slack on top of printed precision when an extracted value is compared with a label
LABEL_RTOL: Final[float] = 1e-3

Verdict = Literal["right", "undecided", "no_estimate", "wrong", "not_executed", "no_cell"]
#: verdicts in report order
VERDICTS: Final[tuple[Verdict, ...]] = (
    "right",
    "undecided",
    "no_estimate",
    "wrong",
    "not_executed",
    "no_cell",
)


class HandLabel(BaseModel):
    """One line of ``reported_estimates.dev.jsonl`` (unknown keys are kept, not used)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    scenario_id: str
    model_slug: str
    family: str = ""
    status: Literal["clear", "ambiguous", "none"]
    value: float | None = None
    unit: str = "as_printed"
    alternatives: list[float] = Field(default_factory=list)
    window: str | None = None
    line: str | None = None
    note: str = ""
    language: Language = "r"

    @property
    def scale(self) -> float:
        """The factor from the label's unit to the extractor's scale."""
        return UNIT_SCALE[self.unit.strip().lower()]

    def accepted(self) -> list[float]:
        """The values a right reading may have, on the extractor's scale."""
        if self.status == "none" or self.value is None:
            return []
        values = [self.value, *(self.alternatives if self.status == "ambiguous" else [])]
        return [v * self.scale for v in values]


def read_labels(path: Path) -> list[HandLabel]:
    """Read hand-read labels, one JSON object a line (blank lines skipped).

    Raises
    ------
    DevSetError
        If a line is not JSON or not a label (a ``clear``/``ambiguous`` label needs a value).
    """
    labels: list[HandLabel] = []
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            label = HandLabel.model_validate(json.loads(text))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise DevSetError(f"{path}:{number} is not a hand-read label: {exc}") from exc
        if label.status != "none" and label.value is None:
            raise DevSetError(f"{path}:{number}: a {label.status} label needs a value")
        if label.unit.strip().lower() not in UNIT_SCALE:
            raise DevSetError(
                f"{path}:{number}: unknown unit {label.unit!r}; known: {', '.join(UNIT_SCALE)}"
            )
        labels.append(label)
    return labels


def _half_unit(value: float) -> float:
    """Half a unit in the last digit of ``value``'s shortest repr (``0.2175`` -> ``5e-5``)."""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    decimals = len(mantissa.partition(".")[2].rstrip("0")) - int(exponent or 0)
    return 0.5 * 10.0 ** (-decimals)


def same_reading(extracted: float, labelled: float, *, rtol: float = LABEL_RTOL) -> bool:
    """``extracted`` is the number ``labelled`` names: equal at the coarser of the two printed
    precisions (a value read from ``-0.24`` is the estimate ``-0.2386637``), plus ``rtol``."""
    if not (math.isfinite(extracted) and math.isfinite(labelled)):
        return False
    slack = max(_half_unit(extracted), _half_unit(labelled))
    return abs(extracted - labelled) <= slack + rtol * max(abs(extracted), abs(labelled))


def is_undecided(record: CellRecord) -> bool:
    """The extractor could not separate the printed candidates (``ExtractionRecord.undecided``,
    or the cell's status is ``"undecided"``)."""
    if str(record.status) == "undecided":
        return True
    return record.extraction is not None and record.extraction.undecided


def is_unresolved(record: CellRecord) -> bool:
    """Undecided and not settled by scoring either (its candidates pass and fail alike)."""
    return str(record.status) == "undecided"


def executed(record: CellRecord) -> bool:
    """The cell's code ran and exited 0 (L2b)."""
    return record.execution is not None and record.execution.ok


def extracted_value(record: CellRecord) -> float | None:
    """The estimate the cell was scored with (the extraction's value when it was not scored)."""
    if record.scores is not None and record.scores.estimate is not None:
        return record.scores.estimate
    return record.extraction.value if record.extraction is not None else None


def verdict(record: CellRecord | None, label: HandLabel, *, rtol: float = LABEL_RTOL) -> Verdict:
    """How our reading of ``record`` stands against the hand-read ``label``."""
    if record is None:
        return "no_cell"
    if not executed(record):
        return "not_executed"
    if is_undecided(record):
        return "undecided"
    value = extracted_value(record)
    if value is None:
        return "right" if label.status == "none" else "no_estimate"
    if any(same_reading(value, v, rtol=rtol) for v in label.accepted()):
        return "right"
    return "wrong"


def stdout_line(record: CellRecord) -> str:
    """The stdout line the extractor read (empty when unknown)."""
    if record.execution is None or record.extraction is None or record.extraction.line is None:
        return ""
    lines = record.execution.stdout.splitlines()
    index = record.extraction.line - 1
    return lines[index].strip()[:200] if 0 <= index < len(lines) else ""

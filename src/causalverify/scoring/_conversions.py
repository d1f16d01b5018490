"""The conversions a score applied to a reported figure, in words, for the cell's record.

A reported number can reach the comparison converted: printed as a percent or in basis points
(extraction reads it as a number), or on an event study's cumulative scale (divided by its k
days, with its SE and interval). Each is stated in ``ScoreRecord.conversions``, and so is a
declared cumulative scale *not* applied because no printed label says the figure is cumulative
(the prompt accepts a cumulative figure only when it is labelled as such).
"""

from __future__ import annotations

from collections.abc import Mapping

from causalverify.designs import DESIGNS
from causalverify.extraction import cumulative_label, printed_unit
from causalverify.records import CellRecord, ExtractionRecord


def scale_of(conversion: str | None, declared: Mapping[str, int]) -> float:
    """The multiple of the canonical a matched conversion stands for (``k=3``, a declared name)."""
    if conversion is None:
        return 1.0
    if conversion in declared:
        return float(declared[conversion])
    if conversion.startswith("k=") and conversion[2:].isdigit():
        return float(conversion[2:])
    return 1.0


def needs_label(record: CellRecord) -> bool:
    """Whether the cell's scenario declares a cumulative scale (one that applies only to a
    figure labelled as cumulative)."""
    return DESIGNS[record.family].scales is not None and any(
        k != 1 for k in record.conversions.values()
    )


def is_labelled(record: CellRecord, value: float, line: int | None) -> bool:
    """The output labels ``value`` as cumulative (see
    :func:`causalverify.extraction.cumulative_label`)."""
    stdout = record.execution.stdout if record.execution is not None else ""
    return cumulative_label(stdout, value, line) is not None


def conversion_notes(
    record: CellRecord,
    *,
    estimate: float,
    line: int | None,
    conversion: str | None,
    refused: str | None,
    reported: ExtractionRecord | None,
) -> list[str]:
    """Every conversion applied to ``estimate`` (read from stdout ``line``) before it was
    compared, and a cumulative scale refused for want of a label, in words."""
    stdout = record.execution.stdout if record.execution is not None else ""
    notes: list[str] = []
    unit = printed_unit(stdout, estimate, line)
    if unit is not None:
        notes.append(f"unit: printed as {unit}, read as {estimate:.6g}")
    k = scale_of(conversion, record.conversions)
    if k != 1:
        if conversion is not None and conversion.startswith("k="):
            why = "the paper profile accepts any k = 1..11, labelled or not"
        else:
            why = f"labelled cumulative by the output: {cumulative_label(stdout, estimate, line)!r}"
        text = (
            f"scale {conversion}: {estimate:.6g} is read as a cumulative figure over {k:g} days "
            f"and compared as {estimate / k:.6g} per day ({why})"
        )
        if reported is not None and (reported.se is not None or reported.ci is not None):
            text += f"; its SE and interval are divided by {k:g} too"
        notes.append(text)
    if refused is not None:
        notes.append(
            f"not converted: {estimate:.6g} is within the tolerance of {refused} "
            f"({record.conversions.get(refused, 1)} × the canonical), but no printed label says "
            "it is cumulative, as the prompt requires; it is compared as a per-day figure"
        )
    return notes

"""Extracting the printed treatment effect from a cell's code and stdout.

``extract_estimate`` is deterministic and explains every decision; ``judge_extract`` asks a
model (any provider) for the same number as JSON. ``disagree`` flags when the two differ.
"""

from __future__ import annotations

from causalverify.extraction._scale import cumulative_label, printed_unit
from causalverify.extraction.deterministic import extract_estimate, fitted_effects
from causalverify.extraction.judge import disagree, judge_extract, judge_messages, parse_judge

__all__ = [
    "cumulative_label",
    "disagree",
    "extract_estimate",
    "fitted_effects",
    "judge_extract",
    "judge_messages",
    "parse_judge",
    "printed_unit",
]

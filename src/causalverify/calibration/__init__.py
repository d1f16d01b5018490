"""The calibration arm: does a model's stated confidence separate right answers from wrong ones?

After a run, each model is shown its own frozen Experiment B answers and asked for three
confidences (method, specification, numerical) as strict JSON (:mod:`.prompts`); answers are
parsed robustly (:mod:`.parse`), stored beside the cells (:func:`calibrate_run`), and compared
with L2b+ (:mod:`.metrics`, :func:`summarize_calibration`).
"""

from causalverify.calibration.analysis import (
    calibration_frame,
    load_calibration,
    summarize_calibration,
)
from causalverify.calibration.elicit import (
    CalibrationConfig,
    CalibrationProgress,
    CalibrationSummary,
    calibrate_run,
    record_from_response,
)
from causalverify.calibration.parse import ParsedConfidences, parse_confidences
from causalverify.calibration.prompts import calibration_messages

__all__ = [
    "CalibrationConfig",
    "CalibrationProgress",
    "CalibrationSummary",
    "ParsedConfidences",
    "calibrate_run",
    "calibration_frame",
    "calibration_messages",
    "load_calibration",
    "parse_confidences",
    "record_from_response",
    "summarize_calibration",
]

"""The retrospective confidence prompt, protocols ``default`` and ``paper``.

The model sees the research question, the data description and its own frozen Experiment B
answer, and is asked for three confidences as strict JSON. The protocols differ only in how the
numerical confidence is defined:

``default``
    the real correctness criterion of the run: the printed estimate within the scoring tolerance
    (relative error) of what a correct analysis computes on the same data; a script that fails or
    prints no estimate counts as incorrect.
``paper``
    the published wording, "within 20% of the true effect" (while the published scoring used a
    50% tolerance against the canonical estimate).
"""

from __future__ import annotations

from typing import Final

from causalverify.records import DEFAULT_TOLERANCE, Message
from causalverify.store.calibration import CalibrationProtocol

#: prefix of the ``CellContext.protocol`` of a calibration call: ``"calibration/<protocol>"``
CONTEXT_PREFIX: Final[str] = "calibration/"
#: characters of the earlier answer kept in the prompt (head and tail halves)
MAX_ANSWER_CHARS: Final[int] = 24_000

SYSTEM: Final[str] = (
    "You are an expert applied econometrician. Earlier you answered the analysis request shown "
    "below. Now assess, honestly, how likely it is that your earlier answer is correct. Answer "
    "with one JSON object and nothing else, using numbers between 0 and 1:\n"
    '{"method_confidence": <number>, "specification_confidence": <number>, '
    '"numerical_confidence": <number>}'
)

_METHOD: Final[str] = (
    "- method_confidence: the probability that you chose an appropriate identification strategy "
    "(research design) for this question and data."
)
_SPECIFICATION: Final[str] = (
    "- specification_confidence: the probability that your specification (outcome, treatment "
    "variable, comparison, controls or fixed effects, sample and estimator) is correct for that "
    "design."
)
_NUMERICAL_PAPER: Final[str] = (
    "- numerical_confidence: your confidence that your estimate is within 20% of the true effect."
)


def _numerical_default(tolerance: float) -> str:
    return (
        "- numerical_confidence: the probability that the treatment-effect estimate your script "
        "prints, when the script is run exactly as written on this data file, is within "
        f"{tolerance:.0%} of the estimate a correct analysis computes on the same data (relative "
        f"error |yours - correct| / |correct| at most {tolerance:g}). A script that fails to run "
        "or prints no estimate counts as incorrect."
    )


def context_protocol(protocol: CalibrationProtocol) -> str:
    """The ``CellContext.protocol`` string of a calibration call (``"calibration/<protocol>"``)."""
    return f"{CONTEXT_PREFIX}{protocol}"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


def calibration_messages(
    *,
    title: str,
    research_question: str,
    data_description: str,
    data_file: str,
    answer: str,
    protocol: CalibrationProtocol,
    tolerance: float = DEFAULT_TOLERANCE,
) -> list[Message]:
    """Render the confidence prompt (identical inputs give identical messages).

    Parameters
    ----------
    title, research_question, data_description, data_file
        The scenario text the model saw in Experiment B.
    answer
        The model's own frozen answer (very long answers keep their head and tail).
    protocol
        ``"default"`` (the run's real criterion) or ``"paper"`` (the published wording).
    tolerance
        The run's scoring tolerance, stated by the ``default`` protocol.

    Returns
    -------
    list of Message
        A system and a user message.
    """
    numerical = _NUMERICAL_PAPER if protocol == "paper" else _numerical_default(tolerance)
    user = (
        f"# {title}\n\n## Research question\n\n{research_question}\n\n"
        f"## Data\n\n{data_description}\n\nData file: `{data_file}`\n\n"
        f"## Your earlier answer\n\n{_clip(answer, MAX_ANSWER_CHARS)}\n\n"
        f"## What to report\n\n{_METHOD}\n{_SPECIFICATION}\n{numerical}\n\n"
        "Reply with the JSON object only."
    )
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]

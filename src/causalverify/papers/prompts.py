"""Experiment A prompts: the seven-section answer, the RID pre-commitment answer, the labelling
prompt and the one-word judge prompts of scorer S3.

Every prompt describes a paper by its title and the three own-words fields, never by its
authors (that would invite recall of the paper instead of reasoning about the description).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from causalverify.papers.records import DIRECTIONS, METHODS, PaperRecord
from causalverify.records import Message

Arm = Literal["standard", "rid"]
Layer = Literal["method", "direction"]
PromptKind = Literal["standard", "rid", "label", "judge-method", "judge-direction"]

_JSON_LINE: Final[str] = (
    'Finish with one line of JSON and nothing after it: {"method_family": "<DID | EVENT_STUDY | '
    'IV | RDD | OTHER>", "direction": "<positive | negative | mixed | unclear>"}.'
)

STANDARD_SYSTEM: Final[str] = (
    "You are an expert applied econometrician. You are given the description of a published "
    "empirical study. Propose how to analyse it. Answer in exactly seven sections with these "
    "headings:\n"
    "## 1. Identification Strategy: the design you would use (difference-in-differences, event "
    "study, instrumental variables, regression discontinuity, or other) and why.\n"
    "## 2. Treatment and Control: who is treated, who is the comparison, and when.\n"
    "## 3. Identifying Assumptions\n"
    "## 4. Threats to Validity\n"
    "## 5. R Code Outline: a short outline of the main estimation in R.\n"
    "## 6. Expected Results: the direction (positive, negative, mixed or unclear) and the "
    "approximate magnitude of the main effect.\n"
    "## 7. Validity Checklist: a short list of checks.\n" + _JSON_LINE
)

RID_SYSTEM: Final[str] = (
    "You are an expert applied econometrician. You are given the description of a published "
    "empirical study. Before any analysis, commit to a plan, in this order, with these "
    "headings:\n"
    "## 1. Strategy and Expected Direction: the design you will use (difference-in-differences, "
    "event study, instrumental variables, regression discontinuity, or other) and the direction "
    "(positive, negative, mixed or unclear) you expect for the main effect.\n"
    "## 2. Specifications: at most five, numbered; no others may be run later.\n"
    "## 3. Falsification Gate: a concrete result that would make you reject the design (for "
    "example a sign reversal, a weak first stage, or a failed pre-trend test).\n"
    "## 4. Code: R code for only the specifications above.\n"
    "## 5. Gate Outcome: whether you expect the gate to trigger, and what you would conclude.\n"
    + _JSON_LINE
)

LABEL_SYSTEM: Final[str] = (
    "You label published empirical economics papers. From the description, decide the "
    "research design the paper uses and the direction of its main estimated effect. Reply with "
    'strict JSON only, no other text: {"method_family": one of "DID", "EVENT_STUDY", "IV", '
    '"RDD", "OTHER"; "direction": one of "positive", "negative", "mixed", "unclear"}.'
)

JUDGE_SYSTEM: Final[dict[Layer, str]] = {
    "method": (
        "You read an answer that proposes how to analyse a study. Which design does the answer "
        "propose as its main strategy? Reply with exactly one word: " + ", ".join(METHODS) + "."
    ),
    "direction": (
        "You read an answer that proposes how to analyse a study. Which direction does the "
        "answer expect for the main effect? Reply with exactly one word: "
        + ", ".join(DIRECTIONS)
        + "."
    ),
}

_SYSTEMS: Final[dict[str, PromptKind]] = {
    STANDARD_SYSTEM: "standard",
    RID_SYSTEM: "rid",
    LABEL_SYSTEM: "label",
    JUDGE_SYSTEM["method"]: "judge-method",
    JUDGE_SYSTEM["direction"]: "judge-direction",
}


def describe_paper(paper: PaperRecord) -> str:
    """The user message that describes a paper."""
    return (
        f"Title: {paper.title}\n\n"
        f"Research question: {paper.research_question}\n\n"
        f"Data: {paper.data_description}\n\n"
        f"Institutional context: {paper.institutional_context}\n"
    )


def paper_messages(paper: PaperRecord, *, arm: Arm = "standard") -> list[Message]:
    """The messages asking for an analysis plan of ``paper``.

    Parameters
    ----------
    paper
        The paper to describe.
    arm
        ``"standard"`` (the seven sections) or ``"rid"`` (the pre-commitment prompt).
    """
    system = STANDARD_SYSTEM if arm == "standard" else RID_SYSTEM
    return [
        Message(role="system", content=system),
        Message(role="user", content=describe_paper(paper)),
    ]


def label_messages(paper: PaperRecord) -> list[Message]:
    """The messages asking a labeller for the paper's method family and direction (strict JSON)."""
    return [
        Message(role="system", content=LABEL_SYSTEM),
        Message(role="user", content=describe_paper(paper)),
    ]


def judge_messages(answer: str, layer: Layer) -> list[Message]:
    """The messages asking a judge for the one-word method or direction of ``answer`` (S3)."""
    return [
        Message(role="system", content=JUDGE_SYSTEM[layer]),
        Message(role="user", content=f"Answer to grade:\n\n{answer}"),
    ]


def prompt_kind(messages: Sequence[Message]) -> PromptKind | None:
    """Which Experiment A prompt ``messages`` are, recognised by the system message."""
    if not messages or messages[0].role != "system":
        return None
    return _SYSTEMS.get(messages[0].content)

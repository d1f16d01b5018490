"""The offline Experiment A answers of the reference panel: a keyword heuristic.

The reference agents (``reference/<agent>``) answer the Experiment A prompts by reading the
paper description in the prompt itself, so a run without an API key shows every table of the
arm. The heuristic guesses the design from cue words of the description (stock prices and
announcements, scores and margins, lotteries and birth dates, before-and-after comparisons,
random assignment) and the direction from the wording of the research question. It never sees
the corpus labels; its accuracy is whatever the cues give.

Each agent keeps its documented Experiment B character (``docs/EXPERIMENT_A.md``):

``textbook``  the heuristic answer, with all seven sections and a consistent JSON line;
``naive``  defaults to a before-and-after comparison and always expects a positive effect;
``cumulative``  hedges: the expected-results section also names the opposite sign for a
    subgroup, and it answers "unclear" when the question carries no direction cue;
``wrong-term``  its JSON line states the opposite direction to its text; as a labeller it
    names the second-best design when one has cues;
``fragile``  discusses two other designs by name in its threats section; wraps labels in prose;
``mute``  never writes the JSON line (and answers the labelling prompt with ``{}``);
``prose``  one paragraph of prose, no headings, no JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from causalverify.errors import ProviderError
from causalverify.papers.prompts import PromptKind, prompt_kind
from causalverify.papers.records import METHODS, Direction, MethodLabel
from causalverify.papers.scorers import score_s1, score_s2
from causalverify.records import Message, ModelResponse
from causalverify.reference import require_agent

_I: Final[int] = re.IGNORECASE

METHOD_CUES: Final[dict[MethodLabel, re.Pattern[str]]] = {
    "EVENT_STUDY": re.compile(
        r"share prices?|stocks?|returns\b|announce|dividend|in the years (?:around|before and "
        r"after)|years before and after|futures",
        _I,
    ),
    "RDD": re.compile(
        r"barely|just (?:above|below|under|over|inside|outside)|\bscores?\b|boundar|margin|"
        r"\bgrams\b|multiple of|catchment|ballot|vote shares?|at that birthday|abruptly",
        _I,
    ),
    "IV": re.compile(
        r"lotter(?:y|ies)|quarter in which|birth dates?|same sex|settlers?|leaving age|"
        r"rotating basis|called up|election calendars|rivers|streams|age at arrival|"
        r"trade flows|entitled to under the rules",
        _I,
    ),
    "DID": re.compile(
        r"before and after|neighbouring|at different (?:times|dates)|panel of|expanded|"
        r"introduced|privatis|took effect|legalis|in stages|differed (?:widely )?across",
        _I,
    ),
    "OTHER": re.compile(
        r"random(?:ly)? |random order|drawing names|fictitious|assigned .{0,40}to (?:small|"
        r"regular)|waiting list|experiment",
        _I,
    ),
}
_NEGATIVE: Final[re.Pattern[str]] = re.compile(
    r"\b(?:lower|reduce|shorten|fall|losses?|less|worse|theft|cost|lose)\w*", _I
)
_POSITIVE: Final[re.Pattern[str]] = re.compile(
    r"\b(?:raise|improve|gain|more|increase|advantage|better|higher|draw)\w*", _I
)
_FIELD: Final[re.Pattern[str]] = re.compile(
    r"^(Title|Research question|Data|Institutional context): (.*)$", re.MULTILINE
)
DESIGN_NAME: Final[dict[MethodLabel, str]] = {
    "DID": "difference-in-differences",
    "EVENT_STUDY": "event study",
    "IV": "instrumental variables (2SLS)",
    "RDD": "regression discontinuity",
    "OTHER": "randomized controlled trial",
}


def fields(text: str) -> dict[str, str]:
    """The labelled fields of a paper description (``Title``, ``Research question`` …)."""
    return {m.group(1): m.group(2) for m in _FIELD.finditer(text)}


def method_scores(description: str) -> dict[MethodLabel, int]:
    """Cue counts per design family in a paper description."""
    return {m: len(pattern.findall(description)) for m, pattern in METHOD_CUES.items()}


def guess_method(description: str, *, rank: int = 0) -> MethodLabel:
    """The design with the ``rank``-th most cues (ties by :data:`METHODS` order); DID if none."""
    scores = method_scores(description)
    ordered = sorted(METHODS, key=lambda m: (-scores[m], METHODS.index(m)))
    if scores[ordered[rank]] == 0:
        return "DID" if rank == 0 else ordered[0] if scores[ordered[0]] else "DID"
    return ordered[rank]


def guess_direction(question: str) -> Direction:
    """``negative`` if the question leans on lowering words, ``positive`` on raising ones."""
    neg, pos = len(_NEGATIVE.findall(question)), len(_POSITIVE.findall(question))
    if neg == pos == 0:
        return "unclear"
    return "negative" if neg > pos else "positive"


_VERB: Final[dict[Direction, str]] = {
    "positive": "a positive effect: the treatment should increase the outcome",
    "negative": "a negative effect: the treatment should reduce the outcome",
    "mixed": "a mixed effect that differs in sign across groups",
    "unclear": "an unclear sign; the evidence could go either way",
}
_OPPOSITE: Final[dict[Direction, Direction]] = {
    "positive": "negative",
    "negative": "positive",
    "mixed": "mixed",
    "unclear": "unclear",
}
_ASSUME: Final[dict[MethodLabel, str]] = {
    "DID": "Parallel trends between treated and comparison units absent the policy.",
    "EVENT_STUDY": "No confounding news inside the event window; a stable benchmark for normal "
    "returns or outcomes.",
    "IV": "Relevance (a strong first stage) and the exclusion restriction.",
    "RDD": "Continuity of potential outcomes at the cutoff; no precise manipulation of the "
    "running variable.",
    "OTHER": "Random assignment and no interference between units.",
}
_CODE: Final[dict[MethodLabel, str]] = {
    "DID": "fit <- lm(y ~ treated * post + factor(unit) + factor(period), data = d)",
    "EVENT_STUDY": "car <- with(d, tapply(ret - benchmark, event_time, mean))",
    "IV": "fit <- AER::ivreg(y ~ d + x | z + x, data = d)",
    "RDD": "fit <- lm(y ~ above * I(score - cutoff), data = subset(d, abs(score - cutoff) < h))",
    "OTHER": "fit <- lm(y ~ assigned, data = d)",
}
_CHECKS: Final[dict[MethodLabel, str]] = {
    "DID": "- plot group means by period\n- placebo dates\n- cluster by unit",
    "EVENT_STUDY": "- vary the window\n- check leakage before day 0\n- cross-sectional t-tests",
    "IV": "- report the first-stage F\n- reduced form\n- overidentification where possible",
    "RDD": "- density test at the cutoff\n- covariate balance\n- several bandwidths",
    "OTHER": "- balance table\n- attrition by arm\n- intention-to-treat first",
}


def _json_line(method: MethodLabel, direction: Direction) -> str:
    return json.dumps({"method_family": method, "direction": direction})


def _sections(agent: str, method: MethodLabel, direction: Direction) -> str:
    expect = f"I expect {_VERB[direction]}."
    if agent == "cumulative" and direction in ("positive", "negative"):
        expect += f" For some subgroups the effect may be {_OPPOSITE[direction]} instead."
    threats = "Confounding policies at the same time; measurement error in the outcome."
    if agent == "fragile":
        others = [DESIGN_NAME[m] for m in METHODS if m != method][:2]
        threats += f" A {others[0]} or a {others[1]} analysis would need different data."
    return (
        f"## 1. Identification Strategy\nI would use a {DESIGN_NAME[method]} design, because the "
        "description offers a source of variation in treatment that is plausibly unrelated to "
        "other determinants of the outcome.\n\n"
        "## 2. Treatment and Control\nUnits exposed to the change are treated; comparable "
        "units that were not exposed form the comparison.\n\n"
        f"## 3. Identifying Assumptions\n{_ASSUME[method]}\n\n"
        f"## 4. Threats to Validity\n{threats}\n\n"
        f"## 5. R Code Outline\n```r\n{_CODE[method]}\nsummary(fit)\n```\n\n"
        f"## 6. Expected Results\n{expect}\n\n"
        f"## 7. Validity Checklist\n{_CHECKS[method]}\n"
    )


def _plan(agent: str, description: str) -> tuple[MethodLabel, Direction]:
    info = fields(description)
    text = " ".join(info.get(k, "") for k in ("Data", "Institutional context"))
    question = info.get("Research question", "")
    if agent == "naive":
        method: MethodLabel = "EVENT_STUDY" if method_scores(text)["EVENT_STUDY"] > 1 else "DID"
        return method, "positive"
    method = guess_method(text)
    direction = guess_direction(question)
    if direction == "unclear" and agent != "cumulative":
        direction = "positive"
    return method, direction


def standard_answer(agent: str, description: str) -> str:
    """An agent's seven-section answer to the standard Experiment A prompt."""
    method, direction = _plan(agent, description)
    if agent == "prose":
        return (
            f"This looks like a case for a {DESIGN_NAME[method]} comparison. I would expect "
            f"{_VERB[direction]}, though the magnitude is hard to pin down from the description."
        )
    body = _sections(agent, method, direction)
    if agent == "mute":
        return body
    stated = _OPPOSITE[direction] if agent == "wrong-term" else direction
    return f"{body}\n{_json_line(method, stated)}\n"


def rid_answer(agent: str, description: str) -> str:
    """An agent's pre-committed (RID) answer: more cautious about the sign.

    Under pre-commitment an agent states ``unclear`` whenever the research question carries no
    direction cue (instead of defaulting to ``positive``), and ``naive`` uses the heuristic.
    """
    method, direction = _plan("cumulative" if agent == "naive" else agent, description)
    question = fields(description).get("Research question", "")
    if guess_direction(question) == "unclear":
        direction = "unclear"
    stated = _OPPOSITE[direction] if agent == "wrong-term" else direction
    body = (
        f"## 1. Strategy and Expected Direction\n{DESIGN_NAME[method]}; I expect "
        f"{_VERB[direction]}.\n\n## 2. Specifications\n1. Baseline.\n2. With controls.\n\n"
        "## 3. Falsification Gate\nReject the design if the sign reverses across the two "
        f"specifications.\n\n## 4. Code\n```r\n{_CODE[method]}\nsummary(fit)\n```\n\n"
        "## 5. Gate Outcome\nI do not expect the gate to trigger.\n"
    )
    if agent in ("mute", "prose"):
        return body
    return f"{body}\n{_json_line(method, stated)}\n"


def label_answer(agent: str, description: str) -> str:
    """An agent's answer to the labelling prompt (strict JSON for most agents)."""
    method, direction = _plan(agent, description)
    if agent == "wrong-term":
        info = fields(description)
        method = guess_method(
            f"{info.get('Data', '')} {info.get('Institutional context', '')}", rank=1
        )
    if agent == "mute":
        return "{}"
    if agent == "prose":
        return f"The paper is most likely a {DESIGN_NAME[method]} study with a {direction} effect."
    text = _json_line(method, direction)
    return f"Here is the label:\n```json\n{text}\n```" if agent == "fragile" else text


def judge_answer(kind: PromptKind, answer: str) -> str:
    """The one-word judgement: the section-aware reading, else the second-half keyword count."""
    s2, s1 = score_s2(answer), score_s1(answer)
    if kind == "judge-method":
        return s2.method or s1.method or "OTHER"
    return s2.direction or s1.direction or "unclear"


def answer(agent: str, messages: Sequence[Message]) -> str | None:
    """A reference agent's answer to an Experiment A prompt, or ``None`` for any other prompt.

    Parameters
    ----------
    agent
        A reference agent name.
    messages
        The conversation; the prompt is recognised by its system message.
    """
    kind = prompt_kind(messages)
    if kind is None or len(messages) < 2:
        return None
    user = messages[-1].content
    if kind == "standard":
        return standard_answer(agent, user)
    if kind == "rid":
        return rid_answer(agent, user)
    if kind == "label":
        return label_answer(agent, user)
    return judge_answer(kind, user.removeprefix("Answer to grade:\n\n"))


class PaperAgent:
    """A reference agent (``reference/<agent>``) answering Experiment A prompts offline.

    It reads the paper from the prompt itself (:func:`answer`), so it needs no cell context;
    any other prompt is a :class:`~causalverify.errors.ProviderError`.
    """

    def __init__(self, agent: str, *, spec: str) -> None:
        self.agent = require_agent(agent)
        self.spec = spec

    def answer(
        self, messages: Sequence[Message], *, options: object, context: object
    ) -> ModelResponse:
        """The agent's answer to an Experiment A prompt (papers, labels, RID, judge)."""
        content = answer(self.agent, messages)
        if content is None:
            raise ProviderError(f"{self.spec} answers Experiment A prompts only")
        return ModelResponse(content=content, stop_reason="stop", model=self.spec)

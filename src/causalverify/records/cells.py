"""The per-cell record stored in the run store: everything needed to rescore without a model.

A *cell* is one (scenario, model, language, sample). Its record keeps the rendered prompt, the raw
response, the extracted code, the execution, the extraction(s) and the scores, so that ``score``,
``report``, ``freeze`` and ``verify`` work from the store alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from causalverify.families import Difficulty, Family, Language
from causalverify.records._text import Text
from causalverify.records.execution import ExecResult

CellStatus = Literal[
    "api_error",  # the provider failed after retries: retried on resume
    "no_response",  # empty answer (fails L1)
    "no_code",  # no code block of the requested language (fails L2a)
    "parse_error",  # code does not parse (fails L2a)
    "missing_package",  # execution failed because a package is not installed
    "exec_error",  # non-zero exit status
    "timeout",  # wall clock or CPU limit
    "resource_limit",  # memory, output or process limit, or killed
    "no_estimate",  # ran, but no effect could be extracted
    "undecided",  # ran; the printed candidates disagree and the evidence does not separate them
    "wrong",  # extracted estimate outside the tolerance
    "correct",  # L2b+ pass
    "unscoreable",  # |canonical| < 1e-9: excluded from rates
    "extraction_limit",  # reading the estimate hit its time or memory bound (fails L2b+)
    "harness_error",  # a stage of the harness failed on this cell's data (fails L2b+)
]

#: statuses of cells the harness could not finish; ``status_reason`` says why
HARNESS_STATUSES: frozenset[str] = frozenset({"extraction_limit", "harness_error"})

ExtractionMethod = Literal["deterministic", "judge"]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: Text


class CellKey(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario_id: str
    model: str
    language: Language
    sample: int = 0

    def as_tuple(self) -> tuple[str, str, str, int]:
        return (self.scenario_id, self.model, self.language, self.sample)


class ModelResponse(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    content: Text | None
    stop_reason: Text | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    truncated: bool = False
    cached: bool = False
    error: Text | None = None
    latency_seconds: float = 0.0
    model: Text | None = None


class CodeRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    language: Language
    code: Text | None
    #: the position of the block that ran among every fenced block of the answer (0-based)
    block_index: int | None = None
    #: the fenced blocks of the requested language in the answer (None: not counted); the
    #: first of them ran
    blocks: int | None = None
    #: more than one such block: the prompt asks for exactly one (a protocol violation), and
    #: the cell is scored on the first
    several_blocks: bool = False
    parses: bool = False
    parse_error: Text | None = None


class ExtractionCandidate(BaseModel):
    """One plausible estimate the extractor saw (see ``ExtractionRecord.ambiguous``).

    ``value`` is the estimate the printed ``token`` stands for (a percent divided by 100);
    ``score`` ranks the candidates (higher is better) and ``evidence`` names what decided it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float
    rule: Text
    line: int | None = None
    token: str | None = None
    score: float | None = None
    evidence: list[str] = Field(default_factory=list)


class ExtractionRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    method: ExtractionMethod
    value: float | None
    rule: Text
    line: int | None = None
    rationale: Text = ""
    #: plausible candidates printed different numbers (beyond rounding); ``value`` is still the
    #: rule's choice, ``candidates`` lists one of each distinct number (the choice first)
    ambiguous: bool = False
    candidates: list[ExtractionCandidate] = Field(default_factory=list)
    #: the evidence does not separate the candidates: ``value`` is None and ``candidates`` are
    #: ranked, best first (scoring decides only when they all pass or all fail)
    undecided: bool = False
    #: the standard error and 95% interval the script reported for the estimate (None: none
    #: read, never guessed) and what they were read from (a printed line, the fit log, ...)
    se: float | None = None
    ci: tuple[float, float] | None = None
    se_source: str | None = None


SeTier = Literal["matches", "plausible", "wrong", "unread"]


class CanonicalInference(BaseModel):
    """The canonical estimate's standard error under each variance estimator a competent
    analysis of the design may use, on the realised data (see
    :func:`causalverify.estimators.canonical_inference`).

    ``ses`` maps a variant's name (``cr1``, ``hc1``, ``classical``, ...) to its SE; ``reference``
    names the variant the ``plausible`` band and the significance call are measured against (the
    clustered one for clustered designs, HC1 otherwise).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ses: dict[str, float]
    reference: str


class ScoreRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: str
    tolerance: float
    extractor: str
    L1: bool
    L2a: bool
    L2b: bool
    L2b_plus: bool | None = Field(
        description="None only when the cell is unscoreable; a cell that did not execute fails (False)"
    )
    rel_error: float | None = None
    unscoreable: bool = False
    matched_conversion: str | None = None
    #: every conversion applied to the reported figure before the comparison (a percent read as
    #: a number, an event study's cumulative scale divided by its days), in words, and a
    #: declared cumulative scale not applied because no printed label says it is cumulative
    conversions: list[Text] = Field(default_factory=list)
    estimate: float | None = None
    #: the fitted effect coefficient (fit log) closest to the canonical, and its relative error
    fitted_effect: float | None = None
    fitted_rel_error: float | None = None
    #: ``fitted_rel_error`` is within the tolerance (None: no fitted effect coefficient)
    fitted_right: bool | None = None
    #: an ``undecided`` cell (candidates that neither all pass nor all fail): ``L2b_plus`` is
    #: False, the lower bound, and this is the upper bound (True: some candidate passes);
    #: None for every other cell
    L2b_plus_upper: bool | None = None
    #: the reported inference (docs/SCORING.md, layer L2c); every field None when the cell has
    #: no canonical inference. ``se_tier``: the reported SE ``matches`` a canonical variant
    #: (within 2%; ``se_variant`` names it), is ``plausible`` (0.8-1.25x the reference
    #: variant), ``wrong``, or ``unread`` (no SE was read); ``se_ratio`` is the reported SE over
    #: the reference one (on the canonical's scale); ``ci_covers``: the reported interval covers
    #: the DGP's effect; ``significance_agrees``: the 5% significance call agrees with the
    #: canonical one under the reference variant
    se_tier: SeTier | None = None
    se_variant: str | None = None
    se_ratio: float | None = None
    ci_covers: bool | None = None
    significance_agrees: bool | None = None
    #: L2b+ and the reported SE matches or is plausible (None: unscoreable or no canonical
    #: inference)
    L2c: bool | None = None


class Declaration(BaseModel):
    """The model's own statement of which printed number is its estimate.

    Asked once, after the cell's last turn, in the same conversation, when the script's stdout
    has no ``ESTIMATE:`` line or its extraction is undecided: ``request`` shows the end of
    stdout (never the canonical or any verdict) and asks for ``ESTIMATE: <number as printed>``.
    ``token`` is the number the answer named; it is ``accepted`` only when stdout prints that
    token (same digits, a unicode minus read as ``-``), and ``reason`` says why or why not.
    ``request_sha256`` is :func:`messages_sha256` of the whole request (the conversation so far
    and ``request``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    request: Message
    request_sha256: str
    response: ModelResponse | None = None
    token: str | None = None
    accepted: bool = False
    #: the stdout line (1-based) that prints the accepted token
    line: int | None = None
    reason: Text = ""


#: what a turn of a repair-mode cell holds of its own, under the same names as the cell's fields
TURN_FIELDS: tuple[str, ...] = (
    "response",
    "code",
    "execution",
    "extraction",
    "judge",
    "extraction_disagree",
    "scores",
    "status",
    "status_reason",
    "timings",
)


class TurnRecord(BaseModel):
    """One turn of a repair-mode cell: what the model was told, answered, and what that did.

    Turn 1 is the single-shot prompt (``feedback`` None); turn ``t > 1`` was asked with the
    conversation so far plus ``feedback``, the execution feedback on turn ``t - 1`` (never the
    canonical estimate or whether a number is right). ``request_sha256`` is
    :func:`messages_sha256` of the whole request of this turn.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    feedback: Message | None = None
    request_sha256: str
    response: ModelResponse | None = None
    code: CodeRecord | None = None
    execution: ExecResult | None = None
    extraction: ExtractionRecord | None = None
    judge: ExtractionRecord | None = None
    extraction_disagree: bool = False
    scores: ScoreRecord | None = None
    status: CellStatus
    status_reason: Text = ""
    timings: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def of(
        cls,
        record: CellRecord,
        *,
        turn: int,
        feedback: Message | None = None,
        request_sha256: str | None = None,
    ) -> TurnRecord:
        """The turn a cell record describes (its response, code, execution and scores)."""
        return cls(
            turn=turn,
            feedback=feedback,
            request_sha256=request_sha256 or record.prompt_sha256,
            **{name: getattr(record, name) for name in TURN_FIELDS},
        )

    def as_cell(self, cell: CellRecord) -> CellRecord:
        """``cell`` with this turn's response, code, execution and scores (to rescore it)."""
        update: dict[str, object] = {name: getattr(self, name) for name in TURN_FIELDS}
        return cell.model_copy(update={**update, "turns": []})


class CellRecord(BaseModel):
    """One cell. In repair mode a cell that took more than one turn lists every turn in
    ``turns`` and its own fields are those of the last turn; a one-turn cell is its only turn
    (so ``--max-turns 1`` stores exactly what single mode stores)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: CellKey
    family: Family
    difficulty: Difficulty
    beta: float
    canonical: float
    conversions: dict[str, int] = Field(default_factory=dict)
    protocol: str
    prompt: list[Message]
    prompt_sha256: str
    response: ModelResponse | None = None
    code: CodeRecord | None = None
    execution: ExecResult | None = None
    extraction: ExtractionRecord | None = None
    judge: ExtractionRecord | None = None
    extraction_disagree: bool = False
    scores: ScoreRecord | None = None
    status: CellStatus
    #: why the harness could not finish the cell (``HARNESS_STATUSES``), or that an
    #: extraction bound was hit on a cell whose execution had already failed; "" otherwise
    status_reason: Text = ""
    timings: dict[str, float] = Field(default_factory=dict)
    turns: list[TurnRecord] = Field(default_factory=list)
    #: the model's statement of its estimate, asked after the last turn (None: not asked)
    declaration: Declaration | None = None
    #: the canonical SE under each defensible variance estimator (None: not computed)
    inference: CanonicalInference | None = None

    def turn_states(self) -> list[TurnRecord]:
        """Every turn, first to last (a one-turn cell gives itself as its only turn)."""
        if self.turns:
            return list(self.turns)
        return [TurnRecord.of(self, turn=1)]


def messages_sha256(messages: Sequence[Message]) -> str:
    """The one prompt hash: SHA-256 of the messages as canonical JSON (sorted keys, no spaces,
    UTF-8). Every store records a prompt by it, so prompts compare across experiments.

    Parameters
    ----------
    messages
        The messages to hash, in order.

    Returns
    -------
    str
        The hex SHA-256 digest.
    """
    payload = [m.model_dump(mode="json") for m in messages]
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

"""The declaration: the model names the printed number that is its estimate.

Under the ``default`` protocol a script ends by printing ``ESTIMATE: <number>``. A cell whose
script ran but printed no such line, or whose extraction is ``undecided`` (the printed
candidates disagree and the evidence does not separate them), gets one more user message in the
same conversation, after its last turn: the end of its stdout, shown as repair mode shows it
(:func:`~causalverify.runner.repair.output_block`), and a request to answer
``ESTIMATE: <number as printed>``. The message depends on stdout only: it never shows the
canonical estimate, a relative error or whether any number is right.

The answer is *accepted* only when stdout prints the named token itself (the same digits, a
unicode minus read as ``-``, a sign or a percent sign where the token has one); it is stored as
the cell's :class:`~causalverify.records.Declaration`, and rescoring passes an accepted token to
the extractor (``extract_estimate(declared=...)``). It is not asked under the ``paper``
protocol, for replayed answers (``replay/...``: a recording cannot answer a new message), or
with ``run --no-declare``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from causalverify.extraction._labels import find_markers
from causalverify.models import CellContext, Model, ModelOptions, ask
from causalverify.records import (
    HARNESS_STATUSES,
    CellRecord,
    Declaration,
    Message,
    ModelResponse,
    ScenarioBrief,
    messages_sha256,
)
from causalverify.runner.repair import STDOUT_CHARS, output_block

if TYPE_CHECKING:
    from causalverify.runner.cell import CellTask
    from causalverify.runner.config import RunConfig

#: the number token of an answer (sign, digits, fraction, exponent, an optional percent sign)
_TOKEN: Final = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?"
#: the answer's statement: ``ESTIMATE: <token>`` (markdown emphasis and backticks tolerated)
_ANSWER: Final = re.compile(rf"ESTIMATE\s*\**\s*:\s*\**\s*`?\s*({_TOKEN})")

REQUEST: Final = (
    "Which number printed above is your estimate of the treatment effect? Answer with one "
    "line `ESTIMATE: <number>`, copying the number exactly as your script printed it (the same "
    "digits). If your script did not print its estimate, say so."
)


@dataclass(frozen=True)
class Declared:
    """A cell whose declaration request was answered (not yet checked or rescored)."""

    task: CellTask
    record: CellRecord
    request: Message
    request_sha256: str
    response: ModelResponse
    seconds: float


def declares(config: RunConfig, model: str) -> bool:
    """Whether a run asks ``model`` to declare its estimate at all (see the module docstring)."""
    return config.declare and config.protocol == "default" and not is_replay(model)


def is_replay(model: str) -> bool:
    """Whether ``model`` replays recorded answers (it cannot answer a new message)."""
    return model.strip().partition("/")[0] == "replay"


def needs_declaration(record: CellRecord) -> bool:
    """Whether a finished cell is asked to declare: its script ran (exit status 0), it has not
    been asked yet, and stdout has no ``ESTIMATE:`` line or its extraction is undecided."""
    ex = record.execution
    if record.declaration is not None or ex is None or ex.status != "ok":
        return False
    if record.status in HARNESS_STATUSES or record.status == "api_error":
        return False
    undecided = record.extraction is not None and record.extraction.undecided
    return undecided or not find_markers(ex.stdout)


def declaration_request(record: CellRecord) -> Message:
    """The user message that asks for the declaration (stdout only; see the module docstring)."""
    ex = record.execution
    stdout = ex.stdout if ex is not None else ""
    intro = "Your script ran (exit status 0)."
    if record.extraction is not None and record.extraction.undecided:
        intro += " It printed several numbers that could each be the estimate."
    elif stdout.strip():
        intro += " It did not print an `ESTIMATE:` line."
    text = f"{intro}\n{output_block('Its stdout', stdout, STDOUT_CHARS)}\n{REQUEST}"
    return Message(role="user", content=text)


def history(record: CellRecord) -> list[Message]:
    """The conversation of a cell so far: its prompt, then every turn's feedback and answer."""
    messages = list(record.prompt)
    for turn in record.turn_states():
        if turn.feedback is not None:
            messages.append(turn.feedback)
        content = turn.response.content if turn.response is not None else None
        messages.append(Message(role="assistant", content=content or ""))
    return messages


def ask_declaration(
    task: CellTask, record: CellRecord, provider: Model, *, options: ModelOptions
) -> Declared:
    """Ask ``provider`` to declare the estimate of the finished cell ``record`` (one request,
    through the model's retries and response cache)."""
    request = declaration_request(record)
    messages = [*history(record), request]
    context = CellContext(
        scenario=ScenarioBrief.of(task.scenario),
        language=task.key.language,
        protocol=task.protocol,
        sample=task.key.sample,
        turn=len(record.turn_states()) + 1,
        request="declare",
    )
    start = time.perf_counter()
    response = ask(provider, messages, options=options, context=context)
    seconds = time.perf_counter() - start
    return Declared(task, record, request, messages_sha256(messages), response, seconds)


def parse_declaration(content: str | None) -> str | None:
    """The number token of the last ``ESTIMATE: <number>`` in an answer (a unicode minus read
    as ``-``, a sentence's full stop dropped), or None."""
    found = _ANSWER.findall((content or "").replace("\u2212", "-"))
    return found[-1] if found else None


def printed_at(stdout: str, token: str) -> int | None:
    """The first stdout line (1-based) that prints ``token`` as a whole number token, or None.

    The digits must match exactly (``0.4`` is not ``0.40``); a sign or a percent sign after
    the number belongs to the printed token, so ``0.41`` does not match ``-0.41`` or ``0.41%``.
    """
    body = re.escape(token)
    before = r"(?<![\w.])" if token[0] in "+-" else r"(?<![\w.+-])"
    after = r"(?![\w.])" if token.endswith("%") else r"(?![\w.%])"
    pattern = re.compile(before + body + after)
    for no, line in enumerate(stdout.replace("\u2212", "-").splitlines(), start=1):
        if pattern.search(line):
            return no
    return None


def check_declaration(declared: Declared) -> Declaration:
    """The declaration record: the token the answer named, and whether stdout prints it."""
    response = declared.response
    stdout = declared.record.execution.stdout if declared.record.execution is not None else ""
    token = parse_declaration(response.content)
    line = None
    if response.content is None and response.error is not None:
        reason = f"the model did not answer: {response.error}"
    elif token is None:
        reason = "the answer has no `ESTIMATE: <number>` line"
    else:
        line = printed_at(stdout, token)
        if line is None:
            reason = f"{token} is not printed in stdout (at that precision)"
        else:
            reason = f"{token} is printed on stdout line {line}"
    return Declaration(
        request=declared.request,
        request_sha256=declared.request_sha256,
        response=response,
        token=token,
        accepted=line is not None,
        line=line,
        reason=reason,
    )

"""Repair mode: what the model is told after a turn, and when the conversation ends.

A turn ends the cell when its code executed and an estimate could be read from what it printed
(the analyst cannot see whether the number is right), when the model did not answer at all
(``api_error``: retried on resume), when it repeats the previous turn's code, or at the last
turn. Otherwise the next user message is **execution feedback only**, built from what the
sandbox and the extractor saw: the exit status, the tail of stderr and stdout (bounded), the
missing package, a parse error, or "no estimate could be read from the output". Nothing in it
depends on the scenario's canonical estimate, the relative error or whether a number is right.
"""

from __future__ import annotations

from typing import Final

from causalverify.families import Language
from causalverify.records import CellRecord, Message, TurnRecord

#: characters of stderr and stdout shown to the model (their ends: errors come last)
STDERR_CHARS: Final = 2000
STDOUT_CHARS: Final = 1000

_LANGUAGE_NAMES: Final[dict[str, str]] = {"r": "R", "python": "Python"}

#: statuses that end the conversation whatever the turn: an estimate was read (right or wrong,
#: which the analyst cannot know), the printed numbers leave it undecided (the script did
#: report; the declaration asks which number it meant), or the provider failed (retried on resume)
_FINAL: Final = frozenset({"correct", "wrong", "undecided", "api_error"})


def _tail(text: str, limit: int) -> str:
    text = text.rstrip()
    if len(text) <= limit:
        return text
    return "[... " + f"{len(text) - limit} characters cut]\n" + text[-limit:]


def output_block(label: str, text: str, limit: int) -> str:
    """``text``'s end (at most ``limit`` characters) in a fenced block after ``label``."""
    body = _tail(text, limit)
    return f"{label} (last {limit} characters):\n```\n{body}\n```" if body else f"{label}: (empty)"


def _code(turn: TurnRecord) -> str | None:
    return turn.code.code if turn.code is not None else None


def ends_conversation(turns: list[TurnRecord], max_turns: int) -> bool:
    """Whether the cell is finished after ``turns`` (see the module docstring)."""
    last = turns[-1]
    if len(turns) >= max_turns or last.status in _FINAL:
        return True
    if last.status == "unscoreable":
        # executed; whether an estimate was read decides, as for any other cell
        return last.scores is not None and last.scores.estimate is not None
    return len(turns) >= 2 and _code(last) == _code(turns[-2])


def feedback(record: CellRecord, language: Language) -> Message:
    """The user message that shows the model what its last answer's code did."""
    name = _LANGUAGE_NAMES.get(language, language)
    ask = (
        f"Reply with the complete corrected {name} script in one fenced code block, "
        "keeping the format your answer was asked for."
    )
    status = record.status
    ex = record.execution
    if status == "no_response":
        text = f"Your answer was empty. {ask}"
    elif status == "no_code":
        text = f"Your answer contained no {name} code block, so nothing could be run. {ask}"
    elif status == "parse_error":
        error = record.code.parse_error if record.code is not None else None
        text = (
            f"Your {name} code does not parse:\n```\n{_tail(error or '', STDERR_CHARS)}\n```\n{ask}"
        )
    elif ex is not None and ex.status == "ok":
        text = (
            "The script ran (exit status 0), but no estimate could be read from the output. "
            f"{output_block('Its stdout', ex.stdout, STDOUT_CHARS)}\n{ask}"
        )
    elif ex is not None:
        lines = [f"The script did not finish: {_what_happened(record)}."]
        if ex.missing_package:
            lines.append(
                f"The package '{ex.missing_package}' is not installed in this environment and "
                "cannot be installed; use what is installed."
            )
        lines.append(output_block("stderr", ex.stderr, STDERR_CHARS))
        lines.append(output_block("stdout", ex.stdout, STDOUT_CHARS))
        lines.append(ask)
        text = "\n".join(lines)
    else:
        text = f"Your code could not be run. {ask}"
    return Message(role="user", content=text)


def _what_happened(record: CellRecord) -> str:
    ex = record.execution
    assert ex is not None
    if ex.status == "error":
        return f"it exited with status {ex.exit_code}"
    if ex.status in ("timeout", "cpu_limit", "memory_limit", "output_limit", "killed"):
        return f"it was stopped ({ex.detail or ex.status})"
    return f"status {ex.status}"

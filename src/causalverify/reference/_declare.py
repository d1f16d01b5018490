"""What a reference agent answers when asked which printed number is its estimate.

The request (``runner.declare``) shows the end of the script's stdout in a fenced block. An agent
reads it as an analyst would: the number on its own ``Estimated effect:`` line (every script of
the panel that reports a number prints one), else the last number printed; a script that printed
no number gets an answer that names none.
"""

from __future__ import annotations

import re
from typing import Final

_FENCED: Final = re.compile(r"```[^\n]*\n(.*?)\n```", re.S)
_NUMBER: Final = r"[-+\u2212]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_LABELLED: Final = re.compile(rf"Estimated effect[^:\n]*:\s*({_NUMBER})")
_ANY: Final = re.compile(rf"(?<![\w.]){_NUMBER}(?![\w.])")

#: the answer of an agent whose script printed no number
NOTHING_PRINTED: Final = (
    "My script did not print its estimate, so there is no printed number I can name."
)


def write_declaration(request: str) -> str:
    """The agent's answer to a declaration request (the text of the last user message).

    Returns ``ESTIMATE: <token>`` with the token exactly as the excerpt prints it, or
    :data:`NOTHING_PRINTED` when the excerpt holds no number.
    """
    blocks = _FENCED.findall(request)
    stdout = blocks[0] if blocks else ""
    labelled = _LABELLED.findall(stdout)
    if labelled:
        return f"ESTIMATE: {labelled[-1]}"
    numbers = _ANY.findall(stdout)
    if numbers:
        return f"ESTIMATE: {numbers[-1]}"
    return NOTHING_PRINTED

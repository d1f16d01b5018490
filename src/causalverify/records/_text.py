"""Text that may come from a model or a script, made storable.

A lone surrogate (``"\\ud800"``: a JSON escape in a model's answer, an undecodable byte of a
script's output or fit log read with ``surrogateescape``) is a valid Python string but not valid
UTF-8, so the record holding it could be neither serialised, stored nor written to a report.
Every record field that holds such text is :data:`Text`: each surrogate code point becomes
U+FFFD, once, when the record is made, so everything downstream (execution, the store, reports,
releases) sees the same storable text.
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
REPLACEMENT: Final = "\ufffd"


def storable(value: str) -> str:
    """``value`` with every surrogate code point replaced by U+FFFD (linear time)."""
    if value.isascii():
        return value
    return _SURROGATE.sub(REPLACEMENT, value)


#: a string field whose content is model- or script-controlled
Text = Annotated[str, AfterValidator(storable)]

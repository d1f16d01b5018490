"""``ESTIMATE:`` marker lines: the protocol's own statement of the estimate."""

from __future__ import annotations

import re
from typing import Final

from causalverify.extraction._numbers import NUMBER, normalize_line, parse_number

#: ``[1] "`` / ``[1]`` prefixes of R prints and surrounding quotes
_R_PREFIX: Final = re.compile(r"^\s*(?:\[\d+\]\s*)?[\"']?")
#: the protocol's marker exactly: upper case, a colon (markdown emphasis around it is tolerated)
_MARKER: Final = re.compile(rf"^\s*\**\s*ESTIMATE\s*\**\s*:\s*\**\s*({NUMBER})")


def _clean(raw: str) -> str:
    text = normalize_line(raw)
    text = _R_PREFIX.sub("", text, count=1)
    return text.replace('"', " ").replace("`", "")


def find_markers(stdout: str) -> list[tuple[float, int]]:
    """Every ``ESTIMATE: <number>`` line as (value, 1-based line), in printing order.

    Only the protocol's spelling counts (``Estimate: 0.4`` is a labelled line, not the marker).
    """
    found: list[tuple[float, int]] = []
    for no, raw in enumerate(stdout.splitlines(), start=1):
        m = _MARKER.match(_clean(raw))
        if m:
            value = parse_number(m.group(1))
            if value is not None:
                found.append((value, no))
    return found

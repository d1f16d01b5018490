"""The standard error and interval a script reported for its estimate.

Read from the same evidence as the estimate, and only for a decided one:

- ``marker``: the protocol's ``SE: <number>`` and ``CI: [<lo>, <hi>]`` lines (default protocol);
- ``line``: the estimate's own line, a number labelled as a standard error (``SE: 0.12``,
  ``(s.e. 0.05)``, ``Robust SE = 0.0798``) and a bracketed pair labelled as an interval
  (``95% CI: [0.04, 0.35]``), or a number in parentheses right after the estimate
  (``0.218 (0.120)``, the usual way to print an SE);
- ``table``: the estimate's row of a table, its standard-error column (``Std. Error``, ``std err``,
  ``se``) and interval columns (``[0.025``/``0.975]``, ``2.5 %``/``97.5 %``, ``conf.low``/
  ``conf.high``, ``ci_low``/``ci_high``).

A reading in the same unit as the estimate (a percent estimate's SE is a percent). Nothing read
stays ``None``: never guessed from the fit log, whose SEs only confirm a printed one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from causalverify.extraction._printed import Printed, clean_line

_SE_LABEL: Final = re.compile(
    r"\bs\.?e\.?\b|std\.? ?err|standard error|\bstderr\b|robust se|clustered se|\bse_", re.I
)
_CI_LABEL: Final = re.compile(r"\bci\b|conf|interval", re.I)
_LOW: Final = re.compile(r"^\[?0?\.025$|^2\.5 ?%?$|conf\.?_?low|ci_?low|ci\.lower|lower|^lo$", re.I)
_HIGH: Final = re.compile(
    r"^0?\.975\]?$|^97\.5 ?%?$|conf\.?_?high|ci_?high|ci\.upper|upper|^hi$", re.I
)
_SE_COLUMN: Final = re.compile(
    r"^(std\.? ?err(or|\.)?|se|s\.e\.|std_error|std\.error|stderr)$", re.I
)
_MARK_SE: Final = re.compile(r"^\s*\**\s*SE\s*\**\s*:\s*\**\s*([-+]?[\d.]+(?:[eE][-+]?\d+)?)")
_MARK_CI: Final = re.compile(
    r"^\s*\**\s*CI\s*\**\s*:\s*\**\s*[\[(]\s*([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*[,;]\s*"
    r"([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*[\])]"
)


@dataclass(frozen=True)
class Inference:
    """What was read: the SE and interval (in the estimate's unit) and where from."""

    se: float | None = None
    ci: tuple[float, float] | None = None
    source: str | None = None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def from_markers(stdout: str) -> Inference:
    """The protocol's ``SE:`` and ``CI:`` lines (the last of each)."""
    se: float | None = None
    ci: tuple[float, float] | None = None
    for raw in stdout.splitlines():
        text = clean_line(raw).lstrip()
        m = _MARK_SE.match(text)
        if m:
            se = _number(m.group(1))
        c = _MARK_CI.match(text)
        if c:
            lo, hi = _number(c.group(1)), _number(c.group(2))
            if lo is not None and hi is not None:
                ci = (min(lo, hi), max(lo, hi))
    if se is None and ci is None:
        return Inference()
    return Inference(se if se is not None and se > 0 else None, ci, "marker")


def from_line(estimate: Printed, line: Sequence[Printed]) -> Inference:
    """The SE and interval printed with the estimate on its line or in its table row."""
    after = [p for p in line if p.index > estimate.index and not p.missing]
    se = _se(estimate, after)
    ci = _ci(estimate, after)
    if se is None and ci is None:
        return Inference()
    source = "table" if estimate.column else "line"
    return Inference(se[0] if se else None, ci, se[1] if se else source)


def _se(estimate: Printed, after: Sequence[Printed]) -> tuple[float, str] | None:
    for p in after:
        if p.column and _SE_COLUMN.match(p.column.strip()):
            return abs(p.value), "table"
    for p in after:
        clause = p.label.lower()[-30:]
        if not p.column and _SE_LABEL.search(clause) and not _CI_LABEL.search(clause):
            return abs(_in_unit(p, estimate)), "line"
    first = after[0] if after else None
    if first is not None and first.after_value and first.depth > 0 and not first.label.strip(" ("):
        value = _in_unit(first, estimate)
        if abs(first.value - estimate.value) > 1e-9 * max(1.0, abs(estimate.value)):
            return abs(value), "parenthesis"  # (a number equal to the estimate restates it)
    return None


def _in_unit(p: Printed, estimate: Printed) -> float:
    """A number printed beside the estimate, in the estimate's unit: its own unit when it has
    one (``1.1%``), else the estimate's (``Effect (%): 4.21 (SE 1.10)``)."""
    return p.value if p.unit else p.printed * estimate.factor


def _ci(estimate: Printed, after: Sequence[Printed]) -> tuple[float, float] | None:
    low = next((p for p in after if p.column and _LOW.search(p.column.strip())), None)
    high = next((p for p in after if p.column and _HIGH.search(p.column.strip())), None)
    if low is not None and high is not None:
        return (min(low.value, high.value), max(low.value, high.value))
    for a, b in itertools.pairwise(after):
        if a.depth > 0 and b.depth > 0 and _CI_LABEL.search(a.label.lower()[-40:]):
            lo, hi = _in_unit(a, estimate), _in_unit(b, estimate)
            return (min(lo, hi), max(lo, hi))
    return None


def read_inference(
    estimate: Printed | None, printed: Sequence[Printed], stdout: str, *, marker: bool
) -> Inference:
    """The reported SE and interval of a decided estimate (see the module docstring)."""
    if marker:
        found = from_markers(stdout)
        if found.source is not None:
            return found
    if estimate is None:
        return Inference()
    line = [p for p in printed if p.line == estimate.line]
    return from_line(estimate, line)


def _clean(text: str) -> str:
    return " ".join(text.split())


__all__ = ["Inference", "read_inference"]

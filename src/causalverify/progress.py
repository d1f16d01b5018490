"""How long jobs report where they are, without knowing who listens (a terminal bar, a log).

A job that takes more than a few seconds accepts ``progress: StepCallback | None`` and calls it
as ``progress(step, done, total)``: the step it is on (a short phrase such as ``"re-executing
cells"``), how much of that step is done and its size (``None`` when unknown). A new step name
starts a new step.
"""

from __future__ import annotations

from collections.abc import Callable

StepCallback = Callable[[str, int, "int | None"], None]


def tell(progress: StepCallback | None, step: str, done: int = 0, total: int | None = None) -> None:
    """Call ``progress`` if there is one."""
    if progress is not None:
        progress(step, done, total)

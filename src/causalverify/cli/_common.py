"""Helpers shared by CLI commands: turning our errors into clean messages, text from models made
safe to print, progress bars that show status counts and retries while they happen."""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from causalverify.errors import CausalVerifyError

if TYPE_CHECKING:
    from rich.text import Text

P = ParamSpec("P")
R = TypeVar("R")

# Terminal control sequences, 7-bit (ESC ...) and 8-bit (C1) introduced: CSI; the string
# sequences OSC (titles, clipboard, hyperlinks), DCS, SOS, PM and APC up to their terminator; any
# other ESC sequence. Every quantifier runs over a class its neighbour cannot match, so the
# pattern is linear in the length of the text.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
# What is left after the sequences: C0 controls but newline and tab, DEL, C1 controls, the
# bidirectional marks, embeddings, overrides and isolates, and lone surrogates (which cannot be
# encoded for the terminal at all).
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def clean(text: object) -> str:
    """``str(text)`` without terminal control: escape sequences, control characters other than
    newline and tab, and bidirectional overrides are removed (a lone surrogate becomes U+FFFD).

    Everything a model or its script controls (stdout, fit-log names, model names from a store,
    messages quoting them) goes through this before it reaches the terminal.
    """
    text = str(text)
    if text.isprintable():  # the common case: nothing to remove
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL.sub(lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff" else "", text)


def safe(text: object) -> str:
    """``text`` made safe to place in a Rich markup string: :func:`clean`, then every ``[`` that
    would open a tag escaped."""
    from rich.markup import escape

    # Rich reads a backslash before any ``[`` as an escape, even where the bracket opens no tag:
    # one more keeps the text's own backslashes; ``escape`` handles brackets that open tags
    return escape(_BACKSLASHES_BEFORE_BRACKET.sub(r"\1\\[", clean(text)))


_BACKSLASHES_BEFORE_BRACKET = re.compile(r"(\\+)\[(?![a-z#/@][^[]*?\])")


def safe_text(text: object, style: str = "") -> Text:
    """``text`` (see :func:`clean`) as a :class:`rich.text.Text`: a table cell or a line that Rich
    prints literally (no markup, no emoji codes, no highlighting)."""
    from rich.text import Text

    return Text(clean(text), style=style)


def echo(text: object = "", *, err: bool = False, nl: bool = True) -> None:
    """:func:`click.echo` of :func:`clean` ``(text)``."""
    click.echo(clean(text), err=err, nl=nl)


def json_for_terminal(text: str) -> str:
    """JSON text with the characters :func:`clean` removes written as ``\\uXXXX`` escapes: the
    same JSON value, safe to print (``json.dumps`` with ``ensure_ascii=False`` leaves C1
    controls, bidirectional overrides and lone surrogates raw)."""
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def friendly_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Report a :class:`CausalVerifyError` as a one-line message (exit status 1)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except CausalVerifyError as exc:
            raise click.ClickException(clean(exc)) from exc

    return wrapper


def plain(value: Any) -> Any:
    """``value`` as plain JSON values: dataclasses and mappings as objects, tuples as lists,
    paths as strings, ``nan``/``inf`` as ``null``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def echo_json(value: Any) -> None:
    """Print ``value`` (see :func:`plain`) as indented JSON on stdout: what ``--json`` prints."""
    click.echo(json_for_terminal(json.dumps(plain(value), indent=2, ensure_ascii=False)))


def eta_columns(label: str) -> tuple[Any, ...]:
    """The columns of a counting progress bar: label, bar, done/total, elapsed time and ETA.

    Parameters
    ----------
    label
        Bold text at the left of the bar.

    Returns
    -------
    tuple
        :mod:`rich.progress` columns, for ``rich.progress.Progress(*columns, ...)``.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return (
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )


class RetryWatch(logging.Handler):
    """Counts the retries announced on the retry logger and keeps the latest one."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = clean(record.getMessage())

    def line(self) -> str:
        """``"3 retries so far; latest: ..."``, or ``""`` before the first retry."""
        if not self.count:
            return ""
        return (
            f"{self.count} {'retry' if self.count == 1 else 'retries'} so far; latest: {self.last}"
        )


@contextmanager
def watch_retries() -> Iterator[RetryWatch]:
    """Collect the model retries that happen inside the block (see ``models.retry``)."""
    from causalverify.models.retry import RETRY_LOGGER

    logger = logging.getLogger(RETRY_LOGGER)
    watch, level = RetryWatch(), logger.level
    logger.addHandler(watch)
    logger.setLevel(logging.INFO)
    try:
        yield watch
    finally:
        logger.removeHandler(watch)
        logger.setLevel(level)


def status_progress(console: Any, *columns: Any) -> Any:
    """A :class:`rich.progress.Progress` with two lines under the bars: ``.counts`` (set by the
    caller) and the model retries seen so far (``.retries``, a :class:`RetryWatch` the caller
    attaches with :func:`watch_retries`)."""
    from rich.progress import Progress
    from rich.text import Text

    class StatusProgress(Progress):
        counts = ""
        retries: RetryWatch | None = None

        def get_renderables(self) -> Iterator[Any]:
            yield self.make_tasks_table(self.tasks)
            if self.counts:
                yield Text(self.counts, style="dim", overflow="fold")
            notice = self.retries.line() if self.retries is not None else ""
            if notice:
                yield Text(notice, style="yellow", no_wrap=True, overflow="ellipsis")

    return StatusProgress(*columns, console=console)


@contextmanager
def step_progress(quiet: bool) -> Iterator[Any]:
    """A :data:`causalverify.progress.StepCallback` drawing one line per step on stderr: the
    step, its bar and count when it has a size, and the time it took. ``None`` when quiet."""
    if quiet:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    current: dict[str, Any] = {}

    def close_step() -> None:  # a step without a size shows as done once the next one starts
        for task in current.values():
            done = bar.tasks[task].completed or 1
            bar.update(task, total=done, completed=done)
            bar.stop_task(task)
        current.clear()

    def callback(step: str, done: int, total: int | None) -> None:
        if step not in current:
            close_step()
            current[step] = bar.add_task(step, total=total)
        bar.update(current[step], completed=done, total=total)

    with bar:
        yield callback
        close_step()


@contextmanager
def engine_progress(console: Any, quiet: bool, label: str) -> Iterator[Any]:
    """The progress bar of work the dispatch engine runs (a run, the calibration arm,
    Experiment A): done out of total with an ETA, the count of every status so far, and the
    model retries as they happen; a command that runs several tasks (the two arms of the RID
    ablation) gets a bar per task, named by the events. ``label`` names the bar until the first
    event. Yields the callback for the engine's progress events, or ``None`` when quiet."""
    if quiet:
        yield None
        return
    bar = status_progress(console, *eta_columns("{task.description}"))
    first = bar.add_task(label, total=None)
    rows: dict[str, Any] = {}

    def callback(event: Any) -> None:
        bar.counts = "  ".join(f"{k} {v}" for k, v in sorted(event.counts.items()))
        row = rows.get(event.task)
        if row is None:
            row = first if not rows else bar.add_task(event.task, total=event.total)
            rows[event.task] = row
            bar.update(row, description=event.task)
        if event.kind == "start":
            bar.reset(row, total=event.total, completed=event.done)
        else:
            bar.update(row, completed=event.done)

    with watch_retries() as retries, bar:
        bar.retries = retries
        yield callback


def cost_text(cost_usd: float, models: Iterable[str], prices: Any = None) -> str:
    """``cost_usd`` as ``$0.0123``; ``unpriced`` (with the models) when a paid model has no
    known price, since its answers were counted as costing nothing (the one formatting:
    :func:`causalverify.models.pricing.format_cost`)."""
    from causalverify.models.pricing import cost_text as text

    return text(cost_usd, models, prices)

"""Terminal tables that fit: short model names, numbers never cut, column blocks when too wide.

Every results table a command prints goes through :func:`print_table`. Long model names are
shortened by :func:`short_names` (a prefix all of them share is dropped; names still too long get
a legend), every column is printed whole (no wrapping, no ellipsis), and a table wider than the
terminal is split into blocks of columns, each repeating the label column, instead of squeezing
its numbers. Every title, header, cell and note is printed as plain text without control
sequences (model names and scenario ids come from stores and logs a model may have written).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from causalverify.cli._common import clean, safe_text

#: characters after which a shared prefix may be cut (``reference/textbook`` -> ``textbook``)
SEPARATORS = "/:-_. "
#: a displayed name longer than this makes the table use a legend instead
MAX_NAME = 28


@dataclass(frozen=True, kw_only=True)
class Names:
    """How model names are shown: ``display[name]``, and lines that explain the shortening."""

    display: Mapping[str, str]
    legend: tuple[str, ...] = ()

    def __call__(self, text: str) -> str:
        return self.display.get(text, text)


def short_names(names: Sequence[str], *, max_len: int = MAX_NAME) -> Names:
    """Display names for ``names`` (in the given order, which the legend keeps).

    1. With two or more names, the longest prefix they all share that ends at a ``/`` (the
       provider, a folder) is dropped, as long as every name keeps some text and the names stay
       distinct; a name is never cut inside itself (``openai/model-a`` and ``openai/model-b``
       stay ``model-a`` and ``model-b``).
    2. If a name is still longer than ``max_len``, every name becomes ``M1``, ``M2``, ... and the
       legend lists what each stands for.
    """
    names = list(dict.fromkeys(names))
    display = {name: name for name in names}
    legend: list[str] = []
    prefix = _shared_prefix(names) if len(names) >= 2 else ""
    if prefix:
        display = {name: name[len(prefix) :] for name in names}
        legend.append(f"model names without their shared prefix {prefix!r}")
    if any(len(shown) > max_len for shown in display.values()):
        display = {name: f"M{i}" for i, name in enumerate(names, start=1)}
        legend = [f"M{i} = {name}" for i, name in enumerate(names, start=1)]
    return Names(display=display, legend=tuple(legend))


def _shared_prefix(names: Sequence[str]) -> str:
    first, last = min(names), max(names)  # the shared prefix of all is that of these two
    common = first[
        : next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first))
    ]
    cut = common.rfind("/") + 1  # at a path boundary only
    prefix = common[:cut]
    rest = [name[cut:] for name in names]
    if not prefix or any(not r.strip(SEPARATORS) for r in rest) or len(set(rest)) < len(rest):
        return ""
    return prefix


def pct(value: object) -> str:
    """A rate as ``"88.1%"``; ``"-"`` when it is undefined (``None`` or NaN)."""
    if value is None:
        return "-"
    number = float(value)  # type: ignore[arg-type]
    return "-" if math.isnan(number) else f"{100 * number:.1f}%"


def print_table(
    console: Any,
    *,
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    note: str = "",
    left: Sequence[int] = (0,),
    names: Names | None = None,
) -> None:
    """Print a table on a :class:`rich.console.Console` without cutting any cell.

    The leading left-aligned columns (the labels) are repeated in every block.

    Parameters
    ----------
    console
        Where to print; its width decides how many columns fit side by side.
    title, header, rows, note
        The table; ``note`` is printed under it.
    left
        Indices of left-aligned columns (the rest are numbers, right-aligned).
    names
        Applied to every header and cell that is a model name (print its legend once, with
        :func:`print_legend`).
    """
    show = names if names is not None else Names(display={})
    header = [clean(show(h)) for h in header]
    body = [[clean(show(cell)) for cell in row] for row in rows]
    key = next((i for i in range(len(header)) if i not in left), len(header))
    blocks = _blocks(console, header, body, left, key=max(1, key))
    for i, columns in enumerate(blocks):
        console.print(safe_text(title + ("" if i == 0 else " (continued)"), style="bold"))
        table = _table(header, body, left, columns)
        console.print(table, width=max(console.width, _width(console, table)), crop=False)
    if note:
        console.print(safe_text(note, style="dim"))
    console.print()


def print_legend(console: Any, names: Names) -> None:
    """Print how the model names were shortened (nothing when they were not)."""
    for line in names.legend:
        console.print(safe_text(line, style="dim"))


def _table(
    header: Sequence[str],
    body: Sequence[Sequence[str]],
    left: Sequence[int],
    columns: Sequence[int],
) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for c in columns:
        table.add_column(
            safe_text(header[c]),
            justify="left" if c in left else "right",
            no_wrap=True,
            overflow="fold",
        )
    for row in body:
        table.add_row(*(safe_text(row[c] if c < len(row) else "") for c in columns))
    return table


def _width(console: Any, table: Any) -> int:
    from rich.measure import Measurement

    wide = console.options.update_width(1_000_000)
    return int(Measurement.get(console, wide, table).maximum)


def _blocks(
    console: Any,
    header: Sequence[str],
    body: Sequence[Sequence[str]],
    left: Sequence[int],
    *,
    key: int,
) -> list[list[int]]:
    """Column groups that each fit the console: the ``key`` label columns plus what fits."""
    labels = list(range(min(key, len(header))))
    blocks: list[list[int]] = []
    current = list(labels)
    for c in range(len(labels), len(header)):
        candidate = [*current, c]
        fits = _width(console, _table(header, body, left, candidate)) <= console.width
        if fits or len(current) == len(labels):
            current = candidate
        else:
            blocks.append(current)
            current = [*labels, c]
    blocks.append(current)
    return blocks

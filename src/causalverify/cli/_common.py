"""Helpers shared by CLI commands: turning our errors into clean messages, progress columns."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import click

from causalverify.errors import CausalVerifyError

P = ParamSpec("P")
R = TypeVar("R")


def friendly_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Report a :class:`CausalVerifyError` as a one-line message (exit status 1)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except CausalVerifyError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


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

"""Helpers shared by CLI commands: turning our errors into clean messages."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

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

"""Keeping this machine out of a release: host paths and the user name become placeholders.

A release is meant to be published, so the run metadata it carries (the command line, the suite
path, the Python prefix of a virtual environment, a managed R library under the home folder, ...)
must not name the machine that produced it. :func:`host_replacements` lists what is specific to
this host, longest first; :func:`scrub` rewrites every string of a JSON value with it.
"""

from __future__ import annotations

import getpass
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: placeholders, documented in docs/RELEASES.md
RUN = "<run>"
HOME = "~"
PYTHON = "<python-prefix>"
CWD = "<cwd>"
USER = "<user>"
SUITE = "<suite>"
#: what a run's --base-url becomes in a release
SERVER = "<server>"


def host_replacements(
    origin: Path | None = None, suite: Path | None = None
) -> list[tuple[str, str]]:
    """``(host text, placeholder)`` pairs, longest host text first.

    ``origin`` is the run folder being frozen (its absolute path becomes ``<run>``), ``suite`` the
    suite folder it used (``<suite>``).
    """
    pairs: dict[str, str] = {}

    def add(path: str | Path | None, placeholder: str) -> None:
        if not path:
            return
        for form in {str(path), os.path.realpath(path)}:
            if form not in ("", "/") and form not in pairs:
                pairs[form] = placeholder

    if origin is not None:
        add(Path(origin).absolute(), RUN)
    if suite is not None:
        add(Path(suite).absolute(), SUITE)
    add(sys.prefix, PYTHON)
    add(sys.base_prefix if sys.base_prefix != "/usr" else None, PYTHON)
    add(os.getcwd(), CWD)
    add(Path.home(), HOME)
    return sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)


def _user_pattern() -> re.Pattern[str] | None:
    """The user name as a path component (``/name/`` or ``/name`` at the end)."""
    try:
        user = getpass.getuser()
    except Exception:  # pragma: no cover - no user database entry
        return None
    if not user:
        return None
    return re.compile(rf"(?<=/){re.escape(user)}(?=/|$|\s|\"|')")


def scrub(value: Any, replacements: Iterable[tuple[str, str]]) -> Any:
    """``value`` with every host text replaced in every string (keys included)."""
    pairs = list(replacements)
    user = _user_pattern()

    def text(s: str) -> str:
        for host, placeholder in pairs:
            s = s.replace(host, placeholder)
        return user.sub(USER, s) if user is not None else s

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return text(v)
        if isinstance(v, dict):
            return {text(str(k)): walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(value)

"""Output provenance, Python side: which line of the script wrote each piece of stdout.

Loaded inside the sandbox by the fit-log hook (:mod:`causalverify.sandbox._fitlog_py`) from
``/code/hooks``. It replaces ``sys.stdout`` (and ``sys.__stdout__``) by a ``TextIOWrapper`` of a
subclass on the same buffer, with the same encoding, error handler and buffering, whose
``write`` writes exactly as before and then notes which code wrote: the innermost frame of the
script (``__main__``'s file) on the stack, the source text of the call it was executing (from
the code object's positions) and the outermost frame of the script (the top-level statement).
Consecutive writes from the same place (the pieces of one ``print``, the iterations of one loop)
make one record ``{"kind": "output", "function", "line", "code", "top_line", "chars", "head",
"tail"}`` written to the fit-log pipe when the place changes and at exit (``os._exit`` loses the
last one). The harness aligns the records with stdout (see :mod:`causalverify.sandbox.outputs`).

Nothing the script prints changes: writes reach the same buffer in the same order, the stream is
an instance of ``io.TextIOWrapper`` whose ``repr`` is a plain stream's, and every failure of the
record-keeping is swallowed. Writes that bypass ``sys.stdout`` (``sys.stdout.buffer``,
``os.write(1, ...)``, subprocesses) simply have no provenance. Imports only the standard library.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any

MAX_RECORDS = 4000
MAX_BYTES = 2 * 1024 * 1024
_HEAD = 64
_TAIL = 32
_CODE = 300
_STATE: dict[str, Any] = {}


def _reset(fd: int | None) -> None:
    _STATE.clear()
    _STATE.update(
        fd=fd,
        records=0,
        bytes=0,
        script=None,
        lines=None,
        positions={},
        pending=None,
    )


def _script() -> str | None:
    path = _STATE["script"]
    if path is None:
        path = getattr(sys.modules.get("__main__"), "__file__", None)
        if isinstance(path, str):
            _STATE["script"] = path
    return path if isinstance(path, str) else None


def _source_lines(path: str) -> list[bytes]:
    lines = _STATE["lines"]
    if lines is None:
        try:
            with open(path, "rb") as fh:
                lines = fh.read().split(b"\n")
        except OSError:
            lines = []
        _STATE["lines"] = lines
    return lines


def _span(frame: Any) -> tuple[int, int, int | None, int | None]:
    """(line, end line, column, end column) of the instruction ``frame`` is executing."""
    code = frame.f_code
    cache = _STATE["positions"]
    positions = cache.get(code)
    if positions is None:
        positions = cache[code] = list(code.co_positions())
    index = frame.f_lasti // 2
    line = frame.f_lineno
    if 0 <= index < len(positions):
        start, end, col, end_col = positions[index]
        if start is not None and end is not None:
            return start, end, col, end_col
    return line, line, None, None


def _code_text(path: str, span: tuple[int, int, int | None, int | None]) -> str:
    """The script's text of ``span`` (columns are UTF-8 byte offsets), on one line."""
    start, end, col, end_col = span
    lines = _source_lines(path)
    if not 1 <= start <= end <= len(lines):
        return ""
    chunk = lines[start - 1 : min(end, start + 20)]
    if col is not None and end_col is not None and end - start < 20:
        chunk = [*chunk]
        chunk[-1] = chunk[-1][:end_col]
        chunk[0] = chunk[0][col:]
    text = b" ".join(part.strip() for part in chunk).decode("utf-8", "replace")
    return text[:_CODE]


def _function(code: str) -> str:
    """The callee of a call's text: ``print``, ``sys.stdout.write``, ``d.head(2).info``."""
    if not code.endswith(")"):
        return ""
    depth = 0
    for i in range(len(code) - 1, -1, -1):
        c = code[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                callee = code[:i].strip()
                return callee if callee and len(callee) <= 100 and " " not in callee else ""
    return ""


def _emit() -> None:
    pending = _STATE["pending"]
    _STATE["pending"] = None
    fd = _STATE["fd"]
    if pending is None or fd is None or _STATE["records"] >= MAX_RECORDS:
        return
    (_code, _lasti, top_line), chars, head, tail, frame_info = pending
    path, span = frame_info
    code = _code_text(path, span)
    record = {
        "kind": "output",
        "function": _function(code),
        "line": span[0],
        "code": code,
        "top_line": top_line,
        "chars": chars,
        "head": head,
        "tail": tail,
    }
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8", "replace")
    if _STATE["bytes"] + len(line) > MAX_BYTES:
        _STATE["records"] = MAX_RECORDS
        return
    _STATE["records"] += 1
    _STATE["bytes"] += len(line)
    os.write(fd, line)


def _note(text: str, frame: Any) -> None:
    """Record that ``text`` was written by the code running in ``frame`` (or its callers)."""
    if _STATE["records"] >= MAX_RECORDS:
        return
    path = _script()
    inner = outer = None
    while frame is not None:
        if frame.f_code.co_filename == path:
            if inner is None:
                inner = frame
            outer = frame
        frame = frame.f_back
    pending = _STATE["pending"]
    if inner is None or outer is None:
        if pending is not None:
            _emit()  # output without a place breaks a run of writes
        return
    site = (inner.f_code, inner.f_lasti, outer.f_lineno)
    if pending is not None and pending[0] == site:
        _, chars, head, tail, info = pending
        if len(head) < _HEAD:
            head += text[: _HEAD - len(head)]
        _STATE["pending"] = (site, chars + len(text), head, (tail + text)[-_TAIL:], info)
        return
    if pending is not None:
        _emit()
    info = (path, _span(inner))
    _STATE["pending"] = (site, len(text), text[:_HEAD], text[-_TAIL:], info)


class _Stdout(io.TextIOWrapper):
    """``sys.stdout`` with its writes noted; otherwise the stream it replaces."""

    def write(self, s: str) -> int:
        n = super().write(s)
        if s:
            try:
                _note(s, sys._getframe(1))
            except Exception:  # provenance is best effort; the script must never notice it
                _STATE["pending"] = None
        return n


# the stream's repr is that of a plain one: <_io.TextIOWrapper name='<stdout>' ...>
_Stdout.__name__ = _Stdout.__qualname__ = "TextIOWrapper"
_Stdout.__module__ = "_io"


def _at_exit() -> None:
    try:
        _emit()
    except Exception:
        return


def install(fd: int | None = None) -> None:
    """Note the writes to ``sys.stdout`` from now on, into the pipe ``fd`` (or the last one).

    Called once when the interpreter starts and again by the warm interpreter for each cell,
    after it has given the cell fresh standard streams.
    """
    import atexit

    _reset(fd if fd is not None else _STATE.get("fd"))
    old = sys.stdout
    if type(old) is not io.TextIOWrapper or old is not sys.__stdout__:
        return  # not the interpreter's own stream: leave it alone
    new = _Stdout(
        old.buffer,
        encoding=old.encoding,
        errors=old.errors,
        newline="\n",
        line_buffering=old.line_buffering,
        write_through=old.write_through,
    )
    mode = getattr(old, "mode", None)
    if mode is not None:
        new.mode = mode  # type: ignore[misc]
    old.flush()
    old.detach()  # the buffer now belongs to the new stream alone
    sys.stdout = new
    setattr(sys, "__stdout__", new)  # noqa: B010 (final in the stubs, not at run time)
    atexit.register(_at_exit)

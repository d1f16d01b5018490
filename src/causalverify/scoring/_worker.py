"""The child side of bounded scoring: a process that rescores the cells it is sent.

The harness reads a cell's estimate from text the model's code printed, which it does not
control; :class:`causalverify.runner.budget.BoundedScorer` therefore scores each cell in a child
process that it can kill when the cell's time is up, and whose address space is limited. This
module is that child's loop: read a request, :func:`~causalverify.scoring.rescore` it, answer.

Frames on both pipes are an 8-byte big-endian length and a pickle. A request is ``(record,
profile, tolerance, extractor)``; an answer is ``("ok", record)``, ``("memory", message)`` or
``("error", message)``. After anything but ``ok`` the child exits (the harness starts another).
"""

from __future__ import annotations

import os
import pickle
import resource
import struct
import sys
import traceback
from typing import Any, Final

from causalverify.scoring._rescore import rescore

HEADER: Final = struct.Struct(">Q")
#: the one line a child writes when it is ready (before it reads any request)
READY: Final = b"causalverify-scoring-ready"


def read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``, or None at end of file."""
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the blocking descriptor ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def frame(payload: Any) -> bytes:
    """``payload`` pickled, behind its length."""
    body = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def _vm_size_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def limit_memory(extra_mb: int) -> None:
    """Let the address space grow by at most ``extra_mb`` beyond what is mapped now (the
    interpreter and its imports are not counted against a cell)."""
    if extra_mb <= 0:
        return
    limit = _vm_size_bytes() + extra_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def serve(read_fd: int, write_fd: int, memory_mb: int) -> int:
    """Answer requests on ``read_fd`` until it closes; the exit status of the child."""
    out_of_memory = frame(("memory", "MemoryError"))  # made before the bound: always sendable
    limit_memory(memory_mb)
    write_all(write_fd, READY)
    while True:
        ok = False
        try:
            header = read_exactly(read_fd, HEADER.size)
            if header is None:
                return 0
            body = read_exactly(read_fd, HEADER.unpack(header)[0])
            if body is None:
                return 0
            record, profile, tolerance, extractor = pickle.loads(body)
            del body
            scored = rescore(record, profile=profile, tolerance=tolerance, extractor=extractor)
            answer, ok = frame(("ok", scored)), True
        except MemoryError:
            answer = out_of_memory
        except BaseException as exc:  # every failure is the cell's, and reported
            answer = frame(("error", _describe(exc)))
        write_all(write_fd, answer)
        if not ok:
            return 1


def _describe(exc: BaseException) -> str:
    """``Type: message`` and the innermost frame, short."""
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    place = f" (at {where[0].name}, {os.path.basename(where[0].filename)}:{where[0].lineno})"
    text = f"{type(exc).__name__}: {exc}"[:500]
    return text + (place if where else "")


def main() -> None:
    """Entry point: ``python -c ... READ_FD WRITE_FD MEMORY_MB``."""
    read_fd, write_fd, memory_mb = (int(a) for a in sys.argv[-3:])
    sys.exit(serve(read_fd, write_fd, memory_mb))

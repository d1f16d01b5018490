"""Reads and writes one file of ``/scratch`` for the Inspect sandbox; runs inside the sandbox.

The harness passes this file's source to the sandbox's Python (``python -I -c``) with
``read PATH LIMIT`` (the bytes come out base64-encoded on stdout, because the sandbox's stdout is
decoded as text) or ``write PATH`` (the bytes come in on stdin). Only regular files are touched:
the path is opened without following a final symbolic link and without blocking (a FIFO with no
peer opens, or fails, at once instead of waiting), and what was opened is checked with ``fstat``
(so nothing swapped in between a check and the open can slip through). A refusal is one word on
stderr (a key of ``REFUSALS``) and exit status 3. Standard library only.
"""

from __future__ import annotations

import base64
import errno
import os
import stat
import sys
from typing import NoReturn

#: what each refusal word means to the harness: (exception class name, message)
REFUSALS = {
    "missing": ("FileNotFoundError", "no such file"),
    "permission": ("PermissionError", "permission denied"),
    "link": ("PermissionError", "a symbolic link (only regular files are read or written)"),
    "directory": ("IsADirectoryError", "a directory"),
    "fifo": ("PermissionError", "a FIFO (only regular files are read or written)"),
    "socket": ("PermissionError", "a socket (only regular files are read or written)"),
    "device": ("PermissionError", "a device (only regular files are read or written)"),
    "large": ("OutputLimitExceededError", "over the size limit"),
}
_ERRNO = {
    errno.ENOENT: "missing",
    errno.ENOTDIR: "missing",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
    errno.EROFS: "permission",
    errno.ELOOP: "link",
    errno.EISDIR: "directory",
}
_CHUNK = 3 << 18  # a multiple of 3: base64 of the chunks is that of the whole


def _refuse(kind: str) -> NoReturn:
    sys.stderr.write(kind)
    sys.exit(3)


def _open(path: str, flags: int) -> int:
    """``path`` opened as a regular file, or the refusal."""
    try:
        fd = os.open(
            path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o666
        )
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened to write with no reader
            _refuse(_special(os.lstat(path).st_mode))
        _refuse(_ERRNO.get(exc.errno or 0, "error"))
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        _refuse("directory")
    if not stat.S_ISREG(mode):
        _refuse(_special(mode))
    os.set_blocking(fd, True)
    return fd


def _special(mode: int) -> str:
    return "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device"


def read(path: str, limit: int) -> None:
    """Write the bytes of ``path`` base64-encoded on stdout; refuse past ``limit`` bytes."""
    fd = _open(path, os.O_RDONLY)
    if os.fstat(fd).st_size > limit:
        _refuse("large")
    size, pending = 0, b""
    while chunk := os.read(fd, _CHUNK):
        size += len(chunk)
        if size > limit:
            _refuse("large")
        chunk = pending + chunk
        cut = len(chunk) - len(chunk) % 3
        sys.stdout.write(base64.b64encode(chunk[:cut]).decode("ascii"))
        pending = chunk[cut:]
    sys.stdout.write(base64.b64encode(pending).decode("ascii"))


def write(path: str) -> None:
    """Replace ``path`` (creating its folders) by the bytes on stdin."""
    folder = os.path.dirname(path)
    if folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            _refuse(_ERRNO.get(exc.errno or 0, "error"))
    fd = _open(path, os.O_WRONLY | os.O_CREAT)
    os.ftruncate(fd, 0)  # only now: the open did not truncate what might not be a regular file
    while chunk := sys.stdin.buffer.read(_CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]


def main(argv: list[str]) -> None:
    """``read PATH LIMIT`` or ``write PATH``."""
    if argv[0] == "read":
        read(argv[1], int(argv[2]))
    else:
        write(argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])

"""A host uid of its own for every concurrent sandboxed run (when the harness runs as root).

``RLIMIT_NPROC`` is enforced per real uid and never for root. Running each script under a uid
that no other process uses makes the limit hold and count only that run's processes. A uid is
reserved with an ``flock`` on a slot file, which coordinates threads and processes alike and is
released by the kernel if the holder dies.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path
from types import TracebackType

#: sandbox uids are BASE_UID + slot; far above any uid an installation hands out
BASE_UID = 1_900_000_000
MAX_SLOTS = 4096


def _slot_dir() -> Path:
    for candidate in (
        Path("/run/causalverify-uids"),
        Path(tempfile.gettempdir()) / "causalverify-uids",
    ):
        try:
            candidate.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            continue
        if candidate.owner() == "root" and os.access(candidate, os.W_OK):
            return candidate
    raise OSError("no folder for sandbox uid slots (/run or the temp folder must be writable)")


class UidSlot:
    """Context manager holding a free sandbox uid; ``.uid`` is valid inside the ``with``."""

    def __init__(self) -> None:
        self.uid = -1
        self._fd = -1

    def __enter__(self) -> UidSlot:
        folder = _slot_dir()
        for slot in range(MAX_SLOTS):
            fd = os.open(folder / f"slot-{slot}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._fd, self.uid = fd, BASE_UID + slot
            return self
        raise OSError(f"all {MAX_SLOTS} sandbox uid slots are in use")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the lock
            self._fd = -1

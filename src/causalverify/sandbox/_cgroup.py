"""A per-run ``pids`` cgroup: the process-count limit that also holds for root.

``RLIMIT_NPROC`` is not enforced for processes whose user is root on the host, so when the
harness runs as root the sandbox puts each run in its own cgroup with ``pids.max``. Both cgroup v1
(a ``pids`` hierarchy) and v2 (the ``pids`` controller delegated to our subtree) are supported.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import time
from pathlib import Path

_counter = itertools.count()
_lock = threading.Lock()


def _own_cgroup(version: str) -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        hid, controllers, path = line.split(":", 2)
        if version == "v1" and "pids" in controllers.split(","):
            return path
        if version == "v2" and hid == "0" and controllers == "":
            return path
    return None


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, super options) of cgroup mounts."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, opts = ([*right.split(), "", ""])[:3]
        if fstype in ("cgroup", "cgroup2"):
            found.append((left.split()[4], fstype, opts))
    return found


def _v1_base() -> Path | None:
    own = _own_cgroup("v1")
    for point, fstype, opts in _mounts():
        if fstype == "cgroup" and "pids" in opts.split(",") and own is not None:
            base = Path(point) / own.lstrip("/") / "causalverify"
            base.mkdir(exist_ok=True)
            return base
    return None


def _v2_base() -> Path | None:
    own = _own_cgroup("v2")
    for point, fstype, _ in _mounts():
        if fstype != "cgroup2" or own is None:
            continue
        parent = Path(point) / own.lstrip("/")
        if "pids" not in (parent / "cgroup.controllers").read_text().split():
            continue
        if "pids" not in (parent / "cgroup.subtree_control").read_text().split():
            (parent / "cgroup.subtree_control").write_text("+pids")
        base = parent / "causalverify"
        base.mkdir(exist_ok=True)
        (base / "cgroup.subtree_control").write_text("+pids")
        return base
    return None


@functools.cache
def pids_base() -> Path | None:
    """The writable cgroup folder under which per-run ``pids`` cgroups are created, if any."""
    for finder in (_v1_base, _v2_base):
        try:
            base = finder()
        except OSError:
            continue
        if base is not None and os.access(base, os.W_OK):
            return base
    return None


class PidsCgroup:
    """A fresh cgroup with ``pids.max``; remove it with :meth:`close`."""

    def __init__(self, base: Path, max_pids: int) -> None:
        with _lock:
            name = f"run-{os.getpid()}-{next(_counter)}"
        self.path = base / name
        self.path.mkdir()
        (self.path / "pids.max").write_text(str(max_pids))

    def add(self, pid: int) -> None:
        """Move ``pid`` (which has not forked yet) into the cgroup."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def limit_hit(self) -> bool:
        """True when a fork was refused because of ``pids.max``."""
        try:
            for line in (self.path / "pids.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value) > 0
        except (OSError, ValueError):
            pass
        return False

    def close(self) -> None:
        """Remove the cgroup once its processes are gone (they were killed with the namespace)."""
        for _ in range(200):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)

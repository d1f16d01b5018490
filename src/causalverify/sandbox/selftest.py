"""Self-test: does each protection of the sandbox actually hold on this machine?

Every check runs a small probe inside the sandbox and inspects the outcome. The checks are
the warm interpreter (when the sandbox has one), network cut, read-only system, private scratch, unprivileged user, system call filter, no secrets, CPU, memory, processes, output and
wall clock. ``get_sandbox`` checks the cold path (every R cell, and Python cells without a warm
interpreter) before it hands the sandbox out, and refuses to execute when one fails; the warm
path is checked the same way (:func:`run_warm_selftest`) before its first Python cell, and Python
cells run cold when it fails. Results that pass are kept for a while (:mod:`._selftest_cache`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causalverify.families import Language
from causalverify.sandbox._classify import unavailable
from causalverify.sandbox._seccomp import syscall_numbers
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.base import ExecResult, Files, Limits, Sandbox
from causalverify.sandbox.warm import WarmInterpreter

__all__ = [
    "WARM_CHECK",
    "Check",
    "cpu_check",
    "cpu_verdict",
    "run_cold_selftest",
    "run_selftest",
    "run_warm_selftest",
]

#: the check that the warm interpreter runs (its failure only means Python cells run cold)
WARM_CHECK = "warm interpreter"


@dataclass(frozen=True, kw_only=True)
class Check:
    """One protection and whether it held."""

    name: str
    ok: bool
    detail: str


_PROBE = """
import json, os, socket, sys
out = {}
try:
    s = socket.create_connection(("127.0.0.1", PORT), timeout=2); s.close(); out["connect"] = "connected"
except OSError as e:
    out["connect"] = type(e).__name__
out["ifaces"] = sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:])
def tryw(p):
    try:
        open(p, "w").write("x"); return "written"
    except OSError as e:
        return type(e).__name__
out["write_usr"] = tryw("/usr/causalverify-probe")
out["write_prefix"] = tryw(os.path.join(sys.prefix, "causalverify-probe"))
out["cwd"] = os.getcwd()
out["listing"] = sorted(os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") for f in fs)
out["write_scratch"] = tryw("scratch-probe")
out["env"] = sorted(os.environ)
out["canary"] = os.path.exists(CANARY)
try:
    out["home"] = sorted(os.listdir(HOME))
except OSError:
    out["home"] = []
try:
    open("/etc/shadow").read(1); out["shadow"] = "read"
except OSError as e:
    out["shadow"] = type(e).__name__
out["uid"] = os.getuid()
status = open("/proc/self/status").read()
out["capeff"] = int(status.split("CapEff:")[1].split()[0], 16)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out["add_key"] = ADD_KEY > 0 and libc.syscall(ADD_KEY, b"user", b"probe", b"x", 1, ctypes.c_int(-4)) >= 0
out["userns"] = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER; the probe's last step
print(json.dumps(out))
"""

_ALLOWED_ENV = {
    "PATH",
    "HOME",
    "LANG",
    "TZ",
    "TMPDIR",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "POLARS_MAX_THREADS",
    "RAYON_NUM_THREADS",
    "R_DATATABLE_NUM_THREADS",
    "ARROW_DEFAULT_MEMORY_POOL",
    "MPLBACKEND",
    "PYTHONDONTWRITEBYTECODE",
    "PWD",  # set by bwrap --chdir
    "R_LIBS",  # the managed R library (a read-only path), when it exists
}


def _home_allowed() -> set[str]:
    """Entries of the host home that may appear inside: ancestors of read-only binds."""
    home = Path.home()
    allowed: set[str] = set()
    for bind in discover().ro_binds:
        p = Path(bind)
        if home in p.parents:
            allowed.add(p.relative_to(home).parts[0])
    return allowed


def _add_key_number() -> int:
    """The ``add_key`` system call number of this machine (0 when the filter does not know it)."""
    numbers = syscall_numbers()
    return numbers["add_key"] if numbers else 0


def _isolation_checks(sandbox: Sandbox) -> list[Check]:
    with socket.socket() as server, tempfile.TemporaryDirectory() as tmp:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        canary = Path(tmp) / "canonical_answers.json"
        canary.write_text('{"secret": 1}')
        code = (
            _PROBE.replace("PORT", str(server.getsockname()[1]))
            .replace("CANARY", repr(str(canary)))
            .replace("HOME", repr(str(Path.home())))
            .replace("ADD_KEY", str(_add_key_number()))
        )
        res = sandbox.run(code, "python", {"data/probe.csv": b"a\n1\n"}, Limits(wall_seconds=30))
    try:
        p = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        detail = f"probe failed ({res.status}): {res.stderr[-300:]}"
        return [Check(name="probe", ok=False, detail=detail)]
    blocked = ("PermissionError", "OSError", "FileNotFoundError")
    return [
        Check(
            name="network cut",
            ok=p["connect"] != "connected" and p["ifaces"] in ([], ["lo"]),
            detail=f"connect to host loopback: {p['connect']}; interfaces: {p['ifaces']}",
        ),
        Check(
            name="read-only system",
            ok=p["write_usr"] != "written" and p["write_prefix"] != "written",
            detail=f"write /usr: {p['write_usr']}; write Python prefix: {p['write_prefix']}",
        ),
        Check(
            name="private scratch",
            ok=p["write_scratch"] == "written" and p["listing"] == ["data/probe.csv"],
            detail=f"cwd {p['cwd']} holds {p['listing']}; write: {p['write_scratch']}",
        ),
        Check(
            name="unprivileged",
            ok=p["uid"] != 0 and p["capeff"] == 0,
            detail=f"uid {p['uid']}, effective capabilities {p['capeff']:#x}",
        ),
        Check(
            name="system call filter",
            ok=_add_key_number() > 0 and not p["add_key"] and not p["userns"],
            detail=(
                f"kernel keyring usable: {p['add_key']}; new user namespace: {p['userns']}"
                + ("" if _add_key_number() else "; no filter for this architecture")
            ),
        ),
        Check(
            name="no secrets",
            ok=set(p["env"]) <= _ALLOWED_ENV
            and not p["canary"]
            and set(p["home"]) <= _home_allowed()
            and p["shadow"] in blocked,
            detail=(
                f"environment {p['env']}; host file visible: {p['canary']}; home entries "
                f"visible: {p['home']}; /etc/shadow: {p['shadow']}"
            ),
        ),
    ]


def _limit_check(
    sandbox: Sandbox, name: str, code: str, limits: Limits, want: Callable[[ExecResult], bool]
) -> Check:
    res = sandbox.run(code, "python", {}, limits)
    return Check(name=name, ok=want(res), detail=_measured(res))


def _measured(res: ExecResult) -> str:
    detail = f"status {res.status}, {res.wall_seconds:.2f} s wall, {res.cpu_seconds:.2f} s CPU"
    return f"{detail}; {res.detail}" if res.detail else detail


def _twice(attempt: Callable[[int], Check]) -> Check:
    """``attempt(0)``, and when it fails ``attempt(1)`` once more: a check refuses the sandbox
    only when it fails twice in a row (both results are in the detail)."""
    first = attempt(0)
    if first.ok:
        return first
    second = attempt(1)
    verdict = "held on the second attempt" if second.ok else "failed twice"
    detail = f"{verdict}: {first.detail} | then {second.detail}"
    return Check(name=first.name, ok=second.ok, detail=detail)


# -- CPU ------------------------------------------------------------------------------------------
#
# The probe prints the CPU limit it runs under (and stops if it is not the one set), then spins
# until it has used OVERRUN times the limit and says so. When the limit holds, the kernel kills
# it at the limit (SIGKILL: the hard limit; the script is its namespace's init and ignores
# SIGXCPU). The decision rests on what was measured: the limit inside, the signal, the CPU time
# used. The wall clock only bounds the wait, and scales with the load, since on a busy machine a
# second of CPU can take many seconds of wall time; if it runs out first the check is
# inconclusive and, like any failed check, is tried once more with twice the wall budget before
# the sandbox is refused.

CPU_LIMIT_SECONDS = 1
_OVERRUN = 2
_CPU_PROBE = f"""
import resource, sys, time
limit = resource.getrlimit(resource.RLIMIT_CPU)
print(*limit, flush=True)
if limit != ({CPU_LIMIT_SECONDS}, {CPU_LIMIT_SECONDS}):
    sys.exit(0)
while time.process_time() < {_OVERRUN * CPU_LIMIT_SECONDS}:
    pass
print("overran", round(time.process_time(), 3), flush=True)
"""


def cpu_wall_budget(attempt: int = 0) -> float:
    """Wall-clock seconds the CPU probe may take: its CPU need stretched by the machine's load
    (runnable processes per core over the last minute), with room to spare; doubled on retry."""
    cores = os.cpu_count() or 1
    stretch = max(1.0, os.getloadavg()[0] / cores)
    return (10.0 + 4.0 * _OVERRUN * CPU_LIMIT_SECONDS * stretch) * (2**attempt)


def _signal_of(res: ExecResult) -> int | None:
    """The signal that ended the probe (bwrap reports it as exit status 128 + signal)."""
    code = res.exit_code
    if code is None:
        return None
    if code < 0:
        return -code
    return code - 128 if 128 < code < 128 + 65 else None


def cpu_verdict(res: ExecResult, limit: int = CPU_LIMIT_SECONDS) -> tuple[bool | None, str]:
    """Whether the CPU limit held on one run of the probe: True (the kernel stopped the probe at
    the limit), False (the limit is missing or did not act) or None (inconclusive: the wall
    budget ran out first), with what was measured."""
    lines = res.stdout.split()
    inside = " ".join(lines[:2])
    sig = _signal_of(res)
    facts = (
        f"limit inside: {inside or 'not reported'}; {res.cpu_seconds:.2f} s CPU in "
        f"{res.wall_seconds:.2f} s wall; ended by "
        + (signal.Signals(sig).name if sig in (signal.SIGKILL, signal.SIGXCPU) else res.status)
    )
    if inside and inside != f"{limit} {limit}":
        return False, f"the probe runs without a {limit} s CPU limit ({facts})"
    if "overran" in lines or res.status == "ok":
        return False, f"the probe used {_OVERRUN}x the CPU limit unstopped ({facts})"
    if res.cpu_seconds > limit + 1.0:
        return False, f"the probe used more CPU than the limit ({facts})"
    if res.status == "timeout":
        return None, f"the wall budget ran out before the CPU limit was reached ({facts})"
    if sig in (signal.SIGKILL, signal.SIGXCPU) and inside and res.cpu_seconds >= 0.5 * limit:
        return True, f"stopped at the CPU limit ({facts})"
    return False, f"the probe ended otherwise ({facts}; {res.detail})"


def cpu_check(sandbox: Sandbox) -> Check:
    """Does the CPU limit stop a script at its budget? (Tried twice before it fails.)"""

    def attempt(n: int) -> Check:
        limits = Limits(cpu_seconds=CPU_LIMIT_SECONDS, wall_seconds=cpu_wall_budget(n))
        held, detail = cpu_verdict(sandbox.run(_CPU_PROBE, "python", {}, limits))
        return Check(name="CPU", ok=held is True, detail=detail)

    return _twice(attempt)


def _limit_checks(sandbox: Sandbox) -> list[Check]:
    fork = (
        "import os, time\nn = 0\ntry:\n    for _ in range(40):\n        if os.fork() == 0:\n"
        "            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\n"
        "print(n)\n"
    )
    return [
        cpu_check(sandbox),
        _twice(
            lambda _: _limit_check(
                sandbox,
                "memory",
                "b = bytearray(1024 * 1024 * 1024)\nprint(len(b))\n",
                Limits(memory_mb=512),
                lambda r: r.status == "memory_limit",
            )
        ),
        _twice(
            lambda _: _limit_check(
                sandbox,
                "processes",
                fork,
                Limits(max_processes=8, wall_seconds=60),
                lambda r: r.status == "ok" and r.stdout.strip().isdigit() and int(r.stdout) < 10,
            )
        ),
        _twice(
            lambda _: _limit_check(
                sandbox,
                "output",
                "import sys\nwhile True: sys.stdout.write('x' * 65536)\n",
                Limits(max_output_bytes=100_000, wall_seconds=60),
                lambda r: (
                    r.status == "output_limit" and r.stdout_truncated and len(r.stdout) <= 100_000
                ),
            )
        ),
        _twice(
            lambda _: _limit_check(
                sandbox,
                "wall clock",
                "import time\ntime.sleep(60)\n",
                Limits(wall_seconds=0.5),
                lambda r: r.status == "timeout" and r.wall_seconds < 30,
            )
        ),
    ]


def run_selftest(sandbox: Sandbox) -> list[Check]:
    """Check every protection of ``sandbox`` (a few seconds, mostly the 1 s CPU-limit probe).

    A limit check that fails is run once more before it counts as failed (see :func:`cpu_check`).

    Parameters
    ----------
    sandbox : Sandbox
        The sandbox to test.

    Returns
    -------
    list of Check
        One entry per protection, in a stable order.
    """
    return _warm_checks(sandbox) + _isolation_checks(sandbox) + _limit_checks(sandbox)


def _warm_checks(sandbox: Sandbox) -> list[Check]:
    """Whether Python probes below run warm (forked from the preloaded interpreter)."""
    warm: WarmInterpreter | None = getattr(sandbox, "warm", None)
    if warm is None:
        return []
    state = warm.start()
    if not state.running:
        return [Check(name=WARM_CHECK, ok=False, detail=state.detail)]
    detail = (
        f"{len(state.preloaded)} modules preloaded in {state.start_seconds} s; "
        "the Python probes below ran warm"
    )
    return [Check(name=WARM_CHECK, ok=True, detail=detail)]


class _OnePath:
    """One execution path of a bubblewrap sandbox, as the probes see it: ``cold`` runs each
    script in a fresh sandbox, ``warm`` forks it from the warm interpreter (a script that cannot
    be handed over fails, it never falls back)."""

    def __init__(self, sandbox: Any, path: str) -> None:
        self._box = sandbox
        self._path = path
        self.warm = sandbox.warm if path == "warm" else None

    def run(
        self,
        code: str,
        language: Language,
        files: Files,
        limits: Limits | None = None,
        *,
        bare: bool = False,
    ) -> ExecResult:
        limits = limits or self._box.limits
        if self._path == "cold":
            result: ExecResult = self._box.run_cold(code, language, files, limits, bare=bare)
            return result
        warm_result: ExecResult | None = self._box.warm.run(code, files, limits)
        return warm_result or unavailable("the script could not be handed to the warm interpreter")


def run_cold_selftest(sandbox: Any) -> list[Check]:
    """:func:`run_selftest` of a bubblewrap sandbox's cold path (its warm interpreter, if it
    has one, is neither started nor used)."""
    return run_selftest(_OnePath(sandbox, "cold"))


def run_warm_selftest(sandbox: Any) -> list[Check]:
    """:func:`run_selftest` of a bubblewrap sandbox's warm path: its interpreter is started,
    and every Python probe is forked from it (none runs cold). Only the warm check when the
    interpreter cannot start."""
    path = _OnePath(sandbox, "warm")
    warm = _warm_checks(path)
    if not all(c.ok for c in warm):
        return warm
    return warm + _isolation_checks(path) + _limit_checks(path)

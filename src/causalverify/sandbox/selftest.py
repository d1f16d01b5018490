"""Self-test: does each protection of the sandbox actually hold on this machine?

Every check runs a small probe inside the sandbox and inspects the outcome. The checks are
the warm interpreter (when the sandbox has one), network cut, read-only system, private scratch, unprivileged user, system call filter, no secrets, CPU, memory, processes, output and
wall clock. ``get_sandbox`` runs them once per process and refuses to execute when one fails.
"""

from __future__ import annotations

import json
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from causalverify.sandbox._seccomp import syscall_numbers
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.base import ExecResult, Limits, Sandbox
from causalverify.sandbox.warm import WarmInterpreter

__all__ = ["WARM_CHECK", "Check", "run_selftest"]

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
    detail = f"status {res.status}, {res.wall_seconds:.2f} s wall, {res.cpu_seconds:.2f} s CPU"
    if res.detail:
        detail += f"; {res.detail}"
    return Check(name=name, ok=want(res), detail=detail)


def _limit_checks(sandbox: Sandbox) -> list[Check]:
    # Wall-clock allowances are generous on purpose: on a loaded machine a 1 s CPU budget can take
    # many seconds of wall time, and a self-test that fails for lack of CPU would refuse a healthy
    # sandbox. A limit that does not hold still fails: the status would be timeout, not cpu_limit.
    fork = (
        "import os, time\nn = 0\ntry:\n    for _ in range(40):\n        if os.fork() == 0:\n"
        "            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\n"
        "print(n)\n"
    )
    return [
        _limit_check(
            sandbox,
            "CPU",
            "while True: pass\n",
            Limits(cpu_seconds=1, wall_seconds=120),
            lambda r: r.status == "cpu_limit",
        ),
        _limit_check(
            sandbox,
            "memory",
            "b = bytearray(1024 * 1024 * 1024)\nprint(len(b))\n",
            Limits(memory_mb=512),
            lambda r: r.status == "memory_limit",
        ),
        _limit_check(
            sandbox,
            "processes",
            fork,
            Limits(max_processes=8, wall_seconds=60),
            lambda r: r.status == "ok" and r.stdout.strip().isdigit() and int(r.stdout) < 10,
        ),
        _limit_check(
            sandbox,
            "output",
            "import sys\nwhile True: sys.stdout.write('x' * 65536)\n",
            Limits(max_output_bytes=100_000, wall_seconds=60),
            lambda r: (
                r.status == "output_limit" and r.stdout_truncated and len(r.stdout) <= 100_000
            ),
        ),
        _limit_check(
            sandbox,
            "wall clock",
            "import time\ntime.sleep(60)\n",
            Limits(wall_seconds=0.5),
            lambda r: r.status == "timeout" and r.wall_seconds < 30,
        ),
    ]


def run_selftest(sandbox: Sandbox) -> list[Check]:
    """Check every protection of ``sandbox`` (about 2 s, mostly the 1 s CPU-limit probe).

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

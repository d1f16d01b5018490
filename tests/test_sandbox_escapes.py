"""Further escape attempts against the real bubblewrap sandbox (see test_sandbox_adversarial.py)."""

from __future__ import annotations

import ast
import dataclasses
import shutil
import threading

import pytest

from causalverify.families import Language
from causalverify.sandbox import ExecResult, Limits, Sandbox
from causalverify.sandbox._seccomp import filter_program, syscall_numbers
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.selftest import WARM_CHECK, _isolation_checks, _warm_checks
from causalverify.sandbox.warm import WarmInterpreter

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]
needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")
LANGS = [pytest.param("r", marks=needs_r, id="r"), pytest.param("python", id="python")]
FAST = Limits(wall_seconds=20, cpu_seconds=10, memory_mb=1024, max_processes=32)


def run(sandbox: Sandbox, language: Language, r: str, py: str) -> ExecResult:
    code = r if language == "r" else py
    return sandbox.run(code, language, {"data/s001.csv": b"a\n1\n"}, FAST)


@pytest.mark.parametrize("language", LANGS)
def test_no_new_user_namespace(sandbox: Sandbox, language: Language) -> None:
    # inside a user namespace the script would hold all capabilities (e.g. mount an unsized tmpfs)
    cmd = "unshare -Urm sh -c 'id -u; mount -t tmpfs none /tmp && echo MOUNTED'"
    r = f'system("{cmd} 2>&1")\ncat("DONE\\n")\n'
    py = f"import subprocess\nsubprocess.run({cmd!r}, shell=True)\nprint('DONE')\n"
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res
    assert "DONE" in res.stdout
    assert "MOUNTED" not in res.stdout
    assert "Operation not permitted" in res.stdout + res.stderr


def test_kernel_keyring_is_refused(sandbox: Sandbox) -> None:
    # a user keyring outlives the run, and as root later runs reuse the slot uid
    numbers = syscall_numbers()
    assert numbers is not None, "no system call filter for this machine"
    py = (
        "import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        f"r = libc.syscall({numbers['add_key']}, b'user', b'cv-leak', b'SECRET', 6, ctypes.c_int(-4))\n"
        "print(r, errno.errorcode.get(ctypes.get_errno()))\n"
        f"r = libc.syscall({numbers['keyctl']}, 0, ctypes.c_long(-4), 0)\n"  # KEYCTL_GET_KEYRING_ID
        "print(r, errno.errorcode.get(ctypes.get_errno()))\n"
    )
    res = sandbox.run(py, "python", {}, FAST)
    assert res.status == "ok", res
    assert res.stdout.split() == ["-1", "EPERM", "-1", "EPERM"]


@pytest.mark.slow
def test_selftest_fails_without_the_filter() -> None:
    # the self-test's isolation probe, forked warm (the path a run's Python cells take), sees
    # the missing filter while the other protections still hold. The interpreter preloads
    # nothing (the filter does not depend on what it imported; the analysis packages take
    # seconds), and the self-test's limit checks (a CPU-limit probe, a sleep cut by the wall
    # clock, ...) do not look at the filter and are left out
    unfiltered = BwrapSandbox(warm=True)
    unfiltered.spec = dataclasses.replace(unfiltered.spec, seccomp=None)
    unfiltered.warm = WarmInterpreter(unfiltered, preload=())
    try:
        checks = {c.name: c for c in _warm_checks(unfiltered) + _isolation_checks(unfiltered)}
    finally:
        unfiltered.close()
    assert checks[WARM_CHECK].ok, checks[WARM_CHECK]  # the probe ran warm
    assert not checks["system call filter"].ok, checks["system call filter"]
    assert checks["network cut"].ok


def test_filter_is_only_built_for_known_machines() -> None:
    program = filter_program("x86_64")
    assert program is not None and len(program) % 8 == 0
    assert filter_program("aarch64") != program
    assert filter_program("s390x") is None


@pytest.mark.parametrize("language", LANGS)
def test_no_inherited_descriptors(sandbox: Sandbox, language: Language) -> None:
    r = (
        'for (f in list.files("/proc/self/fd")) {\n'
        '  info <- tryCatch(readLines(file.path("/proc/self/fdinfo", f)), error = function(e) "")\n'
        '  flags <- sub("flags:\\\\s*", "", grep("^flags:", info, value = TRUE)[1])\n'
        '  cat(f, Sys.readlink(file.path("/proc/self/fd", f)), flags, "\\n")\n'
        "}\n"
    )
    py = (
        "import os\nfor f in os.listdir('/proc/self/fd'):\n"
        "    try:\n"
        "        info = open(f'/proc/self/fdinfo/{f}').read().split()\n"
        "        print(f, os.readlink(f'/proc/self/fd/{f}'), info[info.index('flags:') + 1])\n"
        "    except (OSError, ValueError):\n        pass\n"
    )
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res
    rows = [line.split() for line in res.stdout.splitlines() if line.strip()]
    targets = {
        row[0]: (row[1] if len(row) > 1 else "", row[2] if len(row) > 2 else "") for row in rows
    }
    # the script itself (R keeps it open), the descriptor of the listing, and the write end of
    # the fit log's pipe (write-only: O_WRONLY is flag 01) are expected
    extra = {
        fd: t
        for fd, (t, _flags) in targets.items()
        if fd not in ("0", "1", "2")
        and not t.startswith(("/code/main.", "/proc/"))
        and t not in ("", "NA")
    }
    log_ends = {
        fd for fd, t in extra.items() if t.startswith("pipe:") and targets[fd][1].endswith("1")
    }
    assert len(log_ends) <= 1, targets
    assert {fd: t for fd, t in extra.items() if fd not in log_ends} == {}, targets
    for fd in log_ends:  # write-only: the log cannot be read back through it
        assert int(targets[fd][1], 8) & 0o3 == 0o1, targets


@pytest.mark.parametrize("language", LANGS)
def test_host_state_folders_are_absent_and_dev_is_read_only(
    sandbox: Sandbox, language: Language
) -> None:
    paths = ["/run", "/var", "/sys", "/home", "/dev/shm/x", "/dev/x", "/x", "/code/x", "/proc/x"]
    r = (
        f"for (p in c({', '.join(repr(p) for p in paths)})) cat(p, file.exists(p),"
        " tryCatch({suppressWarnings(writeLines('x', p)); 'WRITTEN'}, error = function(e) 'DENIED'),"
        " '\\n')\n"
    )
    py = (
        f"import os\nfor p in {paths!r}:\n    try:\n        open(p, 'w').write('x'); w = 'WRITTEN'\n"
        "    except OSError:\n        w = 'DENIED'\n    print(p, os.path.exists(p), w)\n"
    )
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res
    assert res.stdout.count("DENIED") == len(paths), res.stdout
    assert "WRITTEN" not in res.stdout and "TRUE" not in res.stdout and "True" not in res.stdout


@pytest.mark.parametrize("language", LANGS)
def test_non_utf8_output_is_decoded_with_replacement(sandbox: Sandbox, language: Language) -> None:
    r = "cat(rawToChar(as.raw(c(0xff, 0xfe, 0x41, 0x0a))))\nmessage(rawToChar(as.raw(c(0xc3, 0x28))))\n"
    py = "import sys\nsys.stdout.buffer.write(b'\\xff\\xfeA\\n')\nsys.stderr.buffer.write(b'\\xc3(')\n"
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res
    assert res.stdout == "\ufffd\ufffdA\n"
    assert "\ufffd(" in res.stderr


def test_closing_the_pipes_does_not_hang_the_harness(sandbox: Sandbox) -> None:
    # the marker shows the script closed its pipes before the deadline (it gets there in about
    # 0.2 s, cold and under heavy load): the deadline, not the pipes' end, stopped it
    py = (
        "import os, time\nprint('closing', flush=True)\nos.close(1)\nos.close(2)\ntime.sleep(600)\n"
    )
    res = sandbox.run(py, "python", {}, Limits(wall_seconds=1))
    assert res.status == "timeout", res
    assert res.stdout == "closing\n", res
    assert res.wall_seconds < 10


def _lists(stdout: str) -> list[str]:
    """Split ``"[...] [...] [...]"`` into its three list literals, without their closing bracket."""
    return [part.strip() for part in stdout.strip().split("]")[:3]]


def test_concurrent_cells_do_not_see_each_other(sandbox: Sandbox) -> None:
    code = (
        "import os, time\nopen('/tmp/{me}', 'w').write('x'); open('{me}', 'w').write('x')\n"
        "time.sleep(1)\nprint(sorted(os.listdir('.')), sorted(os.listdir('/tmp')),"
        " [p for p in os.listdir('/proc') if p.isdigit()])\n"
    )
    out: dict[str, ExecResult] = {}

    def cell(me: str) -> None:
        out[me] = sandbox.run(code.format(me=me), "python", {f"data/{me}.csv": b"a\n"}, FAST)

    threads = [threading.Thread(target=cell, args=(me,)) for me in ("cellA", "cellB")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for me, other in (("cellA", "cellB"), ("cellB", "cellA")):
        assert out[me].status == "ok", out[me]
        scratch, tmp, pids = (ast.literal_eval(part + "]") for part in _lists(out[me].stdout))
        assert scratch == [me, "data"]
        # /tmp may also hold the read-only mount point of an environment installed under the
        # host's /tmp (a CI checkout); it must never hold the other cell's file
        assert me in tmp and other not in tmp
        assert pids == ["1"]

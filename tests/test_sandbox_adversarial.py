"""Hostile scripts, each in R and in Python, against the real bubblewrap sandbox.

Every case asserts the status the cell gets and that nothing leaked; the harness (this test
process) carries on and runs an ordinary script afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from causalverify.families import Language
from causalverify.sandbox import ExecResult, Limits, Sandbox

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]
needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")
LANGS = [pytest.param("r", marks=needs_r, id="r"), pytest.param("python", id="python")]

REPO = Path(__file__).resolve().parents[1]
FAST = Limits(wall_seconds=20, cpu_seconds=10, memory_mb=1024, max_processes=32)


def run(sandbox: Sandbox, language: Language, r: str, py: str, limits: Limits = FAST) -> ExecResult:
    result = sandbox.run(
        r if language == "r" else py, language, {"data/s001.csv": b"a\n1\n"}, limits
    )
    # the harness carries on: an ordinary script still runs right after
    after = sandbox.run("cat(1)" if language == "r" else "print(1)", language, {}, FAST)
    assert after.status == "ok", after
    return result


@pytest.fixture
def server() -> Iterator[socket.socket]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(5)
        s.setblocking(False)
        yield s


@pytest.mark.parametrize("language", LANGS)
def test_cannot_reach_host_loopback(
    sandbox: Sandbox, language: Language, server: socket.socket
) -> None:
    port = server.getsockname()[1]
    r = f'con <- socketConnection("127.0.0.1", {port}, open = "r+", timeout = 2)\ncat("CONNECTED\\n")\n'
    py = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('CONNECTED')\n"
    res = run(sandbox, language, r, py)
    assert res.status == "error"
    assert "CONNECTED" not in res.stdout
    with pytest.raises(BlockingIOError):
        server.accept()  # nobody connected


@pytest.fixture
def secrets(tmp_path: Path) -> dict[str, Path]:
    answers = tmp_path / "suite" / "canonical_answers.json"
    answers.parent.mkdir()
    answers.write_text('{"s001": "SECRET-CANONICAL-4242"}')
    store = tmp_path / "run" / "run.sqlite"
    store.parent.mkdir()
    store.write_bytes(b"SQLite format 3\x00SECRET-STORE-4242")
    return {"answers": answers, "store": store}


@pytest.mark.parametrize("language", LANGS)
def test_cannot_read_files_outside_scratch(
    sandbox: Sandbox, language: Language, secrets: dict[str, Path]
) -> None:
    targets = [
        str(secrets["answers"]),
        str(secrets["store"]),
        "/etc/shadow",
        str(REPO / "pyproject.toml"),
    ]
    r_list = ", ".join(f'"{t}"' for t in targets)
    r = (
        f"for (p in c({r_list})) {{\n"
        '  x <- tryCatch(readLines(p, warn = FALSE), error = function(e) "DENIED")\n'
        '  cat(p, ":", x, "\\n")\n}\n'
        f'cat("HOME:", list.files("{Path.home()}", all.files = TRUE, no.. = TRUE), "\\n")\n'
    )
    py = (
        f"import os\nfor p in {targets!r}:\n"
        "    try:\n        print(p, open(p, errors='replace').read())\n"
        "    except OSError as e:\n        print(p, 'DENIED', type(e).__name__)\n"
        f"home = {str(Path.home())!r}\n"
        "print('HOME:', sorted(os.listdir(home)) if os.path.isdir(home) else [])\n"
    )
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res.stderr
    assert res.stdout.count("DENIED") == len(targets)
    for leak in ("SECRET-CANONICAL", "SECRET-STORE", "root:", "causalverify"):
        assert leak not in res.stdout + res.stderr
    home_line = next(line for line in res.stdout.splitlines() if line.startswith("HOME:"))
    visible = set(re.findall(r"[^\s\[\]',:]+", home_line.removeprefix("HOME:")))
    assert visible <= allowed_home_entries()


def allowed_home_entries() -> set[str]:
    """Only folders that lead to the read-only interpreter binds (e.g. a pyenv install)."""
    home = Path.home()
    return {
        Path(p).relative_to(home).parts[0]
        for p in (sys.prefix, sys.base_prefix)
        if home in Path(p).parents
    }


@pytest.mark.parametrize("language", LANGS)
def test_cannot_read_parent_environment(
    sandbox: Sandbox, language: Language, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-CANARY-7777")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-FAKE-CANARY-7777")
    r = "print(Sys.getenv())\ncat(readLines('/proc/1/environ', warn = FALSE))\n"
    py = "import os\nprint(dict(os.environ))\nprint(open('/proc/1/environ').read())\n"
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res.stderr
    assert "CANARY" not in res.stdout + res.stderr
    assert "HOME" in res.stdout  # the probe did print the environment


@pytest.mark.parametrize("language", LANGS)
def test_cannot_write_outside_scratch(sandbox: Sandbox, language: Language) -> None:
    tag = uuid.uuid4().hex
    targets = [REPO / f"LEAK-{tag}", Path("/tmp") / f"LEAK-{tag}", Path(sys.prefix) / f"LEAK-{tag}"]
    r = (
        "".join(f'try(writeLines("x", "{t}"))\n' for t in targets)
        + 'writeLines("ok", "mine.txt")\n'
    )
    py = (
        "".join(
            f"try:\n    open({str(t)!r}, 'w').write('x')\nexcept OSError as e:\n    print(e)\n"
            for t in targets
        )
        + "open('mine.txt', 'w').write('ok')\n"
    )
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res.stderr
    for t in targets:
        assert not t.exists()


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGS)
def test_fork_bomb_is_contained(sandbox: Sandbox, language: Language) -> None:
    # R halts at the process limit ("unable to fork") within a second or two, but the sleeping
    # children it forked stay until the deadline, which then ends the whole tree: the wall limit
    # only has to leave room for that start (R's startup and the forks, well under a second on
    # an idle machine, about two under heavy load), and the cell must end soon after it
    r = "library(parallel)\nrepeat mcparallel(Sys.sleep(30))\n"
    py = "import os\nwhile True:\n    os.fork()\n"
    limits = Limits(wall_seconds=4, cpu_seconds=8, memory_mb=1024, max_processes=16)
    res = run(sandbox, language, r, py, limits)
    assert res.status in ("killed", "timeout"), res
    assert res.wall_seconds < limits.wall_seconds + 7


_ALLOCATE = """
import json, sys
from causalverify.sandbox import Limits, get_sandbox
box = get_sandbox(warm=sys.argv[1] == "warm")
code = {"r": "x <- numeric(1e9)\\nx[] <- 1\\ncat(sum(x))\\n",
        "python": "b = bytearray(8 * 1024**3)\\nprint(len(b))\\n"}[sys.argv[2]]
res = box.run(code, sys.argv[2], {}, Limits(memory_mb=1024, wall_seconds=20))
print(json.dumps({"status": res.status, "peak": res.peak_memory_mb}))
"""


@pytest.mark.parametrize("language", LANGS)
def test_allocating_8gb_hits_memory_limit(sandbox: Sandbox, language: Language) -> None:
    # run from a fresh harness process: Linux charges a child the peak memory of the process
    # that spawned it (vfork, then exec), so a large test process would be measured instead
    mode = "warm" if getattr(sandbox, "warm", None) is not None else "cold"
    out = subprocess.run(
        [sys.executable, "-c", _ALLOCATE, mode, language],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["status"] == "memory_limit", res
    assert res["peak"] is not None and res["peak"] < 1100, res


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGS)
def test_cpu_loop_hits_cpu_limit(sandbox: Sandbox, language: Language) -> None:
    # the smallest CPU limit there is (RLIMIT_CPU counts whole seconds): the loop is stopped by
    # it, and the CPU time reported is the limit's, give or take the start and the kernel's tick
    limit = 1
    res = run(
        sandbox,
        language,
        "repeat {}\n",
        "while True:\n    pass\n",
        Limits(cpu_seconds=limit, wall_seconds=30),
    )
    assert res.status == "cpu_limit", res
    assert limit - 0.5 <= res.cpu_seconds <= limit + 1.5, res


@pytest.mark.parametrize("language", LANGS)
def test_sleep_forever_times_out(sandbox: Sandbox, language: Language) -> None:
    # the limit leaves room for the interpreter to start and fall asleep: Python does in about
    # 0.2 s even under heavy load, R takes up to two seconds there (well under one when idle)
    limit = 2.0 if language == "r" else 1.0
    res = run(
        sandbox,
        language,
        "Sys.sleep(1e6)\n",
        "import time\ntime.sleep(10**6)\n",
        Limits(wall_seconds=limit),
    )
    assert res.status == "timeout"
    assert limit <= res.wall_seconds < limit + 3


@pytest.mark.parametrize("language", LANGS)
def test_printing_1gb_is_cut_off_early(sandbox: Sandbox, language: Language) -> None:
    r = 'x <- strrep("x", 1e6)\nfor (i in 1:1000) cat(x)\n'
    py = "import sys\nx = 'x' * 10**6\nfor _ in range(1000):\n    sys.stdout.write(x)\n"
    res = run(sandbox, language, r, py, Limits(max_output_bytes=200_000, wall_seconds=30))
    assert res.status == "output_limit"
    assert res.stdout_truncated and len(res.stdout) == 200_000
    assert res.wall_seconds < 10


@pytest.mark.parametrize("language", LANGS)
def test_killing_parent_and_group_does_not_reach_harness(
    sandbox: Sandbox, language: Language
) -> None:
    r = (
        'ppid <- as.integer(strsplit(readLines("/proc/self/stat"), " ")[[1]][4])\n'
        "try(tools::pskill(ppid, 9L))\n"
        'system("kill -9 -1; kill -9 0")\ncat("survived\\n")\n'
    )
    py = (
        "import os, signal\n"
        "for target in (os.getppid(), -os.getpgrp(), -1):\n"
        "    try:\n        os.kill(target, signal.SIGKILL)\n    except OSError as e:\n        print(e)\n"
        "print('survived')\n"
    )
    me = os.getpid()
    res = run(sandbox, language, r, py)
    assert os.getpid() == me  # this process (the harness) is alive and still running the test
    assert res.status in ("ok", "killed", "error")


@pytest.mark.parametrize("language", LANGS)
def test_runtime_install_fails(sandbox: Sandbox, language: Language) -> None:
    r = (
        'try(install.packages("fixest", repos = "https://cloud.r-project.org"))\n'
        "# a writable library does not help without network\n"
        'try(install.packages("fixest", lib = tempdir(), repos = "https://cloud.r-project.org"))\n'
        ".libPaths(c(tempdir(), .libPaths()))\nlibrary(fixest)\n"
    )
    py = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'pip', 'install', '--retries', '0', '--timeout', '3',"
        " 'fixest-free-pkg'])\n"
        "import fixest_free_pkg\n"
    )
    res = run(sandbox, language, r, py, Limits(wall_seconds=60))
    assert res.status == "error", res
    assert res.missing_package in ("fixest", "fixest_free_pkg")
    site = Path(sys.prefix) / "lib"
    assert not list(site.glob("python*/site-packages/fixest_free_pkg*"))
    assert not Path("/usr/local/lib/R/site-library/fixest").exists()


@pytest.mark.parametrize("language", LANGS)
def test_symlink_out_of_scratch_is_dead(
    sandbox: Sandbox, language: Language, secrets: dict[str, Path]
) -> None:
    target = str(secrets["answers"])
    r = (
        f'file.symlink("{target}", "link.json")\nfile.symlink("/etc/shadow", "shadow")\n'
        'for (p in c("link.json", "shadow")) cat(tryCatch(readLines(p), error = function(e) "DENIED"), "\\n")\n'
    )
    py = (
        f"import os\nos.symlink({target!r}, 'link.json')\nos.symlink('/etc/shadow', 'shadow')\n"
        "for p in ('link.json', 'shadow'):\n"
        "    try:\n        print(open(p).read())\n    except OSError:\n        print('DENIED')\n"
    )
    res = run(sandbox, language, r, py)
    assert res.stdout.count("DENIED") == 2, res
    assert "SECRET" not in res.stdout + res.stderr


def _host_processes_with(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("language", LANGS)
def test_daemon_does_not_outlive_the_cell(sandbox: Sandbox, language: Language) -> None:
    seconds = str(900000 + int(uuid.uuid4().int % 99999))
    r = (
        f"system(\"setsid sh -c 'sleep {seconds}' > /dev/null 2>&1 < /dev/null &\")\n"
        "cmd <- function(p) { b <- tryCatch(readBin(file.path('/proc', p, 'cmdline'), 'raw', 4096),"
        " error = function(e) raw(0)); b[b == 0] <- as.raw(32); rawToChar(b) }\n"
        "hit <- FALSE\nfor (i in 1:50) { ps <- list.files('/proc', pattern = '^[0-9]+$')\n"
        f"  hit <- any(grepl('{seconds}', vapply(ps, cmd, ''))); if (hit) break; Sys.sleep(0.1) }}\n"
        'cat(if (hit) "DAEMON_RUNNING" else "NO_DAEMON", "\\n")\n'
    )
    py = (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        f"        os.execvp('sleep', ['sleep', '{seconds}'])\n    os._exit(0)\n"
        "for _ in range(50):\n"
        "    hit = any(b'" + seconds + "' in open(f'/proc/{p}/cmdline', 'rb').read()"
        " for p in os.listdir('/proc') if p.isdigit())\n"
        "    if hit:\n        break\n    time.sleep(0.1)\n"
        "print('DAEMON_RUNNING' if hit else 'NO_DAEMON')\n"
    )
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res.stderr
    assert "DAEMON_RUNNING" in res.stdout  # the daemon really started inside
    assert _host_processes_with(seconds) == []  # and is gone once run() returned


CLOSE_AND_STAY = {
    # the interpreter itself keeps running with no descriptor left
    "sleep": "import os, time\nos.closerange(0, 1 << 16)\ntime.sleep(75)\n",
    # a fresh program image, still PID 1 of the cell, holding nothing
    "exec": "import os\nos.closerange(0, 1 << 16)\nos.execv('/bin/sleep', ['sleep', '75'])\n",
}
#: printed (and flushed) before the script closes its descriptors: its arrival shows that the
#: cell got there before the deadline, so the deadline really ended a cell holding nothing
CLOSING = "print('closing', flush=True)\n"


@pytest.mark.parametrize("how", sorted(CLOSE_AND_STAY))
def test_closing_every_descriptor_does_not_escape_the_wall_clock(
    sandbox: Sandbox, how: str
) -> None:
    # the deadline holds whatever the cell does with its pipes (and the fit log's); a cell
    # reaches its closing in about 0.2 s, cold and under heavy load, so 1 s leaves ample room
    limits = Limits(wall_seconds=1, cpu_seconds=10, memory_mb=1024, max_processes=32)
    code = CLOSING + CLOSE_AND_STAY[how]
    res = sandbox.run(code, "python", {"data/s001.csv": b"a\n1\n"}, limits)
    assert res.status == "timeout", res
    assert res.stdout == "closing\n", res  # it did close everything before the deadline
    assert res.wall_seconds < limits.wall_seconds + 10, res  # not the 75 s the script asked for
    after = sandbox.run("print(1)", "python", {}, FAST)
    assert after.status == "ok" and after.stdout == "1\n", after


@pytest.mark.parametrize("language", LANGS)
def test_the_cgroup_path_is_the_cells_own_root(sandbox: Sandbox, language: Language) -> None:
    # a cgroup namespace of its own: /proc/self/cgroup names no host path
    r = 'cat(readLines("/proc/self/cgroup"), sep = "\\n")\n'
    py = "print(open('/proc/self/cgroup').read(), end='')\n"
    res = run(sandbox, language, r, py)
    assert res.status == "ok", res
    lines = res.stdout.splitlines()
    assert lines and all(line.rsplit(":", 1)[1] == "/" for line in lines), res.stdout

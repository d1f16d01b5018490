"""The sandbox as most users run it: not as root.

Without root, bwrap makes a user namespace for each cold run, and the warm interpreter gives each
cell a user namespace of its own; neither path uses the uid slots. When the tests themselves run
as root (as in CI), this test runs the sandbox's attack tests again as ``nobody``, cold and warm,
in a private mount namespace where the folders that hold the interpreter and the checkout are
made traversable (a fresh mode-0755 tmpfs over each closed ancestor, with the needed folders
bound back in). Nothing outside that namespace changes.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    pytest.mark.skipif(
        os.geteuid() != 0, reason="already unprivileged: the other sandbox tests cover it"
    ),
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
NOBODY = 65534
FILES = ("test_sandbox_adversarial.py", "test_sandbox_escapes.py", "test_sandbox_warm.py")


def _closed_ancestor(path: Path) -> Path | None:
    """The outermost folder above ``path`` that others cannot traverse, if any."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not os.stat(parent).st_mode & 0o001:
            return parent
    return None


def _opening_script(needed: list[Path], staging: Path) -> list[str]:
    """Shell lines that make every folder in ``needed`` reachable for any user."""
    lines: list[str] = []
    by_ancestor: dict[Path, set[Path]] = {}
    for path in needed:
        closed = _closed_ancestor(path)
        if closed is not None:
            child = closed / path.relative_to(closed).parts[0]
            by_ancestor.setdefault(closed, set()).add(child)
    for n, (closed, children) in enumerate(sorted(by_ancestor.items())):
        kept = []
        for m, child in enumerate(sorted(children)):
            stage = staging / f"{n}-{m}"
            stage.mkdir(parents=True)
            lines.append(f"mount --bind {shlex.quote(str(child))} {shlex.quote(str(stage))}")
            kept.append((child, stage))
        lines.append(f"mount -t tmpfs -o mode=0755 tmpfs {shlex.quote(str(closed))}")
        for child, stage in kept:
            lines.append(f"mkdir -p {shlex.quote(str(child))}")
            lines.append(f"mount --bind {shlex.quote(str(stage))} {shlex.quote(str(child))}")
    return lines


needs_util_linux = pytest.mark.skipif(
    shutil.which("unshare") is None or shutil.which("setpriv") is None,
    reason="util-linux's unshare and setpriv are needed to drop to an unprivileged user",
)


@pytest.fixture(scope="module")
def reruns() -> Iterator[dict[str, tuple[subprocess.Popen[bytes], Path]]]:
    """The three reruns as ``nobody``, started together: they spend most of their time waiting
    on wall-clock limits and sleeping cells, so the three overlap instead of each holding a test
    worker in turn. Each test below waits for its own."""
    with contextlib.ExitStack() as stack:
        started = {}
        for name in FILES:
            # pytest's own temporary folders are private to root: fresh folders of the temp dir
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cv-nobody-")))
            root.chmod(0o755)
            work = root / "work"
            work.mkdir()
            os.chown(work, NOBODY, NOBODY)
            started[name] = stack.enter_context(_start_as_nobody(root, work, name))
        yield started


@needs_util_linux
@pytest.mark.parametrize("name", FILES)
def test_attack_tests_hold_for_an_unprivileged_user(
    name: str, reruns: dict[str, tuple[subprocess.Popen[bytes], Path]]
) -> None:
    process, output = reruns[name]
    process.wait(timeout=1800)
    tail = output.read_text(errors="replace")[-4000:]
    assert process.returncode == 0, tail
    assert " passed" in tail and "failed" not in tail, tail


@contextlib.contextmanager
def _start_as_nobody(
    root: Path, work: Path, name: str
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """pytest on the test file ``name`` as ``nobody``, started, and the file that takes its
    output (a file, not a pipe, so that a rerun never waits on a reader); ended on exit if it is
    still running."""
    needed = [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), REPO]
    lines = _opening_script(needed, root / "staging")
    env = {
        "HOME": str(work),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": str(work),
    }
    if os.environ.get("CI"):
        env["CI"] = os.environ["CI"]
    pytest_cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--basetemp",
        str(work / "pytest"),
        "-k",
        "not reference_panel",  # the runs need no new protection and take long
        str(HERE / name),
    ]
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    inner = " && ".join([*lines, shlex.join([*drop, "env", "-i", *_env(env), *pytest_cmd])])
    output = root / "output.txt"
    with (
        output.open("wb") as sink,
        subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", inner],
            cwd=work,
            stdout=sink,
            stderr=subprocess.STDOUT,
        ) as process,
    ):
        try:
            yield process, output
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def _env(env: dict[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in sorted(env.items())]

"""The Inspect sandbox's ``read_file`` and ``write_file`` touch regular files only: a FIFO, socket,
device or symbolic link a command leaves in /scratch is refused at once (never waited on), and
the bytes read are exactly those of the file. Real bubblewrap, real FIFOs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai.util import OutputLimitExceededError, SandboxEnvironmentLimits

from causalverify.inspect_eval.sandbox import CausalVerifySandbox

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]

#: how long a read may take before the test calls it blocked (a guard, not a speed check)
GUARD_SECONDS = 120


def _sample(folder: Path) -> CausalVerifySandbox:
    folder.mkdir()
    return CausalVerifySandbox(folder)


@pytest.fixture
def box(tmp_path: Path) -> Iterator[CausalVerifySandbox]:
    sample = _sample(tmp_path / "scratch")
    yield sample
    sample.close()


def _run(box: CausalVerifySandbox, code: str) -> None:
    result = asyncio.run(box.exec([sys.executable, "-c", code]))
    assert result.success, result.stderr


def _unblocked(box: CausalVerifySandbox, call: Any, fifo: str) -> BaseException | object:
    """What ``call()`` returned or raised; fails the test if it waits on ``fifo``.

    A blocked call is released (the FIFO is opened from the other end and closed) so that the
    test ends either way.
    """
    outcome: list[BaseException | object] = []

    def target() -> None:
        try:
            outcome.append(asyncio.run(call()))
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(GUARD_SECONDS)
    if thread.is_alive():
        for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                os.close(os.open(box.workspace / fifo, flags))
        thread.join(GUARD_SECONDS)
        pytest.fail(f"the call waited on the FIFO {fifo} for {GUARD_SECONDS} s")
    return outcome[0]


def test_read_file_refuses_a_fifo_the_script_left(box: CausalVerifySandbox) -> None:
    _run(box, "import os; os.mkfifo('pipe'); os.makedirs('sub'); os.mkfifo('sub/pipe')")
    for name in ("pipe", "sub/pipe", "/scratch/pipe"):
        for text in (True, False):
            outcome = _unblocked(box, lambda n=name, t=text: box.read_file(n, text=t), "pipe")
            assert isinstance(outcome, PermissionError), outcome
            assert "FIFO" in str(outcome) and "regular file" in str(outcome)


def test_a_sample_changes_what_it_wrote_while_other_samples_come_and_go(
    box: CausalVerifySandbox, tmp_path: Path
) -> None:
    """Every command of a sample runs as the same user, whatever else runs meanwhile: here
    another sample's command is running when this sample makes its files, and has ended when it
    changes them. (As root each run takes a free uid; if a sample's commands did too, the second
    would get another uid and could not write a file the first made with mode 0644.)"""
    other = _sample(tmp_path / "other")
    wait = (
        "import os, time\nopen('started', 'w').close()\n"
        "while not os.path.exists('release'):\n    time.sleep(0.05)\n"
    )
    waiting = threading.Thread(
        target=lambda: asyncio.run(other.exec([sys.executable, "-c", wait])), daemon=True
    )
    waiting.start()
    deadline = time.monotonic() + GUARD_SECONDS
    while not (other.workspace / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (other.workspace / "started").exists(), "the other sample's command never started"
    try:
        _run(box, "import os; open('made.txt', 'w').write('one'); os.mkdir('sub')")
    finally:
        (other.workspace / "release").touch()
        waiting.join(GUARD_SECONDS)
        other.close()
    asyncio.run(box.write_file("made.txt", "two"))
    asyncio.run(box.write_file("sub/new.txt", "three"))
    _run(box, "open('made.txt', 'a').write('+'); open('sub/new.txt', 'a').write('+')")
    assert asyncio.run(box.read_file("made.txt")) == "two+"
    assert asyncio.run(box.read_file("sub/new.txt")) == "three+"


def test_a_command_runs_only_as_a_sandbox_uid(box: CausalVerifySandbox) -> None:
    from causalverify.sandbox.bwrap import BwrapSandbox

    with pytest.raises(ValueError, match="not a sandbox uid"):
        BwrapSandbox().run_command(["true"], workspace=box.workspace, owner=0)


def test_write_file_refuses_a_fifo_the_script_left(box: CausalVerifySandbox) -> None:
    _run(box, "import os; os.mkfifo('pipe')")
    outcome = _unblocked(box, lambda: box.write_file("pipe", "data"), "pipe")
    assert isinstance(outcome, PermissionError) and "FIFO" in str(outcome), outcome


def test_other_special_files_and_links_are_refused(box: CausalVerifySandbox) -> None:
    _run(
        box,
        "import os, socket\n"
        "s = socket.socket(socket.AF_UNIX); s.bind('sock')\n"
        "os.symlink('/dev/zero', 'zero'); os.symlink('real.txt', 'link')\n"
        "open('real.txt', 'w').write('real'); os.mkdir('folder')\n",
    )
    for name, error, word in (
        ("sock", PermissionError, "socket"),
        ("zero", PermissionError, "symbolic link"),
        ("link", PermissionError, "symbolic link"),
        ("folder", IsADirectoryError, "directory"),
        ("absent.txt", FileNotFoundError, "no such file"),
    ):
        with pytest.raises(error, match=word):
            asyncio.run(box.read_file(name))
    with pytest.raises(PermissionError, match="symbolic link"):
        asyncio.run(box.write_file("link", "overwritten"))
    assert asyncio.run(box.read_file("real.txt")) == "real"


def test_regular_files_round_trip_exactly(box: CausalVerifySandbox) -> None:
    binary = bytes(range(256)) * 4 + b"\xff\xfe"
    asyncio.run(box.write_file("deep/er/data.bin", binary))
    assert asyncio.run(box.read_file("deep/er/data.bin", text=False)) == binary
    text = "line one\r\nzwei – drei\n\nlast"
    asyncio.run(box.write_file("notes.txt", text))
    assert asyncio.run(box.read_file("notes.txt")) == text  # newlines kept
    asyncio.run(box.write_file("notes.txt", "short"))
    assert asyncio.run(box.read_file("notes.txt")) == "short"  # replaced, not overwritten
    with pytest.raises(UnicodeDecodeError):
        asyncio.run(box.read_file("deep/er/data.bin"))
    asyncio.run(box.write_file("empty", b""))
    assert asyncio.run(box.read_file("empty", text=False)) == b""


def test_a_file_over_the_read_limit_is_refused(
    box: CausalVerifySandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SandboxEnvironmentLimits, "MAX_READ_FILE_SIZE", 1000)
    asyncio.run(box.write_file("small", b"x" * 1000))
    asyncio.run(box.write_file("big", b"x" * 1001))
    assert asyncio.run(box.read_file("small", text=False)) == b"x" * 1000
    with pytest.raises(OutputLimitExceededError):
        asyncio.run(box.read_file("big"))

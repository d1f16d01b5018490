"""Setup problems a user meets at the command line end in one line that says what to do, never a
traceback: a busy port for ``view --serve``, an Inspect log that is not one (or was cut short), a
Dask scheduler that does not answer, and a second run into a folder whose suite is being built."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from run_e2e_helpers import shared_root, smoke_suite


def _one_line_error(result: object) -> str:
    output = str(getattr(result, "output", ""))
    assert getattr(result, "exit_code", None) == 1, output
    assert "Traceback" not in output and not isinstance(
        getattr(result, "exception", None), (OSError, ValueError, TimeoutError)
    ), output
    return output


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_view_serve_on_a_busy_port_says_so(tmp_path: Path) -> None:
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "index.html").write_text("<html></html>")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["view", str(tmp_path), "--serve", "--port", str(port)])
    output = _one_line_error(result)
    assert f"port {port} on 127.0.0.1 is in use" in output and "--port 0" in output


def test_import_inspect_refuses_a_file_that_is_not_a_log_or_was_cut_short(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    output = ModelOutput.from_content(model="mockllm/model", content="hello")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=[output])
    (log,) = inspect_eval(
        Task(dataset=[Sample(input="hi")]), model=model, log_dir=str(tmp_path), display="none"
    )
    whole = Path(log.location).read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(whole[: len(whole) // 2])
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"version": 2, "status": "succ')
    for path in (cut, garbage):
        result = CliRunner().invoke(
            main, ["import-inspect", str(path), "--out", str(tmp_path / "r")]
        )
        assert f"{path} is not a readable Inspect log" in _one_line_error(result)
        assert not (tmp_path / "r").exists()


def test_an_unreachable_dask_scheduler_is_named_at_once(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    suite = smoke_suite(shared_root(tmp_path_factory))
    address = f"tcp://127.0.0.1:{_free_port()}"
    args = ["run", "--suite", str(suite), "--models", "reference/textbook", "--executor", "dask"]
    result = CliRunner().invoke(main, [*args, "--scheduler", address, "--out", str(tmp_path / "r")])
    output = _one_line_error(result)
    assert f"cannot reach the Dask scheduler at {address}" in output, output


def test_a_second_run_into_a_folder_stops_before_building_its_suite(tmp_path: Path) -> None:
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom causalverify.store.sqlite import writer_lock\n"
            f"with writer_lock({str(out)!r}):\n    print('held', flush=True)\n    sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        args = ["run", "--suite", "smoke", "--models", "reference/textbook", "--out", str(out)]
        result = CliRunner().invoke(main, args)
    finally:
        holder.communicate("", timeout=30)
    output = _one_line_error(result)
    assert f"another causalverify process (pid {holder.pid}) is writing" in output
    assert not (out / "suite-smoke").exists()

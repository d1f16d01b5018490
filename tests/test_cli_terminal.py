"""Text a model controls reaches the terminal as plain text: no Rich markup is interpreted, no
escape sequence (title, clipboard, hyperlink, colour), control character or bidirectional
override gets through, and nothing in it can make a command fail."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from causalverify.cli._common import clean, echo_json, friendly_errors, safe, safe_text
from causalverify.cli._tables import print_legend, print_table, short_names
from causalverify.errors import CausalVerifyError

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

#: what a hostile name carries: markup, OSC 52 (clipboard), OSC 8 (hyperlink), OSC 0 (title)
#: with both terminators, 8-bit CSI, DCS, a bidi override, C0 controls and a lone surrogate
HOSTILE = (
    "[/]",
    "[bold red]x",
    "\x1b]52;c;ZXZpbA==\x07clip",
    "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]0;pwned\x07title",
    "\x1b]2;pwned\x1b\\title2",
    "\x9b2J\x9d0;c1\x9c",
    "\x1bPq#0;2;0;0;0\x1b\\dcs",
    "\u202eevil\u202c",
    "bell\x07\x08\x0c\r",
    "sur\udc80rogate",
)
CLI = (sys.executable, "-c", "from causalverify.cli import main; main()")
#: the colour sequences Rich writes itself when colour is forced
RICH_SGR = re.compile(r"\x1b\[[0-9;]*m")
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _leaks(output: str) -> list[str]:
    """Control characters in ``output`` other than the colour codes Rich adds."""
    return FORBIDDEN.findall(RICH_SGR.sub("", output.replace("\r\n", "\n")))


FORGE = r"""
import json, os, stat
names = json.loads({names!r})
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
            for n in names:
                entry = {{"function": n, "terms": [{{"term": n, "estimate": 1.0}}], "nobs": 5}}
                os.write(fd, (json.dumps(entry) + "\n").encode())
    except OSError:
        pass
import sys
for n in names:
    print("out", n)
    print("err", n, file=sys.stderr)
print("The effect is 1.2345")
"""


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("path", ["--warm", "--no-warm"])
def test_exec_prints_forged_fit_names_and_output_literally(tmp_path: Path, path: str) -> None:
    script = tmp_path / "forge.py"
    script.write_text(FORGE.format(names=json.dumps(HOSTILE)), encoding="utf-8")
    csv = tmp_path / "d.csv"
    csv.write_text("x,y\n1,2\n", encoding="utf-8")
    env = {**os.environ, "FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "400"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [*CLI, "exec", str(script), "--data", str(csv), path, "--family", "iv"],
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )
    out = proc.stdout.decode("utf-8")
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "MarkupError" not in err
    assert "\x1b[" in err  # colour really was forced
    assert _leaks(out) == [] and _leaks(err) == []
    fitted = next(line for line in err.splitlines() if "fitted models" in line)
    assert "[/]" in fitted and "[bold red]x" in fitted  # shown, not interpreted
    assert "out [/]" in out and "err [bold red]x" in err and "The effect is 1.2345" in out
    assert "extracted estimate" in err  # the verdict rows print too


def _render(print_it: object) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor", width=200)
    print_it(console)  # type: ignore[operator]
    return buffer.getvalue()


def test_result_tables_print_hostile_model_names_literally() -> None:
    # the closing tables of run, score, analyze and diff all print through print_table
    names = short_names(list(HOSTILE))

    def print_it(console: Console) -> None:
        print_legend(console, names)
        print_table(
            console,
            title=f"Run {HOSTILE[2]}",
            header=("model", "cells", HOSTILE[4]),
            rows=[(name, "3", "50.0%") for name in HOSTILE],
            note=HOSTILE[3],
            names=names,
        )

    output = _render(print_it)
    assert _leaks(output) == []
    assert "[/]" in output and "[bold red]x" in output and "clip" in output


@pytest.fixture
def forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """A console created by a command believes it writes to a colour terminal."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.mark.usefixtures("forced_colour")
def test_compare_prints_hostile_cells_literally(capsys: pytest.CaptureFixture) -> None:
    from causalverify.cli.compare import _print

    rates = {
        "cells": 1,
        "ours_L2b_plus_rate": 0.5,
        "published_L2b_plus_rate": None,
        **{key: {"n": 0, "agree": 0, "rate": None} for key in ("L2a", "L2b", "value", "L2b_plus")},
    }
    figures = {"overall": rates, "by_family": {}, "by_model": {h: rates for h in HOSTILE}}
    summary = {
        "matched_cells": 1,
        "model_map": {HOSTILE[0]: HOSTILE[1]},
        "all": figures,
        "installed_only": figures,
        "disagreements": [
            {"scenario_id": h, "published_model": h, "reason": h, "detail": h} for h in HOSTILE
        ],
        "reasons": {HOSTILE[2]: 1, HOSTILE[1]: 2},
        "published_models_not_compared": list(HOSTILE),
        "unmatched_ours": [(h, h) for h in HOSTILE],
        "unmatched_published": [],
    }
    _print(summary)
    output = capsys.readouterr().out
    assert "\x1b[" in output  # colour really was forced
    assert _leaks(output) == []
    assert "[/]" in output and "[bold red]x" in output


def test_an_error_quoting_model_text_is_one_clean_line() -> None:
    @click.command()
    @friendly_errors
    def failing() -> None:
        raise CausalVerifyError("script said " + "".join(HOSTILE))

    from click.testing import CliRunner

    result = CliRunner().invoke(failing, [], color=True)
    assert result.exit_code == 1
    assert _leaks(result.output) == []
    assert "[/]" in result.output and "clip" in result.output


def test_json_output_escapes_what_a_terminal_would_obey(capsys: pytest.CaptureFixture) -> None:
    value = {"model": "a\x9b2J\u202eb\x1b]0;t\x07", "names": list(HOSTILE)}
    echo_json(value)
    text = capsys.readouterr().out
    assert _leaks(text) == []
    assert json.loads(text)["model"] == value["model"]  # the same value, escaped


@given(st.text(alphabet=st.characters(codec=None), max_size=200))
def test_safe_markup_renders_as_the_cleaned_text(text: str) -> None:
    cleaned = clean(text)
    assert FORBIDDEN.findall(cleaned) == []
    assert all(not "\ud800" <= ch <= "\udfff" for ch in cleaned)
    # safe() is written into markup next to our own tags
    assert Text.from_markup(f"[bold]{safe(text)}[/bold][dim]x[/]").plain == cleaned + "x"
    assert safe_text(text).plain == cleaned


def test_clean_keeps_ordinary_text_and_layout() -> None:
    text = "ATE = 1.25 (SE 0.3)\n\tterm [T.1]   café  日本  [x] a[1]\n"
    assert clean(text) == text
    assert clean("line\r\nnext") == "line\nnext"
    assert clean("\x1b[1;31mred\x1b[0m \x1b]8;;http://e/\x1b\\link\x1b]8;;\x1b\\") == "red link"


@pytest.mark.usefixtures("forced_colour")
def test_run_and_score_closing_output_prints_hostile_model_names_literally(
    capsys: pytest.CaptureFixture,
) -> None:
    from causalverify.cli.run import _print_summary
    from causalverify.cli.score import _print_rows

    models = [
        SimpleNamespace(
            model=name,
            cells=2,
            L1=1.0,
            L2a=0.5,
            L2b=0.5,
            L2b_plus=0.5,
            counts={"ok": 1},
            unanswered=1,
        )
        for name in HOSTILE
    ]
    summary = SimpleNamespace(
        run_dir=Path("runs/x"),
        models=models,
        total=2,
        computed=2,
        skipped=0,
        requests=2,
        failed_requests=0,
        cost_usd=0.0,
        wall_seconds=1.0,
    )
    _print_summary(summary, Console())
    rows: list[dict[str, object]] = [
        {
            "model": name,
            "cells": 2,
            "L1": 1.0,
            "L2a": 0.5,
            "L2b": 0.5,
            "L2b+": 0.5,
            "unscoreable": 0,
            "unanswered": 1,
        }
        for name in HOSTILE
    ]
    _print_rows(rows, f"2 cells rescored {HOSTILE[4]}")
    output = capsys.readouterr().out
    assert "\x1b[" in output  # colour really was forced
    assert _leaks(output) == []
    assert output.count("incomplete:") == 2  # both banners, which name every model
    assert "[/]" in output and "[bold red]x" in output

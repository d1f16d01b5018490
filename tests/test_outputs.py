"""Output provenance: every stdout line a hook saw gets the code that printed it, in the real
sandbox (R, Python cold and warm); forged, malformed or oversized records are dropped with a note
and never break a run; stored results without origins still load."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.records import ExecResult, OutputOrigin
from causalverify.sandbox import Limits, Sandbox, get_sandbox, line_origins
from causalverify.sandbox.fitlog import parse_fit_log
from causalverify.sandbox.outputs import MAX_OUTPUTS, parse_outputs

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")
LIMITS = Limits(wall_seconds=120, cpu_seconds=120)
CSV = "y,x\n" + "\n".join(f"{(i * 37 % 11) / 3:.4f},{(i * 13 % 7) / 2:.4f}" for i in range(60))


def _record(text: str, **fields: object) -> bytes:
    raw = {
        "kind": "output",
        "function": "print",
        "line": 1,
        "code": "print(x)",
        "call": "",
        "top_line": 1,
        "chars": len(text),
        "head": text[:64],
        "tail": text[-32:],
        "object": "",
    }
    raw.update(fields)
    return json.dumps(raw, separators=(",", ":")).encode() + b"\n"


def _result(stdout: str, outputs: list[OutputOrigin]) -> ExecResult:
    return ExecResult(
        status="ok",
        exit_code=0,
        stdout=stdout,
        stderr="",
        wall_seconds=0.0,
        cpu_seconds=0.0,
        outputs=outputs,
    )


# -- reading and placing records ------------------------------------------------------------------


def test_records_are_placed_in_order_and_lines_get_their_origin() -> None:
    stdout = "Estimate: 0.5\nunhooked autoprint\n[1] 0.5\nrow 1\nrow 2\n"
    data = (
        _record("Estimate: 0.5\n", function="cat", line=3, code='cat("Estimate:", b, "\\n")')
        + _record("[1] 0.5\n", line=5, code="print(b)")
        + _record("row 1\nrow 2\n", function="cat", line=7, code='cat("row", i, "\\n")')
    )
    outputs, note = parse_outputs(data, stdout)
    assert note == ""
    assert [(o.start, o.end, o.first_line, o.last_line) for o in outputs] == [
        (0, 14, 1, 1),
        (33, 41, 3, 3),
        (41, 53, 4, 5),
    ]
    origins = line_origins(_result(stdout, outputs))
    assert sorted(origins) == [1, 3, 4, 5]  # line 2 was written by nothing a hook saw
    assert origins[1].line == 3 and origins[1].function == "cat"
    assert origins[3].code == "print(b)"
    assert origins[4] is origins[5]


def test_a_line_written_in_pieces_goes_to_the_piece_with_most_of_its_text() -> None:
    stdout = "ATT: [1] 0.123456\n"
    data = _record("ATT: ", function="cat", line=2) + _record("[1] 0.123456\n", line=3)
    outputs, _ = parse_outputs(data, stdout)
    assert line_origins(_result(stdout, outputs))[1].line == 3


def test_line_numbers_follow_splitlines() -> None:
    stdout = "a\r\nb\rc\n"  # three lines for str.splitlines, as the extractor counts them
    outputs, _ = parse_outputs(_record("c\n", line=9), stdout)
    assert outputs[0].first_line == 3 == len(stdout.splitlines())


def test_records_that_fit_nowhere_are_skipped_and_counted() -> None:
    stdout = "one\ntwo\n"
    data = _record("zzz\n") + _record("two\n", line=2) + _record("one\n", line=1)
    outputs, note = parse_outputs(data, stdout)
    # "one" comes after "two" in the records but before it in stdout: only "two" is placed
    assert [o.line for o in outputs] == [2]
    assert note == "2 output record(s) not found in stdout"


def test_fit_log_entries_are_untouched_by_output_records() -> None:
    fit = b'{"function":"stats::lm","terms":[{"term":"x","estimate":0.5,"std_error":0.1}]}\n'
    data = fit + _record("x\n") + b'{"kind":"output",broken\n' + fit
    fits, fits_note = parse_fit_log(data)
    assert len(fits) == 2 and fits_note == ""
    assert parse_fit_log(fit + fit) == (fits, "")
    outputs, note = parse_outputs(data, "x\n")
    assert len(outputs) == 1 and note == "1 malformed output record(s) dropped"


@pytest.mark.parametrize(
    "line",
    [
        b'{"kind":"output"',
        b'{"kind":"output","chars":"7","head":"a","tail":"a"}',
        b'{"kind":"output","chars":0,"head":"","tail":""}',
        b'{"kind":"output","chars":1,"head":"ab","tail":"a"}',
        b'{"kind":"output","chars":1,"head":"a","tail":"a","line":-3}',
        b'{"kind":"output","chars":1,"head":"a","tail":"a","line":true}',
        b'{"kind":"output","chars":1,"head":"a","tail":"a","code":["x"]}',
        b'{"kind":"output","chars":1,"head":"a","tail":"a","function":"' + b"f" * 500 + b'"}',
        b'{"kind":"output","chars":1,"head":"a","tail":"a","pad":"' + b"x" * 9000 + b'"}',
        b'{"kind":"output","chars":1e400,"head":"a","tail":"a"}',
        b'{"kind":"output"' + b"[" * 100_000,
        b'{"kind":"output","chars":1,"head":"\xff","tail":"a"}',
    ],
)
def test_malformed_records_are_dropped_with_a_note(line: bytes) -> None:
    outputs, note = parse_outputs(line + b"\n" + _record("a\n"), "a\n")
    assert len(outputs) == 1
    assert note == "1 malformed output record(s) dropped"


def test_lone_surrogates_in_records_are_made_storable() -> None:
    data = b'{"kind":"output","chars":2,"head":"a\\n","tail":"a\\n","code":"x\\ud800"}\n'
    outputs, _ = parse_outputs(data, "a\n")
    assert outputs[0].code == "x\ufffd"
    json.loads(_result("a\n", outputs).model_dump_json())


def test_too_many_records_are_capped() -> None:
    stdout = "x\n" * (MAX_OUTPUTS + 10)
    outputs, note = parse_outputs(_record("x\n") * (MAX_OUTPUTS + 10), stdout)
    assert len(outputs) == MAX_OUTPUTS
    assert note == f"10 output records past the first {MAX_OUTPUTS} dropped"


def test_a_cut_last_record_is_dropped() -> None:
    data = _record("a\n") + _record("b\n")[:20]
    outputs, note = parse_outputs(data, "a\nb\n", truncated=True)
    assert len(outputs) == 1 and note == ""


def test_hostile_records_never_raise_and_stay_inside_stdout() -> None:
    rng = random.Random(5)
    stdout = "".join(f"line {i} {'x' * rng.randrange(40)}\n" for i in range(3000))
    forged = [_record(stdout[:50], chars=10**9)]  # longer than stdout
    forged += [_record("q" * 64, chars=64) for _ in range(2000)]  # found nowhere: bounded search
    forged += [bytes(rng.randrange(256) for _ in range(rng.randrange(200))) for _ in range(200)]
    forged += [
        b'{"kind":"output"' + bytes(rng.randrange(256) for _ in range(100)) for _ in range(200)
    ]
    data = b"\n".join(forged)
    outputs, note = parse_outputs(data, stdout)
    assert outputs == []
    assert "malformed" in note and "not found in stdout" in note
    result = _result(stdout, outputs)
    assert line_origins(result) == {}
    forged_ok = _record("line 5", chars=len("line 5 x\n"), tail="\n")
    outputs, _ = parse_outputs(forged_ok, stdout)
    assert all(0 <= o.start < o.end <= len(stdout) for o in outputs)


def test_stored_results_without_origins_still_load() -> None:
    old = json.loads(_result("x\n", []).model_dump_json())
    del old["outputs"], old["outputs_note"]
    loaded = ExecResult.model_validate(old)
    assert loaded.outputs == [] and loaded.outputs_note == ""
    assert line_origins(loaded) == {}
    with pytest.raises(ValueError, match="extra"):
        OutputOrigin.model_validate(
            {"start": 0, "end": 1, "first_line": 1, "last_line": 1, "bogus": 1}
        )


# -- in the real sandbox ------------------------------------------------------------------------

PY_MIXED = """\
import sys
import pandas as pd
import statsmodels.formula.api as smf


def report(label, value):
    print(f"{label}: {value:.3f}")  # <- report


d = pd.read_csv("data/d.csv")
fit = smf.ols("y ~ x", data=d).fit()
b = fit.params["x"]
print("DiD estimate:", round(b, 4))  # <- main
for i in range(3):
    print("bandwidth", i)  # <- loop
sys.stdout.write("written directly\\n")  # <- write
report("placebo", 0.01)  # <- report-call
print(fit.params.round(4))  # <- params
print("label", end=": ")  # <- piece
print(round(b, 2))  # <- number
sys.stdout.buffer.write(b"raw bytes\\n")
for i in range(5000):
    print("progress", i, flush=True)  # <- flushed
"""

R_MIXED = """\
d <- read.csv("data/d.csv")
fit <- lm(y ~ x, data = d)
report <- function(label, value) {
  cat(label, ":", format(value, digits = 3), "\\n")  # <- report
}
b <- coef(fit)[["x"]]
cat("DiD estimate:", round(b, 4), "\\n")  # <- main
for (bw in c(1, 2, 3)) {
  cat("bandwidth", bw, "\\n")  # <- loop
}
print(summary(fit)$coefficients)  # <- matrix
writeLines(sprintf("ATT = %.3f", b))  # <- writelines
report("placebo", 0.01)  # <- report-call
summary(fit)  # <- autoprint
printCoefmat(coef(summary(fit)))  # <- coefmat
coef(fit)
cat("to a file\\n", file = "f.txt")
message("to stderr")
cat(sprintf("%s = %.2f\\n", c("a", "b"), c(1, 2)), sep = "")  # <- vector
"""


def _tags(code: str) -> dict[str, int]:
    return {
        m.group(1): code[: m.start()].count("\n") + 1 for m in re.finditer(r"# <- ([\w-]+)", code)
    }


def _expect(result: ExecResult, code: str, want: dict[str, str]) -> None:
    """Each stdout line starting with a prefix in ``want`` has the tagged line as its origin."""
    assert result.ok, result.stderr[-2000:]
    assert result.outputs_note == ""
    tags = _tags(code)
    origins = line_origins(result)
    seen = set()
    for no, text in enumerate(result.stdout.splitlines(), start=1):
        for prefix, tag in want.items():
            if text.startswith(prefix):
                origin = origins.get(no)
                assert origin is not None, (no, text)
                assert origin.line == tags[tag], (no, text, origin)
                seen.add(prefix)
    assert seen == set(want), set(want) - seen


@needs_bwrap
@pytest.mark.sandbox
def test_python_lines_get_their_code_line(sandbox: Sandbox) -> None:
    result = sandbox.run(PY_MIXED, "python", {"data/d.csv": CSV.encode()}, LIMITS)
    _expect(
        result,
        PY_MIXED,
        {
            "DiD estimate:": "main",
            "bandwidth": "loop",
            "written directly": "write",
            "placebo:": "report",
            "Intercept": "params",
            "label: ": "piece",
            "progress": "flushed",
        },
    )
    origins = line_origins(result)
    by_text = {result.stdout.splitlines()[n - 1]: o for n, o in origins.items()}
    tags = _tags(PY_MIXED)
    main = by_text[next(t for t in by_text if t.startswith("DiD"))]
    assert (main.function, main.code) == ("print", 'print("DiD estimate:", round(b, 4))')
    placebo = by_text["placebo: 0.010"]
    assert placebo.top_line == tags["report-call"]  # the statement that called the function
    assert by_text["written directly"].function == "sys.stdout.write"
    assert "raw bytes" not in by_text  # sys.stdout.buffer bypasses the hook: no origin


@pytest.mark.r_only
@needs_bwrap
@needs_r
@pytest.mark.sandbox
def test_r_lines_get_their_code_line(sandbox: Sandbox) -> None:
    result = sandbox.run(R_MIXED, "r", {"data/d.csv": CSV.encode()}, LIMITS)
    _expect(
        result,
        R_MIXED,
        {
            "DiD estimate:": "main",
            "bandwidth": "loop",
            "ATT =": "writelines",
            "placebo :": "report",
            "Residual standard error": "autoprint",
            "a = 1.00": "vector",
            "b = 2.00": "vector",
        },
    )
    origins = line_origins(result)
    lines = result.stdout.splitlines()
    by_text = {lines[n - 1]: o for n, o in origins.items()}
    tags = _tags(R_MIXED)
    main = by_text[next(t for t in by_text if t.startswith("DiD"))]
    assert main.function == "cat" and main.code.startswith('cat("DiD estimate:"')
    assert (
        by_text[next(t for t in by_text if t.startswith("placebo"))].top_line == tags["report-call"]
    )
    # summary(fit) auto-printed at top level: print of a summary.lm, at its line
    table = [o for o in origins.values() if o.object == "summary.lm"]
    assert table and all(o.line == tags["autoprint"] for o in table)
    matrix = [o for o in origins.values() if o.line == tags["matrix"]]
    assert matrix and matrix[0].object == "matrix"
    # printCoefmat prints through print.default: the line of the script's call
    coefmat = [o for o in origins.values() if o.line == tags["coefmat"]]
    assert coefmat and coefmat[0].function == "print.default"
    # coef(fit) auto-printed as a plain vector goes through no hook: no origin
    assert all(o.line != tags["coefmat"] + 1 for o in origins.values())


PY_HOSTILE = """\
import json, os
print("visible")
forged = json.dumps({"kind": "output", "function": "print", "line": 999, "code": "forged",
                     "call": "", "top_line": 1, "chars": 8, "head": "visible\\n",
                     "tail": "visible\\n", "object": ""})
for name in os.listdir("/proc/self/fd"):
    if int(name) <= 2:
        continue
    try:
        os.write(int(name), (forged + "\\n").encode() * 3)
        os.write(int(name), b'{"kind":"output"' + b"x" * 100000 + b"\\n")
        os.write(int(name), b'{"kind":"output","chars":99999999999,"head":"v","tail":"v"}\\n' * 5000)
        os.write(int(name), b"\\xff\\xfe garbage\\n" * 1000)
    except OSError:
        pass
for i in range(40000):
    print("line", i, "x" * 40)
"""

R_HOSTILE = """\
cat("visible\\n")
for (f in list.files("/proc/self/fd")) {
  if (as.integer(f) <= 2L) next
  tryCatch({
    con <- file(file.path("/proc/self/fd", f), "a")
    writeLines(c('{"kind":"output","chars":8,"head":"visible\\\\n","tail":"visible\\\\n","line":7}',
                 strrep("{", 50000), '{"kind":"output","chars":"x"}'), con)
    close(con)
  }, error = function(e) NULL)
}
for (i in 1:6000) {
  cat("a", i, "\\n")
  cat("b", i, "\\n")
}
"""


@needs_bwrap
@pytest.mark.sandbox
@pytest.mark.parametrize("language", ["python", "r"])
def test_forged_records_and_floods_cannot_break_the_harness(
    sandbox: Sandbox, language: str
) -> None:
    if language == "r" and shutil.which("Rscript") is None:
        pytest.skip("Rscript not installed")
    code = PY_HOSTILE if language == "python" else R_HOSTILE
    result = sandbox.run(code, language, {}, LIMITS)  # type: ignore[arg-type]
    assert result.status in ("ok", "output_limit"), result.stderr[-2000:]
    assert "malformed output record" in result.outputs_note
    stdout = result.stdout
    for origin in result.outputs:
        assert 0 <= origin.start < origin.end <= len(stdout)
        assert origin.first_line <= origin.last_line
    origins = line_origins(result)
    assert set(origins) <= set(range(1, len(stdout.splitlines()) + 1))
    assert len(result.outputs) <= MAX_OUTPUTS
    json.loads(result.model_dump_json())
    if language == "r":
        # the hook keeps at most 4000 records: the first lines of the flood have their origin
        assert origins[2].code == 'cat("a", i, "\\n")'
        assert origins[3].code == 'cat("b", i, "\\n")'


@needs_bwrap
@needs_r
@pytest.mark.sandbox
def test_exec_json_shows_the_output_origins(tmp_path: Path) -> None:
    script = tmp_path / "a.R"
    script.write_text('x <- 0.25\ncat("Estimate:", x, "\\n")\nx\n')
    data = tmp_path / "d.csv"
    data.write_text(CSV)
    ran = CliRunner().invoke(main, ["exec", str(script), "--data", str(data), "--json"])
    assert ran.exit_code == 0, ran.output
    payload = json.loads(ran.output)
    assert payload["outputs_note"] == ""
    [origin] = payload["outputs"]  # the auto-printed vector has none
    assert origin["line"] == 2 and origin["function"] == "cat"
    assert origin["code"] == 'cat("Estimate:", x, "\\n")'
    assert (origin["first_line"], origin["last_line"]) == (1, 1)


@needs_bwrap
@pytest.mark.sandbox
def test_warm_and_cold_cells_record_the_same_origins() -> None:
    warm, cold = get_sandbox(warm=True), get_sandbox(warm=False)
    a = warm.run(PY_MIXED, "python", {"data/d.csv": CSV.encode()}, LIMITS)
    b = cold.run(PY_MIXED, "python", {"data/d.csv": CSV.encode()}, LIMITS)
    assert a.ok and b.ok
    assert a.outputs == b.outputs and len(a.outputs) > 5

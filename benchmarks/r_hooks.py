"""What the R fit-log hooks cost on byte-compiled package functions, hooked against unhooked.

A hook that rewrote a function's body threw its byte-code away, and R's JIT then recompiled the
hooked copy (seconds for fixest's feols or rdrobust). The hook now wraps the function and keeps
the original's byte-code. This measures it on a stand-in (``fixest::feols`` and
``rdrobust::rdrobust`` of the test stand-ins: byte-compiled, with a heavy body) installed in a
temporary managed library, and on the real fixest and rdrobust when they are installed (in the
managed library: ``causalverify r-packages install fixest rdrobust``). Each script is run in the
real sandbox with the fit log on and off, alternating the order round by round, and the time of
the calls themselves is measured inside R. Also measured: a grid search that fits
``lm`` and ``coeftest`` 100 times per call (what each logged fit costs, when lmtest is
installed), and the whole run of a script that prints one number (what the hooks cost at
startup, wall time of the run). Prints the hooked/unhooked ratios. Usage::

    python benchmarks/r_hooks.py [--rounds 5] [--calls 3] [--hook-file OLD_fitlog.R]
        [--baseline-hook-file OLD_fitlog.R]

``--hook-file`` measures another version of ``fitlog.R`` in place of the current one (e.g. the
body-rewriting hook, ``git show <commit>:src/causalverify/sandbox/fitlog.R``).
``--baseline-hook-file`` measures both, that version and the current one (or ``--hook-file``),
round by round, and prints their ratios side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from causalverify.sandbox import Limits, fitlog
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.rlibrary import LIBRARY_ENV

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from r_standins import install_standins

DATA = """
set.seed(1)
n <- 2000
d <- data.frame(z = rnorm(n), w = rnorm(n), run = runif(n, -1, 1))
d$x <- 0.8 * d$z + rnorm(n); d$y <- 1.5 * d$x + 0.5 * d$w + rnorm(n)
d$treat <- as.numeric(d$run >= 0); d$yr <- d$run + d$treat + 0.3 * rnorm(n)
"""

CASES = {
    "stand-in feols": "library(fixest)\ncall <- function() feols(y ~ x + w, data = d)",
    "stand-in rdrobust": "library(rdrobust)\ncall <- function() rdrobust(d$yr, d$run, c = 0)",
    "real fixest IV": (
        "library(fixest)\ncall <- function() feols(y ~ w | 0 | x ~ z, data = d, notes = FALSE)"
    ),
    "real rdrobust": "library(rdrobust)\ncall <- function() rdrobust(d$yr, d$run, c = 0)",
    "lm grid x100": (
        "suppressPackageStartupMessages(library(lmtest))\n"
        "call <- function() for (b in seq(-1, 3, length.out = 100)) {\n"
        "  d$yb <- d$y - b * d$x\n  coeftest(lm(yb ~ w, data = d))\n}"
    ),
}
STARTUP = "startup (cat(1))"


def _script(case: str, calls: int) -> str:
    return (
        DATA
        + CASES[case]
        + f"\nt <- system.time(for (i in seq_len({calls})) invisible(call()))[['elapsed']]\n"
        + 'cat("CALLS", sprintf("%.6f", t), "\\n")\n'
    )


def _installed(box: BwrapSandbox, name: str) -> bool:
    code = f'cat(nzchar(system.file(package = "{name}")), '
    code += f'!identical(suppressWarnings(packageDescription("{name}"))$Title, "Test Stand-In"))'
    result = box.run(code, "r", {}, Limits())
    return result.ok and result.stdout.split() == ["TRUE", "TRUE"]


def _with_hook(files: dict[str, bytes], fitlog_r: bytes | None) -> dict[str, bytes]:
    """``files`` with ``fitlog_r`` as the fit log's R side (None: unchanged)."""
    files = dict(files)
    if fitlog_r is not None:
        output_hook = files["fitlog.R"].split(b"\n# The fit log's R side", 1)[0]
        files["fitlog.R"] = output_hook + b"\n" + fitlog_r
    return files


def _hooked_box(files: dict[str, bytes]) -> BwrapSandbox:
    """A sandbox that loads these hook files (its spec reads them when it is made)."""
    fitlog.hook_files = lambda: files  # type: ignore[assignment]
    return BwrapSandbox(warm=False)


def _measure(
    case: str, rounds: int, calls: int, hooks: dict[str, dict[str, bytes]]
) -> dict[str, tuple[float, float]]:
    """Median seconds (hooked, unhooked) per hook version in ``hooks``; the arms alternate."""
    boxes = {"off": BwrapSandbox(warm=False, fit_log=False)}
    boxes.update((arm, _hooked_box(files)) for arm, files in hooks.items())
    limits = Limits(wall_seconds=300, cpu_seconds=300)
    arms = list(boxes)
    took: dict[str, list[float]] = {arm: [] for arm in arms}
    code = "cat(1)\n" if case == STARTUP else _script(case, calls)
    for r in range(rounds):
        for arm in arms if r % 2 == 0 else arms[::-1]:
            box = boxes[arm]
            start = time.perf_counter()
            result = box.run(code, "r", {}, limits)
            seconds = time.perf_counter() - start
            if not result.ok:
                raise SystemExit(f"{case} ({arm}) failed: {result.stderr[-500:]}")
            if case != STARTUP:
                line = next(ln for ln in result.stdout.splitlines() if ln.startswith("CALLS"))
                seconds = float(line.split()[1])
            took[arm].append(seconds)
    off = statistics.median(took["off"])
    return {arm: (statistics.median(took[arm]), off) for arm in hooks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--hook-file", type=Path, default=None)
    parser.add_argument("--baseline-hook-file", type=Path, default=None)
    args = parser.parse_args()
    shipped = dict(fitlog.hook_files())
    hooks: dict[str, dict[str, bytes]] = {}
    if args.baseline_hook_file is not None:
        hooks["baseline"] = _with_hook(shipped, args.baseline_hook_file.read_bytes())
    measured = None if args.hook_file is None else args.hook_file.read_bytes()
    hooks["measured"] = _with_hook(shipped, measured)
    rows: list[tuple[str, dict[str, tuple[float, float]]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        library = Path(tmp) / "library"
        install_standins(library, ["fixest", "rdrobust"])
        saved = os.environ.get(LIBRARY_ENV)
        os.environ[LIBRARY_ENV] = str(library)
        discover.cache_clear()
        for case in ("stand-in feols", "stand-in rdrobust"):
            rows.append((case, _measure(case, args.rounds, args.calls, hooks)))
        if saved is None:
            os.environ.pop(LIBRARY_ENV, None)
        else:
            os.environ[LIBRARY_ENV] = saved
        discover.cache_clear()
    probe = BwrapSandbox(warm=False, fit_log=False)
    for case, package in (
        ("real fixest IV", "fixest"),
        ("real rdrobust", "rdrobust"),
        ("lm grid x100", "lmtest"),
    ):
        if _installed(probe, package):
            rows.append((case, _measure(case, args.rounds, args.calls, hooks)))
        else:
            print(f"{case}: skipped ({package} is not installed)")
    rows.append((STARTUP, _measure(STARTUP, args.rounds, args.calls, hooks)))
    print(f"{args.calls} calls per run, median of {args.rounds} runs per arm (time inside R;")
    print(f"{STARTUP}: wall time of the whole run)")
    head = f"{'case':<20} {'hooked (s)':>11} {'unhooked (s)':>13} {'ratio':>7}"
    if "baseline" in hooks:
        head += f" {'baseline (s)':>13} {'ratio':>7}"
    print(head)
    for case, by_hook in rows:
        on, off = by_hook["measured"]
        line = f"{case:<20} {on:11.4f} {off:13.4f} {on / off:7.3f}"
        if "baseline" in by_hook:
            base = by_hook["baseline"][0]
            line += f" {base:13.4f} {base / off:7.3f}"
        print(line)


if __name__ == "__main__":
    main()

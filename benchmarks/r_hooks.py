"""What the R fit-log hooks cost on byte-compiled package functions, hooked against unhooked.

A hook that rewrote a function's body threw its byte-code away, and R's JIT then recompiled the
hooked copy (seconds for fixest's feols or rdrobust). The hook now wraps the function and keeps
the original's byte-code. This measures it on a stand-in (``fixest::feols`` and
``rdrobust::rdrobust`` of the test stand-ins: byte-compiled, with a heavy body) installed in a
temporary managed library, and on the real fixest and rdrobust when they are installed (in the
managed library: ``causalverify r-packages install fixest rdrobust``). Each script is run in the
real sandbox with the fit log on and off, alternating the order round by round, and the time of
the calls themselves is measured inside R. Prints the hooked/unhooked ratios. Usage::

    python benchmarks/r_hooks.py [--rounds 5] [--calls 3] [--hook-file OLD_fitlog.R]

``--hook-file`` measures another version of ``fitlog.R`` in place of the current one (e.g. the
body-rewriting hook, ``git show <commit>:src/causalverify/sandbox/fitlog.R``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
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
}


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


def _measure(case: str, rounds: int, calls: int) -> tuple[float, float]:
    hooked, plain = BwrapSandbox(warm=False), BwrapSandbox(warm=False, fit_log=False)
    limits = Limits(wall_seconds=300, cpu_seconds=300)
    inside: dict[str, list[float]] = {"on": [], "off": []}
    for r in range(rounds):
        order = [("on", hooked), ("off", plain)]
        if r % 2:
            order.reverse()
        for arm, box in order:
            result = box.run(_script(case, calls), "r", {}, limits)
            if not result.ok:
                raise SystemExit(f"{case} ({arm}) failed: {result.stderr[-500:]}")
            line = next(ln for ln in result.stdout.splitlines() if ln.startswith("CALLS"))
            inside[arm].append(float(line.split()[1]))
    on, off = statistics.median(inside["on"]), statistics.median(inside["off"])
    return on, off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--hook-file", type=Path, default=None)
    args = parser.parse_args()
    if args.hook_file is not None:
        files = dict(fitlog.hook_files())
        output_hook = files["fitlog.R"].split(b"\n# The fit log's R side", 1)[0]
        files["fitlog.R"] = output_hook + b"\n" + args.hook_file.read_bytes()
        fitlog.hook_files = lambda: files  # type: ignore[assignment]
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        library = Path(tmp) / "library"
        install_standins(library, ["fixest", "rdrobust"])
        saved = os.environ.get(LIBRARY_ENV)
        os.environ[LIBRARY_ENV] = str(library)
        discover.cache_clear()
        for case in ("stand-in feols", "stand-in rdrobust"):
            rows.append((case, *_measure(case, args.rounds, args.calls)))
        if saved is None:
            os.environ.pop(LIBRARY_ENV, None)
        else:
            os.environ[LIBRARY_ENV] = saved
        discover.cache_clear()
    probe = BwrapSandbox(warm=False, fit_log=False)
    for case, package in (("real fixest IV", "fixest"), ("real rdrobust", "rdrobust")):
        if _installed(probe, package):
            rows.append((case, *_measure(case, args.rounds, args.calls)))
        else:
            print(f"{case}: skipped ({package} is not installed)")
    print(f"{args.calls} calls per run, median of {args.rounds} runs per arm (time inside R)")
    print(f"{'case':<20} {'hooked (s)':>11} {'unhooked (s)':>13} {'ratio':>7}")
    for case, on, off in rows:
        print(f"{case:<20} {on:11.4f} {off:13.4f} {on / off:7.3f}")


if __name__ == "__main__":
    main()

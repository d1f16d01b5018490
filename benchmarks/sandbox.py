"""Sandbox overhead and parallel throughput.

1. Paired medians over ``--repeats`` runs of a trivial R script (``Rscript --vanilla`` on ``1``)
   and a trivial Python script, bare (plain subprocess in a temporary folder) vs sandboxed,
   printed as ratios. Bare and sandboxed runs alternate so that machine load hits both alike.
2. Wall time for ``--executions`` runs of a realistic workflow (an R ``lm`` with robust standard
   errors on a 1600-row CSV) with 1 and 2 worker threads each calling ``sandbox.run``, printed as
   a speed-up.

Usage: ``python benchmarks/sandbox.py [--repeats 30] [--executions 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from causalverify.families import Language
from causalverify.sandbox import Limits, Sandbox, get_sandbox
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.bwrap import script_command

TRIVIAL: dict[Language, str] = {"r": "1\n", "python": "1\n"}

WORKFLOW_R = """\
suppressPackageStartupMessages({library(sandwich); library(lmtest)})
d <- read.csv("data/s001.csv")
fit <- lm(y ~ treated * post + x, data = d)
print(coeftest(fit, vcov = vcovHC(fit, type = "HC1"))["treated:post", ])
"""


def _csv(rows: int = 1600, seed: int = 20260101) -> bytes:
    rng = np.random.default_rng(seed)
    treated = rng.integers(0, 2, rows)
    post = rng.integers(0, 2, rows)
    x = rng.normal(size=rows)
    y = 1.0 + 0.5 * treated + 0.3 * post + 2.0 * treated * post + 0.7 * x + rng.normal(size=rows)
    lines = ["y,treated,post,x"] + [
        f"{float(a)!r},{int(b)},{int(c)},{float(d)!r}"
        for a, b, c, d in zip(y, treated, post, x, strict=True)
    ]
    return ("\n".join(lines) + "\n").encode()


def _bare_runner(language: Language) -> Callable[[], float]:
    folder = Path(tempfile.mkdtemp(prefix="causalverify-bench-"))
    script = folder / ("main.R" if language == "r" else "main.py")
    script.write_text(TRIVIAL[language])
    argv = script_command(discover(), language, str(script))

    def once() -> float:
        start = time.perf_counter()
        subprocess.run(argv, cwd=folder, capture_output=True, check=True)
        return time.perf_counter() - start

    return once


def _sandboxed_runner(sandbox: Sandbox, language: Language) -> Callable[[], float]:
    def once() -> float:
        start = time.perf_counter()
        result = sandbox.run(TRIVIAL[language], language, {})
        if not result.ok:
            raise RuntimeError(result)
        return time.perf_counter() - start

    return once


def overhead(sandbox: Sandbox, language: Language, repeats: int) -> None:
    """Print paired medians of bare vs sandboxed trivial runs."""
    bare, boxed = _bare_runner(language), _sandboxed_runner(sandbox, language)
    bare(), boxed()  # warm caches
    pairs = [(bare(), boxed()) for _ in range(repeats)]
    b = statistics.median(p[0] for p in pairs)
    s = statistics.median(p[1] for p in pairs)
    paired = statistics.median(p[1] / p[0] for p in pairs)
    print(
        f"{language:>6} trivial: bare {b * 1000:7.1f} ms | sandboxed {s * 1000:7.1f} ms | "
        f"ratio of medians {s / b:.3f} | median paired ratio {paired:.3f} "
        f"(overhead {100 * (s / b - 1):+.1f}%)"
    )


def throughput(sandbox: Sandbox, executions: int, workers: int) -> float:
    """Wall seconds for ``executions`` runs of the R workflow on ``workers`` threads."""
    files = {"data/s001.csv": _csv()}
    limits = Limits(wall_seconds=120)

    def one(_: int) -> None:
        result = sandbox.run(WORKFLOW_R, "r", files, limits)
        if not result.ok:
            raise RuntimeError(result)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, range(executions)))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--executions", type=int, default=200)
    args = parser.parse_args()
    sandbox = get_sandbox()
    for language in ("r", "python"):
        overhead(sandbox, language, args.repeats)
    one = throughput(sandbox, args.executions, 1)
    two = throughput(sandbox, args.executions, 2)
    print(
        f"R lm workflow x{args.executions}: 1 worker {one:.1f} s | 2 workers {two:.1f} s | "
        f"speed-up {one / two:.2f}x"
    )


if __name__ == "__main__":
    main()

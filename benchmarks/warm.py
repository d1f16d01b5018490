"""Warm interpreters against cold starts, measured side by side in one run.

1. **Per cell**: a pandas + statsmodels workflow (read a 1,600-row CSV, a formula regression with
   robust errors, print the coefficient) run ``--repeats`` times in a cold sandbox
   (``warm=False``: a fresh interpreter imports everything) and a warm one (forked from the
   preloaded interpreter), alternating so that machine load hits both alike. Prints the median
   of each and the ratio (goal: at least 8x). The warm interpreter's one-off start is timed
   separately.
2. **The reference panel**: ``causalverify run`` of the seven reference agents in R and Python
   over ``--scenarios`` scenarios of the default suite, once cold and once warm (each in a new
   run folder, the same response cache), timed end to end. Prints both and the ratio (goal: at
   least 2.5x) and checks the two runs stored the same cells.

Usage::

    python benchmarks/warm.py [--repeats 20] [--scenarios 24] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from causalverify.models import ModelAccess
from causalverify.runner import RunConfig, run_benchmark
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.scenarios import build_suite
from causalverify.store import RunStore

WORKFLOW = """\
import pandas as pd
import statsmodels.formula.api as smf
d = pd.read_csv("data/s001.csv")
fit = smf.ols("y ~ treated * post + x", data=d).fit(cov_type="HC1")
print("ESTIMATE:", round(fit.params["treated:post"], 6))
"""


def _csv(rows: int = 1600) -> bytes:
    rng = np.random.default_rng(7)
    treated = rng.integers(0, 2, rows)
    post = rng.integers(0, 2, rows)
    x = rng.normal(size=rows)
    y = 1 + 0.5 * treated * post + 0.3 * x + rng.normal(size=rows)
    lines = ["y,treated,post,x"] + [
        f"{a:.6f},{b},{c},{d:.6f}" for a, b, c, d in zip(y, treated, post, x, strict=True)
    ]
    return ("\n".join(lines) + "\n").encode()


def per_cell(repeats: int) -> None:
    files = {"data/s001.csv": _csv()}
    cold, warm = BwrapSandbox(warm=False), BwrapSandbox(warm=True)
    assert warm.warm is not None
    began = time.perf_counter()
    state = warm.warm.start()
    if not state.running:
        raise SystemExit(f"the warm interpreter did not start: {state.detail}")
    print(f"warm interpreter started in {time.perf_counter() - began:.2f} s")
    times: dict[str, list[float]] = {"cold": [], "warm": []}
    outputs: dict[str, set[str]] = {"cold": set(), "warm": set()}
    for _ in range(repeats):
        for name, box in (("cold", cold), ("warm", warm)):
            t = time.perf_counter()
            result = box.run(WORKFLOW, "python", files)
            times[name].append(time.perf_counter() - t)
            if result.status != "ok":
                raise SystemExit(f"{name} run failed: {result.status} {result.stderr[-500:]}")
            outputs[name].add(result.stdout)
    warm.close()
    assert outputs["cold"] == outputs["warm"], outputs
    c, w = statistics.median(times["cold"]), statistics.median(times["warm"])
    print(f"per cell (pandas + statsmodels, median of {repeats}):")
    print(f"  cold {c * 1000:8.1f} ms   warm {w * 1000:8.1f} ms   ratio {c / w:5.1f}x (goal 8x)")


def _panel(suite: Path, out: Path, cache: Path, scenarios: int, workers: int, warm: bool) -> float:
    config = RunConfig(
        suite_dir=suite,
        out_dir=out,
        limit=scenarios,
        workers=workers,
        access=ModelAccess(cache_path=cache),
        warm=warm,
    )
    began = time.perf_counter()
    run_benchmark(config)
    return time.perf_counter() - began


def _cells(out: Path) -> list[tuple[object, ...]]:
    with RunStore.open(out) as store:
        return sorted(
            (
                r.key.scenario_id,
                r.key.model,
                r.key.language,
                r.status,
                r.execution.stdout if r.execution else None,
            )
            for r in store.iter_cells()
        )


def panel(scenarios: int, workers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build_suite(root / "suite")
        cache = root / "cache.sqlite"
        # the first pass fills the response cache, so neither timed pass pays for answers
        _panel(root / "suite", root / "prime", cache, scenarios, workers, warm=True)
        cold = _panel(root / "suite", root / "cold", cache, scenarios, workers, warm=False)
        warm = _panel(root / "suite", root / "warm", cache, scenarios, workers, warm=True)
        same = _cells(root / "cold") == _cells(root / "warm")
        n = len(_cells(root / "warm"))
    print(f"reference panel, {scenarios} scenarios, R and Python ({n} cells, {workers} workers):")
    print(f"  cold {cold:8.1f} s    warm {warm:8.1f} s    ratio {cold / warm:5.2f}x (goal 2.5x)")
    print(f"  same cells warm and cold: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--scenarios", type=int, default=24)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    per_cell(args.repeats)
    panel(args.scenarios, args.workers)


if __name__ == "__main__":
    main()

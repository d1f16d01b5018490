"""Build-time benchmark of the scenario suite: 100, 1,000 and 10,000 scenarios.

Each size runs in its own Python process, so peak memory (``ru_maxrss``) is measured per size.
Wall time depends on how busy the machine is; CPU time (user + system of the build) is printed
too because it does not. The child first builds the 4-scenario smoke suite to pay one-off import and compilation costs,
then times the real build. Usage::

    python benchmarks/build.py [--sizes 100 1000 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, resource, sys, time
from pathlib import Path
from causalverify.scenarios import build_suite

root, size = Path(sys.argv[1]), int(sys.argv[2])
t0 = time.perf_counter()
build_suite(root / "warmup", suite="smoke")
warmup = time.perf_counter() - t0
cpu0 = time.process_time()
report = build_suite(root / f"suite-{size}", n_scenarios=size)
cpu = time.process_time() - cpu0
print(json.dumps({
    "cpu_seconds": cpu,
    "size": size,
    "seconds": report.seconds,
    "warmup_seconds": warmup,
    "redraws": report.redraws,
    "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run_size(size: int, workdir: Path) -> dict[str, float]:
    """Build a suite of ``size`` scenarios in a fresh interpreter and return its measurements."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(workdir), str(size)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Run the benchmark and print one line per size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--keep", type=Path, default=None, help="keep the suites in this folder")
    args = parser.parse_args()
    print(
        f"{'scenarios':>10} {'wall s':>8} {'wall ms/sc':>11} {'cpu s':>8} {'cpu ms/sc':>10} "
        f"{'redraws':>8} {'peak MB':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            workdir = args.keep if args.keep is not None else Path(tmp)
            workdir.mkdir(parents=True, exist_ok=True)
            r = run_size(size, workdir)
            per, cpu_per = 1000 * r["seconds"] / size, 1000 * r["cpu_seconds"] / size
            print(
                f"{size:>10} {r['seconds']:>8.1f} {per:>11.1f} {r['cpu_seconds']:>8.1f} "
                f"{cpu_per:>10.1f} {int(r['redraws']):>8} "
                f"{r['maxrss_mb']:>8.0f}   (warm-up {r['warmup_seconds']:.1f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()

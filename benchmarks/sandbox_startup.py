"""What ``causalverify exec`` of an R script costs end to end, by how its sandbox starts.

Three ways, each a fresh ``causalverify exec`` process, run ``--repeats`` times alternating:

- **fresh**: an empty self-test cache (the cold path is self-tested; the warm interpreter, on by
  default, is not started for an R script);
- **kept**: the same, with the self-test kept from an earlier passing run;
- **always**: ``CAUSALVERIFY_SELFTEST=always`` with ``--no-warm``, the self-test every time.

Prints the median of each and the ratios fresh/kept and always/kept.

Usage::

    python benchmarks/sandbox_startup.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = (sys.executable, "-c", "from causalverify.cli import main; main()")


def _exec(folder: Path, env: dict[str, str], *extra: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [*CLI, "exec", str(folder / "a.R"), "--data", str(folder / "d.csv"), *extra],
        env=env,
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="causalverify-startup-"))
    (folder / "a.R").write_text('cat("ESTIMATE: 1.5\\n")\n')
    (folder / "d.csv").write_text("y\n1\n")
    times: dict[str, list[float]] = {"fresh": [], "kept": [], "always": []}
    for k in range(args.repeats):
        cache = folder / f"cache-{k}"
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        times["fresh"].append(_exec(folder, env))
        times["kept"].append(_exec(folder, env))
        always = {**env, "CAUSALVERIFY_SELFTEST": "always"}
        times["always"].append(_exec(folder, always, "--no-warm"))
    med = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"exec of an R script, median of {args.repeats}: fresh {med['fresh']:.2f} s | kept "
        f"{med['kept']:.2f} s | self-test every time, --no-warm {med['always']:.2f} s | "
        f"fresh/kept {med['fresh'] / med['kept']:.1f}x | always/kept "
        f"{med['always'] / med['kept']:.1f}x"
    )


if __name__ == "__main__":
    main()

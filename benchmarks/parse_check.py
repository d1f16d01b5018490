"""What R's parse check costs: the same check with R started bare (base package only, no fit
log; what ``check_parses`` does) and as a model's script starts (R's default packages and the
hooks), alternating, in the real sandbox.

Every R cell of a run is parse-checked before it executes, so the difference is paid once per R
cell. Prints CPU and wall per check (median over the rounds) and the ratio.

Usage::

    python benchmarks/parse_check.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

from causalverify.sandbox import get_sandbox
from causalverify.sandbox.codeblocks import _R_PARSE_CHECK

ROOT = Path(__file__).resolve().parents[1]
#: a real-sized R script: the fit log's own R source
CODE = (ROOT / "src" / "causalverify" / "sandbox" / "fitlog.R").read_bytes()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    box = get_sandbox(warm=False)
    samples: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(args.rounds):
        for bare in (True, False):
            cpu, wall = _children_cpu(), time.perf_counter()
            result = box.run(_R_PARSE_CHECK, "r", {"code.R": CODE}, bare=bare)
            assert "CAUSALVERIFY_PARSE_OK" in result.stdout, result
            samples[bare].append((_children_cpu() - cpu, time.perf_counter() - wall))
    rows = {}
    for bare, label in ((False, "default packages + hooks"), (True, "bare (base only)")):
        cpu = statistics.median(c for c, _ in samples[bare]) * 1000
        wall = statistics.median(w for _, w in samples[bare]) * 1000
        rows[bare] = (cpu, wall)
        print(f"{label:26s} CPU {cpu:7.1f} ms   wall {wall:7.1f} ms")
    print(
        f"bare is {rows[False][0] / rows[True][0]:.1f}x less CPU and "
        f"{rows[False][1] / rows[True][1]:.1f}x less wall per R cell's parse check "
        f"({args.rounds} alternating rounds)"
    )


if __name__ == "__main__":
    main()

"""What the fit log costs: the reference panel's cells run with the hooks on and off, side by side.

Builds the default suite, takes ``--per-family`` scenarios of each family, writes the answers of
the reference agents (``--agents``) in R and Python, and runs every cell in the real sandbox with
the fit log on and off, alternating the order cell by cell over ``--rounds`` rounds so that load on
the machine falls on both arms alike. Prints the summed wall time per language and arm, the ratio
on/off, and the median per-cell ratio. Usage::

    python benchmarks/fitlog.py [--per-family 5] [--rounds 3] [--agents textbook naive] [--languages r]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from causalverify.reference import write_response
from causalverify.sandbox import Limits, extract_code, get_sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.scenarios import build_suite
from causalverify.scenarios.suite import load_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-family", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", nargs="+", default=["textbook", "naive"])
    parser.add_argument("--languages", nargs="+", default=["r", "python"], choices=["r", "python"])
    args = parser.parse_args()
    hooked = get_sandbox()
    plain = BwrapSandbox(fit_log=False)
    limits = Limits(wall_seconds=120, cpu_seconds=120)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "suite"
        build_suite(root)
        suite = load_suite(root)
        picked: dict[str, int] = {}
        cells = []
        for sc in suite.scenarios:
            if picked.get(sc.family, 0) >= args.per_family:
                continue
            picked[sc.family] = picked.get(sc.family, 0) + 1
            for agent in args.agents:
                for language in args.languages:
                    text = write_response(agent, sc, language=language, protocol="default")
                    block = extract_code(text, language)
                    if block is not None:
                        cells.append((sc, language, block.code))
        times: dict[tuple[str, str], float] = {}
        ratios: dict[str, list[float]] = {language: [] for language in args.languages}
        fits = 0
        for round_no in range(args.rounds):
            for i, (sc, language, code) in enumerate(cells):
                files = {sc.data_file: root / sc.data_file}
                order = [("on", hooked), ("off", plain)]
                if (i + round_no) % 2:
                    order.reverse()
                took: dict[str, float] = {}
                for arm, box in order:
                    start = time.perf_counter()
                    result = box.run(code, language, files, limits)
                    took[arm] = time.perf_counter() - start
                    if arm == "on":
                        fits += len(result.fits)
                for arm, seconds in took.items():
                    times[(language, arm)] = times.get((language, arm), 0.0) + seconds
                ratios[language].append(took["on"] / took["off"])
    print(f"{len(cells)} cells x {args.rounds} rounds; {fits} fits logged with the hooks on")
    print(f"{'language':<8} {'on (s)':>9} {'off (s)':>9} {'on/off':>8} {'median cell':>12}")
    for language in args.languages:
        on, off = times[(language, "on")], times[(language, "off")]
        median = statistics.median(ratios[language])
        print(f"{language:<8} {on:9.2f} {off:9.2f} {on / off:8.3f} {median:12.3f}")
    on = sum(v for (_, arm), v in times.items() if arm == "on")
    off = sum(v for (_, arm), v in times.items() if arm == "off")
    print(f"{'all':<8} {on:9.2f} {off:9.2f} {on / off:8.3f}")


if __name__ == "__main__":
    main()

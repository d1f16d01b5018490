"""Time per call of the canonical estimators (pyfixest/statsmodels/linearmodels vs numpy).

Usage: ``python benchmarks/estimators.py [--repeat N]``. Data come from the default-size suite
generators' layouts (DID 40 units x 40 periods = 1,600 rows, event study 1,680 stock-days, IV 500,
RDD 600 rows), seeded, so runs are comparable. Reports the median of N calls after one warm-up
call per family (the warm-up absorbs imports).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from causalverify.estimators import CanonicalResult, canonical
from causalverify.estimators.closed_form import closed_form
from causalverify.families import FAMILIES, Family

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import estimators_synth as synth

SIZES: dict[Family, dict[str, int]] = {
    "did": {"units": 40, "periods": 40},
    "event_study": {"stocks": 41},
    "iv": {"n": 500},
    "rdd": {"n": 600},
}


def _median_ms(
    func: Callable[[pd.DataFrame, Family], CanonicalResult],
    data: pd.DataFrame,
    family: Family,
    repeat: int,
) -> float:
    func(data, family)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func(data, family)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    """Print a table of median milliseconds per call for both implementations."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    print(f"{'family':<12} {'rows':>6} {'canonical ms':>13} {'closed_form ms':>15}")
    for family in FAMILIES:
        data = synth.GENERATORS[family](0, **SIZES[family])  # type: ignore[operator]
        primary = _median_ms(canonical, data, family, args.repeat)
        independent = _median_ms(closed_form, data, family, args.repeat)
        print(f"{family:<12} {len(data):>6} {primary:>13.2f} {independent:>15.2f}")


if __name__ == "__main__":
    main()

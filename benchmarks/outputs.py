"""What output provenance costs: scripts that print a lot, run with the hooks on and off.

Each case is an R and a Python script run in the real sandbox with the fit-log hooks (which
carry output provenance) on and off, alternating the order run by run over ``--rounds`` rounds so
that load on the machine falls on both arms alike. Prints the summed wall time per case and arm,
the ratio on/off, and how many stdout lines got an origin. Cases:

- ``loop``: ``--lines`` lines printed by one statement in a loop (one record);
- ``alternate``: the same number of lines from two statements taking turns (a record per line,
  up to the cap);
- ``analysis``: a typical answer: read the CSV, fit a regression, print its summary and a few
  labelled numbers.

Usage::

    python benchmarks/outputs.py [--lines 10000] [--rounds 3] [--languages r python] [--cold]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from causalverify.families import Language
from causalverify.sandbox import Limits, line_origins
from causalverify.sandbox.bwrap import BwrapSandbox

R_CASES = {
    "loop": "for (i in seq_len({n})) cat('line', i, 'value', i / 7, '\\n')\n",
    "alternate": (
        "for (i in seq_len({n} %/% 2)) {\n  cat('even', i, '\\n')\n  cat('odd', i / 7, '\\n')\n}\n"
    ),
    "analysis": (
        "d <- read.csv('data/d.csv')\n"
        "fit <- lm(y ~ x, data = d)\n"
        "print(summary(fit))\n"
        "b <- coef(fit)[['x']]\n"
        "cat('Estimate:', round(b, 4), '\\n')\n"
        "cat(sprintf('95%% CI: [%.4f, %.4f]\\n', confint(fit)['x', 1], confint(fit)['x', 2]))\n"
        "print(head(d))\n"
    ),
}
PY_CASES = {
    "loop": "for i in range({n}):\n    print('line', i, 'value', i / 7)\n",
    "alternate": ("for i in range({n} // 2):\n    print('even', i)\n    print('odd', i / 7)\n"),
    "analysis": (
        "import pandas as pd\n"
        "import statsmodels.formula.api as smf\n"
        "d = pd.read_csv('data/d.csv')\n"
        "fit = smf.ols('y ~ x', data=d).fit()\n"
        "print(fit.summary())\n"
        "b = fit.params['x']\n"
        "print('Estimate:', round(b, 4))\n"
        "lo, hi = fit.conf_int().loc['x']\n"
        "print(f'95% CI: [{lo:.4f}, {hi:.4f}]')\n"
        "print(d.head())\n"
    ),
}


def _data() -> bytes:
    rng = np.random.default_rng(1)
    xy = rng.normal(size=(500, 2))
    return ("y,x\n" + "\n".join(f"{a:.6f},{b:.6f}" for a, b in xy) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--languages", nargs="+", default=["r", "python"], choices=["r", "python"])
    parser.add_argument("--cold", action="store_true", help="run Python cold (no warm interpreter)")
    args = parser.parse_args()
    warm = not args.cold
    hooked, plain = BwrapSandbox(warm=warm), BwrapSandbox(warm=warm, fit_log=False)
    for box in (hooked, plain):
        if box.warm is not None and "python" in args.languages:
            box.warm.start()  # not timed: the interpreters start once per sandbox
    files = {"data/d.csv": _data()}
    limits = Limits(wall_seconds=300, cpu_seconds=300, max_output_bytes=10_000_000)
    times: dict[tuple[str, str, str], float] = {}
    placed: dict[tuple[str, str], tuple[int, int]] = {}
    try:
        for round_no in range(args.rounds):
            for i, language in enumerate(args.languages):
                cases = R_CASES if language == "r" else PY_CASES
                for j, (case, template) in enumerate(cases.items()):
                    code = template.replace("{n}", str(args.lines))
                    order = [("on", hooked), ("off", plain)]
                    if (round_no + i + j) % 2:
                        order.reverse()
                    for arm, box in order:
                        lang: Language = language  # type: ignore[assignment]
                        start = time.perf_counter()
                        result = box.run(code, lang, files, limits)
                        key = (language, case, arm)
                        times[key] = times.get(key, 0.0) + time.perf_counter() - start
                        if not result.ok:
                            raise SystemExit(f"{language} {case} {arm}: {result.status}")
                        if arm == "on":
                            lines = len(result.stdout.splitlines())
                            placed[(language, case)] = (len(line_origins(result)), lines)
    finally:
        hooked.close()
        plain.close()
    path = "cold" if args.cold else "warm"
    print(f"{args.rounds} rounds, --lines {args.lines}, Python {path}")
    header = f"{'language':<8} {'case':<10} {'on (s)':>8} {'off (s)':>8} {'on/off':>7}"
    print(f"{header} {'lines with an origin':>22}")
    for language in args.languages:
        cases = R_CASES if language == "r" else PY_CASES
        for case in cases:
            on, off = times[(language, case, "on")], times[(language, case, "off")]
            got, lines = placed[(language, case)]
            print(
                f"{language:<8} {case:<10} {on:8.2f} {off:8.2f} {on / off:7.3f} "
                f"{f'{got}/{lines}':>22}"
            )


if __name__ == "__main__":
    main()

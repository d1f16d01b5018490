"""What starting the command line costs: CPU of ``causalverify run`` on a finished run and of
``causalverify --help``, for this checkout and optionally an older commit, side by side.

A finished run (reference/textbook, Python, three smoke scenarios) is made once, unless
``--run-dir`` names one; rerunning ``causalverify run`` on it computes nothing and only prints the
summary. The older commit's ``src`` is exported with ``git archive`` into a temporary folder and
put first on ``PYTHONPATH``, so both sides run on the same interpreter and packages, alternating.
Also printed: how many modules each side has loaded after importing the run path, and which heavy
third-party ones.

Usage::

    python benchmarks/cli_startup.py [--against COMMIT] [--repeats 5] [--run-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = (sys.executable, "-c", "from causalverify.cli import main; main()")
RUN_ARGS = ("--suite", "smoke", "--models", "reference/textbook", "--languages", "python")
RUN_ARGS += ("--limit", "3", "--quiet")
HEAVY = ("scipy", "scipy.stats", "matplotlib", "statsmodels", "linearmodels", "pandas", "numpy")
PROBE = """
import json, sys
import causalverify.cli, causalverify.cli.run, causalverify.runner
import causalverify.analysis, causalverify.report, causalverify.store
heavy = %r
print(json.dumps([len(sys.modules), [h for h in heavy if h in sys.modules]]))
"""


def _cpu(args: list[str], env: dict[str, str]) -> float:
    """User + system CPU of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, env=env, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _env(src: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="an older commit to compare with")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--run-dir", type=Path, help="a finished run folder to reuse")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="causalverify-cli-startup-"))
    sides: dict[str, Path | None] = {"current": None}
    if args.against:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.against, "src"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        sides[args.against] = work / "src"
    run_dir = args.run_dir or work / "run"
    if args.run_dir is None:
        subprocess.run([*CLI, "run", *RUN_ARGS, "--out", str(run_dir)], check=True,
                       capture_output=True)  # fmt: skip
    commands = {
        "run (finished)": [*CLI, "run", *RUN_ARGS, "--out", str(run_dir)],
        "--help": [*CLI, "--help"],
    }
    cpu: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for side, src in sides.items():
            for name, command in commands.items():
                cpu.setdefault((side, name), []).append(_cpu(command, _env(src)))
    print(f"CPU seconds (user + sys), median of {args.repeats}:")
    for name in commands:
        cells = " | ".join(f"{side} {statistics.median(cpu[side, name]):.2f} s" for side in sides)
        print(f"  {name:15} {cells}")
    for side, src in sides.items():
        done = subprocess.run(
            [sys.executable, "-c", PROBE % (HEAVY,)],
            env=_env(src),
            capture_output=True,
            text=True,
            check=True,
        )
        count, heavy = json.loads(done.stdout)
        print(f"  {side}: run path imports {count} modules; heavy: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()

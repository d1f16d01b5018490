"""Benchmark of frozen releases: freeze a run, then verify it (hashes only, and with rescoring).

Prints wall and CPU seconds of each step, the release size and its file count, as JSON. Wall
time depends on how busy the machine is; CPU time does not. Usage::

    python benchmarks/release.py RUN_DIR [--keep DIR] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from causalverify.release import ReportSettings, freeze_run, verify_release


def timed(step: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """Run ``step``; return its result with wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = step()
    return result, {
        "wall_seconds": round(time.perf_counter() - wall, 3),
        "cpu_seconds": round(time.process_time() - cpu, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--keep", type=Path, default=None, help="Write the release here.")
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep if args.keep is not None else Path(tmp) / "release"
        settings = ReportSettings(
            seed=20260, unit="model", n_resamples=args.resamples, title="CausalVerify report"
        )
        frozen, freeze_time = timed(lambda: freeze_run(args.run_dir, out, report=settings))
        hashes, hashes_time = timed(lambda: verify_release(out, rescore=False))
        full, full_time = timed(lambda: verify_release(out))
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(
            json.dumps(
                {
                    "cells": frozen.n_cells,
                    "files": frozen.n_files,
                    "megabytes": round(size / 1e6, 2),
                    "freeze": freeze_time,
                    "verify_hashes_only": {**hashes_time, "ok": hashes.ok},
                    "verify_full": {**full_time, "ok": full.ok},
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()

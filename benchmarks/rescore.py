"""Rescoring a stored run: batched writes (one transaction) against one transaction per cell.

Builds a run store of ``--cells`` synthetic executed cells (the four families, printed outputs of
several styles), then rescores it ``--rounds`` times with each arm, alternating the arms so load
on the machine falls on both alike:

- ``batched``: ``causalverify.runner.score_run`` (rescore every cell, write them and the
  rescoring note in one transaction, write ``scores.csv``);
- ``per cell``: the same rescoring and ``scores.csv``, but each cell written in its own
  transaction (``RunStore.put_cell``), as ``score`` did before.

Prints the median wall time of each arm, the ratio, and the time of the rescoring alone. Usage::

    python benchmarks/rescore.py [--cells 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from causalverify.records import (
    CellKey,
    CellRecord,
    CodeRecord,
    ExecResult,
    Message,
    ModelResponse,
)
from causalverify.runner import score_run
from causalverify.runner.rescore import SCORES_FILE, write_scores_csv
from causalverify.scoring import rescore
from causalverify.store import RunStore, cells_frame

OUTPUTS = {
    "did": ("DiD estimate: {v:.4f}\n", -0.25),
    "event_study": ("CAR[0,10]: {v:.4f}\nper day: {v:.5f}\n", 0.02),
    "iv": ("OLS estimate: 0.61\n2SLS estimate: {v:.3f} (SE 0.05)\n", 0.5),
    "rdd": ("RD estimate: {v:.3f}\nbandwidth 0.3\n", 0.25),
}


def _records(n: int) -> list[CellRecord]:
    families = sorted(OUTPUTS)
    out = []
    for i in range(n):
        family = families[i % 4]
        template, canonical = OUTPUTS[family]
        value = canonical * (0.8 + 0.4 * ((i * 37) % 11) / 10)
        stdout = template.format(v=value)
        out.append(
            CellRecord(
                key=CellKey(scenario_id=f"s{i // 8:05d}", model=f"m{i % 8}", language="r"),
                family=family,  # type: ignore[arg-type]
                difficulty="easy",
                beta=canonical,
                canonical=canonical,
                protocol="default",
                prompt=[Message(role="user", content="q")],
                prompt_sha256="0" * 64,
                response=ModelResponse(content="```r\ncat('x')\n```"),
                code=CodeRecord(language="r", code="cat('x')", block_index=0, parses=True),
                execution=ExecResult(
                    status="ok",
                    exit_code=0,
                    stdout=stdout,
                    stderr="",
                    wall_seconds=0.1,
                    cpu_seconds=0.1,
                ),
                status="api_error",
            )
        )
    return out


def _per_cell(run_dir: Path) -> None:
    with RunStore.open(run_dir) as store:
        records = [rescore(r) for r in store.iter_cells()]
        for record in records:
            store.put_cell(record)
        store.set_meta({"rescored": None})
    write_scores_csv(cells_frame(records), run_dir / SCORES_FILE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        with RunStore.open(run_dir, create=True) as store:
            store.put_cells(_records(args.cells))
        start = time.perf_counter()
        with RunStore.open(run_dir) as store:
            for record in store.iter_cells():
                rescore(record)
        alone = time.perf_counter() - start
        arms: dict[str, list[float]] = {"batched": [], "per cell": []}
        for round_ in range(args.rounds):
            order = ["batched", "per cell"] if round_ % 2 == 0 else ["per cell", "batched"]
            for arm in order:
                start = time.perf_counter()
                if arm == "batched":
                    score_run(run_dir)
                else:
                    _per_cell(run_dir)
                arms[arm].append(time.perf_counter() - start)
    batched = statistics.median(arms["batched"])
    per_cell = statistics.median(arms["per cell"])
    print(f"{args.cells} cells, {args.rounds} rounds (median wall seconds)")
    print(f"  rescoring alone (read + extract + score, no writes): {alone:.2f} s")
    print(f"  batched (one transaction):  {batched:.2f} s")
    print(f"  one transaction per cell:   {per_cell:.2f} s")
    print(f"  ratio per cell / batched:   {per_cell / batched:.1f}x")


if __name__ == "__main__":
    main()

"""The ruler on real answers: replay the development set, compare it, check the hand-read labels.

The development set (``../shared/reference/causalverify-2026/release/`` beside the checkout) holds
published scenarios, the cached answers of several models, the published per-cell table of those
cells and hand-read reported estimates of cells where two extractors disagree. This script
imports it as a suite, replays every cached answer in the sandbox (``--protocol paper --profile
paper``), rescores every cell with today's extractor, runs ``compare`` and prints:

- L2b and L2b+ agreement with the published table, installed-only (the code uses only packages
  installed here) and over all cells;
- value agreement: our extracted value against the published judge's (``--value-rtol``);
- accuracy against the hand-read labels: right, undecided, no estimate, confidently wrong;
- the undecided and no-estimate shares of the executed cells, and how many undecided cells
  scoring could not settle either (their candidates pass and fail alike: ``unresolved``);
- every confidently-wrong cell with our reading and the hand-read one.

The replay is kept in ``--work`` (suite, run store, response cache); a second run resumes it and
only re-extracts and rescores, and ``--rescore-only`` executes nothing at all. Usage::

    python benchmarks/ruler.py [--release DIR] [--work DIR] [--rescore-only] [--json]
    python benchmarks/ruler.py --cells labelled     # only the hand-read cells (faster)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from causalverify.families import LANGUAGES, Language
from causalverify.published.devset import LABELS_FILE, devset_figures, replay_devset
from causalverify.published.handlabels import LABEL_RTOL, read_labels

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT.parent / "shared" / "reference" / "causalverify-2026" / "release"
WORK = ROOT / "runs" / "ruler-dev"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "-"


def _rate(rates: dict[str, Any]) -> str:
    return _pct(int(rates["agree"]), int(rates["n"]))


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def _compare_lines(language: str, compared: dict[str, Any], rtol: float) -> list[str]:
    inst, every = compared["installed_only"], compared["all"]
    lines = [
        f"agreement with the published table ({language}, "
        f"{compared['matched_cells']} cells)   installed-only     all cells",
    ]
    rows = (("L2b", "L2b"), ("L2b+", "L2b_plus"), (f"value (rtol {rtol:g})", "value"))
    for title, key in rows:
        lines.append(f"  {title:<26}{_rate(inst[key]):>22}{_rate(every[key]):>22}")
    ours = f"{_share(inst['ours_L2b_plus_rate'])} / {_share(inst['published_L2b_plus_rate'])}"
    theirs = f"{_share(every['ours_L2b_plus_rate'])} / {_share(every['published_L2b_plus_rate'])}"
    lines.append(f"  {'L2b+ rate ours / published':<26}{ours:>22}{theirs:>22}")
    reasons = ", ".join(f"{k} {v}" for k, v in compared["reasons"].items())
    lines.append(f"  disagreements: {reasons or 'none'}")
    return lines


def _wrong_lines(wrong: list[dict[str, Any]]) -> list[str]:
    lines = [f"confidently wrong ({len(wrong)})"]
    for row in wrong:
        hand = _num(row["hand_read"]) if row["label_status"] != "none" else "no estimate"
        if row["alternatives"]:
            hand += " or " + ", ".join(_num(v) for v in row["alternatives"])
        if row["unit"] != "as_printed":
            hand += f" [{row['unit']}]"
        lines.append(
            f"  {row['scenario_id']} {row['model']}: extracted {_num(row['extracted'])}, "
            f"hand-read {hand}"
        )
        lines.append(f"      ours:      {row['extracted_line'] or '-'}")
        lines.append(f"      hand-read: {row['line'] or '-'}")
    return lines


def render(figures: dict[str, Any], timing: dict[str, float], cells_now: dict[str, int]) -> str:
    """The figures as a compact text table."""
    seconds = ", ".join(f"{k} {v:.1f} s" for k, v in timing.items())
    lines = [
        f"{figures['cells']} cells ({cells_now['computed']} executed now, {cells_now['kept']} "
        f"stored); {seconds}"
    ]
    for language, compared in figures["compare"].items():
        lines += ["", *_compare_lines(language, compared, figures["value_rtol"])]
    ran = figures["executed"]
    acc = figures["accuracy"]
    lines += [
        "",
        f"executed cells {ran['executed']:>33}",
        f"  undecided {ran['undecided']:>37}  ({_share(ran['undecided_share'])})",
        f"    of which unresolved by scoring {ran['unresolved']:>14}  "
        f"({_share(ran['unresolved_share'])})",
        f"  no estimate {ran['no_estimate']:>35}  ({_share(ran['no_estimate_share'])})",
        "",
        f"hand-read labels {acc['labels']:>31}  ({acc['assessed']} on cells executed here)",
        f"  right {acc['right']:>41}  ({_share(acc['right_share'])})",
        f"  undecided {acc['undecided']:>37}",
        f"  no estimate {acc['no_estimate']:>35}",
        f"  confidently wrong {acc['wrong']:>29}  ({_share(acc['wrong_share'])})",
    ]
    if acc["not_executed"] or acc["no_cell"]:
        lines.append(f"  not executed here {acc['not_executed']:>29}")
        lines.append(f"  no such cell in the run {acc['no_cell']:>23}")
    lines += ["", *_wrong_lines(figures["wrong"])]
    return "\n".join(lines)


def _languages(text: str) -> list[Language] | None:
    if text == "auto":
        return None
    wanted = [part.strip() for part in text.split(",") if part.strip()]
    bad = [w for w in wanted if w not in LANGUAGES]
    if bad or not wanted:
        raise SystemExit(f"--languages: expected auto or a list of {', '.join(LANGUAGES)}")
    return [lang for lang in LANGUAGES if lang in wanted]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--release", type=Path, default=RELEASE, help="the development set")
    parser.add_argument("--work", type=Path, default=WORK, help="suite, run and cache (kept)")
    parser.add_argument(
        "--rescore-only",
        action="store_true",
        help="execute nothing: re-extract and rescore the executions stored in --work",
    )
    parser.add_argument(
        "--cells",
        choices=("all", "labelled"),
        default="all",
        help="replay every cached answer, or only the hand-read cells",
    )
    parser.add_argument("--languages", default="auto", help="auto (the answers' code) or r,python")
    parser.add_argument("--workers", type=int, default=None, help="cells executing at once")
    parser.add_argument("--value-rtol", type=float, default=0.01, help="value agreement tolerance")
    parser.add_argument(
        "--label-rtol", type=float, default=LABEL_RTOL, help="slack beyond printed precision"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if not args.release.is_dir():
        sys.exit(f"no development set at {args.release}")
    languages = _languages(args.languages)
    cells = None
    if args.cells == "labelled":
        labels = read_labels(args.release / LABELS_FILE)
        cells = [(label.scenario_id, label.model_slug) for label in labels]
    replayed = replay_devset(
        args.release,
        args.work,
        cells=cells,
        languages=languages,
        workers=args.workers,
        rescore_only=args.rescore_only,
    )
    timing = {"replay": replayed.replay_seconds, "rescore": replayed.rescore_seconds}
    start = time.perf_counter()
    figures = devset_figures(
        replayed.run_dirs,
        args.release,
        languages=languages,
        value_rtol=args.value_rtol,
        label_rtol=args.label_rtol,
    )
    timing["compare and labels"] = time.perf_counter() - start
    cells_now = {"computed": replayed.computed, "kept": replayed.kept}
    if args.json:
        print(json.dumps({**figures, "seconds": timing, "replay": cells_now}, indent=2))
    else:
        print(render(figures, timing, cells_now))


if __name__ == "__main__":
    main()

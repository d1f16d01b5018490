"""Regenerate the second ruler corpus: correct scripts in further output styles, with decoys.

Usage (from the repository root)::

    python tests/golden/ruler2/regenerate.py            # every script
    python tests/golden/ruler2/regenerate.py a.R b.py   # only these (merged into the manifest)

The same machinery as ``tests/golden/ruler/regenerate.py`` over other scripts, written without
sight of the extractor or of the first ruler's scripts, on other draws. Builds the default suite
with the main golden corpus's seed, picks two scenarios per design family (the first ``easy``
one, also a draw of the main corpus, and the second ``hard`` one, a draw of no other corpus;
neither is the first ruler's), runs each script of ``scripts/`` whose name starts with the family
prefix on both in the real sandbox, and writes

- ``fixtures/<script>__<scenario>.stdout``: what the script printed, run with the fit log off
  (dates and clock times masked as the main corpus's normaliser does);
- ``fixtures/<script>__<scenario>.fits.json``: the fit log of a second run with the fit log on,
  whose stdout must equal the first (the command fails otherwise);
- ``manifest.json``: per case the reported value as printed, the stdout line that carries it, its
  unit, the decoys with their printed values and lines (see ``README.md``).

Each script states what it reported in a JSON record written to stderr by the code after the
``# ---- golden truth (stderr) ----`` marker. This command checks that record against the output
(every anchor names one stdout line and the printed text is a number on it) and against the
canonical estimator of ``causalverify.estimators`` run on the same CSV: the reported value,
converted to the outcome's units (and per day for a cumulative event-study figure), must lie
within 50% relative error of it. Any failure stops the command.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from causalverify.scenarios.model import Scenario

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location(
    "ruler_regenerate", HERE.parent / "ruler" / "regenerate.py"
)
assert _SPEC is not None and _SPEC.loader is not None
ruler = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(ruler)


def pick_scenarios(root: Path) -> dict[str, list[Scenario]]:
    """The first easy and the second hard scenario of each family."""
    easy: dict[str, Scenario] = {}
    hard: dict[str, list[Scenario]] = {}
    for path in sorted((root / "scenarios").glob("*.json")):
        sc = Scenario.model_validate_json(path.read_text())
        if sc.difficulty == "easy":
            easy.setdefault(sc.family, sc)
        elif sc.difficulty == "hard":
            hard.setdefault(sc.family, []).append(sc)
    return {f: [easy[f], hard[f][1]] for f in ruler.PREFIX.values()}


# the first corpus's machinery, pointed at this folder and these draws
ruler.HERE = HERE
ruler.SCRIPTS = HERE / "scripts"
ruler.FIXTURES = HERE / "fixtures"
ruler.MANIFEST = HERE / "manifest.json"
ruler.pick_scenarios = pick_scenarios

if __name__ == "__main__":
    sys.exit(ruler.main(sys.argv[1:]))

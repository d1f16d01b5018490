"""Regenerate the second ruler corpus: correct scripts in further output styles, with decoys.

Usage (from the repository root)::

    python tests/golden/ruler2/regenerate.py            # every script
    python tests/golden/ruler2/regenerate.py a.R b.py   # only these (merged into the manifest)

The same machinery as ``tests/golden/ruler/regenerate.py`` (which documents the files it writes
and the checks it makes: every anchor names one stdout line, the reported value lies within 50%
of the canonical) over other scripts, written without sight of the extractor or of the first
ruler's scripts, on other draws: the first ``easy`` scenario of each design family (also a draw
of the main corpus) and the second ``hard`` one (a draw of no other corpus); neither is the first
ruler's.
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


#: the first corpus's machinery, pointed at this folder and these draws
CORPUS = ruler.corpus_at(HERE, pick_scenarios)

if __name__ == "__main__":
    sys.exit(ruler.main(sys.argv[1:], CORPUS))

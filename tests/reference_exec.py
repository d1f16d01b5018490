"""Helpers for the reference-panel tests: scenarios over the published CSVs, running scripts.

Scripts run in the real sandbox (``causalverify.sandbox.get_sandbox``), with the scenario's CSV
placed at its relative path in the scratch folder, exactly as the runner does it.
"""

from __future__ import annotations

import hashlib
import math
import re
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from causalverify.estimators import canonical
from causalverify.families import Family, Language
from causalverify.scenarios.model import Canonical, Scenario
from estimators_reference import require_reference

#: published scenarios with realised CSVs in the reference folder, by family
REFERENCE_IDS: dict[Family, tuple[str, ...]] = {
    "did": ("s01", "s40"),
    "event_study": ("s11", "s63"),
    "iv": ("s19", "s75"),
    "rdd": ("s25", "s96"),
}

HAS_R = shutil.which("Rscript") is not None

_ESTIMATE = re.compile(r"^ESTIMATE:\s*(\S+)\s*$", re.MULTILINE)
_LABELLED = re.compile(r"^Estimated effect:\s*(\S+)\s*$", re.MULTILINE)
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_FENCE = re.compile(r"```(r|python)\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Run:
    """The outcome of one script execution that the tests look at."""

    status: str
    stdout: str
    stderr: str
    missing_package: str | None


@cache
def reference_scenario(source_id: str, family: Family, scenario_id: str | None = None) -> Scenario:
    """A :class:`Scenario` over a published CSV, with the canonical computed by our estimator.

    ``scenario_id`` lets a test reuse a CSV under another id (the ``fragile`` agent decides by id).
    """
    csv = require_reference() / "data" / f"{source_id}_data.csv"
    data = pd.read_csv(csv)
    result = canonical(data, family)
    sid = scenario_id or source_id
    return Scenario(
        id=sid,
        index=1,
        family=family,
        difficulty="easy",
        group="base",
        suite_seed=0,
        attempt=0,
        beta=0.0,
        params={},
        topic="reference",
        title=f"Reference scenario {source_id}",
        research_question="What is the effect?",
        data_description="The published realised data set.",
        columns={str(c): str(c) for c in data.columns},
        target="the effect",
        facts={"cutoff": 0.5} if family == "rdd" else {},
        data_file=f"data/{sid}.csv",
        csv_sha256=hashlib.sha256(csv.read_bytes()).hexdigest(),
        canonical=Canonical(
            estimate=result.estimate, se=result.se, n=result.n, method=result.method
        ),
    )


def reference_csv(source_id: str) -> Path:
    """Path of a published CSV."""
    return require_reference() / "data" / f"{source_id}_data.csv"


def code_blocks(response: str) -> list[tuple[str, str]]:
    """All fenced ``r``/``python`` blocks of a response as (language, code)."""
    return [(m.group(1), m.group(2)) for m in _FENCE.finditer(response)]


def run_code(code: str, language: Language, data_file: str, csv: Path) -> Run:
    """Run a script in the sandbox with the CSV at ``data_file``."""
    from causalverify.sandbox import get_sandbox

    result = get_sandbox().run(code, language, files={data_file: csv})
    return Run(result.status, result.stdout, result.stderr, result.missing_package)


def estimate_values(stdout: str) -> list[float]:
    """Values of every ``ESTIMATE: <number>`` line."""
    return [float(v) for v in _ESTIMATE.findall(stdout)]


def labelled_values(stdout: str) -> list[float]:
    """Values of every ``Estimated effect: <number>`` line."""
    return [float(v) for v in _LABELLED.findall(stdout)]


def numbers_near(stdout: str, target: float, rel: float) -> list[str]:
    """Numeric tokens of ``stdout`` within ``rel`` relative distance of ``target``."""
    out = []
    for token in _NUMBER.findall(stdout):
        value = float(token)
        if math.isfinite(value) and abs(value - target) <= rel * abs(target):
            out.append(token)
    return out

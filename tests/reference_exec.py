"""Helpers for the reference-panel tests: scenarios over the published CSVs, running scripts.

Scripts run in the real sandbox (``causalverify.sandbox.get_sandbox``), with the scenario's CSV
placed at its relative path in the scratch folder, exactly as the runner does it.
"""

from __future__ import annotations

import hashlib
import math
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from causalverify.estimators import canonical
from causalverify.families import Family, Language
from causalverify.records.execution import Limits
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


@dataclass(frozen=True)
class BatchJob:
    """One script of a batch: ``tag`` names its folder (unique, letters, digits, ``_``, ``-``)."""

    tag: str
    code: str
    data_file: str
    csv: Path


_TAG = re.compile(r"^[A-Za-z0-9_-]+$")
_BATCH_END = "@@causalverify-batch-end@@"
_LIBRARY = re.compile(r"\b(?:library|require|requireNamespace)\(\s*[\"']?([A-Za-z][A-Za-z0-9.]*)")

# Runs every script in the same R process, one after another, each as Rscript would run it: in
# the global environment, with visible values printed, from its own working folder holding only
# its data file. A script that errors is reported and the next one runs.
#
# Keeping one script's state from changing another's result (the point of the batch is that a
# failure a script would have on its own still shows):
# - the namespaces any script loads with library()/require() are loaded (not attached) before
#   the first script, so every script starts from the same state, and that state is taken as
#   the baseline below (a package's own options, set when it loads, are in the baseline);
# - after each script: the global environment is emptied (its variables, functions and
#   .Random.seed; the driver's own variables live in a local environment the scripts cannot
#   see), everything the script attached is detached (so a later script that forgot its own
#   library() call fails as it would alone), options and environment variables are restored
#   to the baseline (changed ones reset, new ones removed), the random number generator kinds
#   are reset, sinks are closed and graphics devices shut;
# - what stays is the loaded namespaces: a script reaches a package's functions only by
#   attaching it itself or through pkg::, which loads it in a fresh process too.
_R_DRIVER = r"""
local({
  root <- getwd()
  tags <- readLines(file.path(root, "_batch", "tags.txt"))
  for (p in readLines(file.path(root, "_batch", "preload.txt"))) {
    try(suppressPackageStartupMessages(loadNamespace(p)), silent = TRUE)
  }
  base_search <- search()
  base_options <- options()
  base_env <- Sys.getenv()
  RNGkind("default", "default", "default")
  for (tag in tags) {
    setwd(file.path(root, tag))
    status <- tryCatch({
      source(file.path(root, "_batch", paste0(tag, ".R")), local = FALSE, echo = FALSE,
             print.eval = TRUE)
      "ok"
    }, error = function(e) paste("error", gsub("[\r\n]+", " ", conditionMessage(e))))
    while (sink.number() > 0) sink()
    cat(sprintf("\nMARKER %s %s\n", tag, status))
    graphics.off()
    for (name in setdiff(search(), base_search)) detach(name, character.only = TRUE)
    now <- options()
    added <- setdiff(names(now), names(base_options))
    if (length(added)) options(stats::setNames(vector("list", length(added)), added))
    changed <- names(base_options)[!mapply(identical, base_options, now[names(base_options)])]
    if (length(changed)) options(base_options[changed])
    env <- Sys.getenv()
    gone <- setdiff(names(env), names(base_env))
    if (length(gone)) Sys.unsetenv(gone)
    reset <- names(base_env)[base_env != env[names(base_env)] | is.na(env[names(base_env)])]
    if (length(reset)) do.call(Sys.setenv, as.list(base_env[reset]))
    RNGkind("default", "default", "default")
    rm(list = ls(globalenv(), all.names = TRUE), envir = globalenv())
  }
})
""".replace("MARKER", _BATCH_END)


def run_r_batch(jobs: Sequence[BatchJob], limits: Limits) -> dict[str, Run]:
    """Run many R scripts in one sandbox execution (one R start-up, packages loaded once).

    Each job's CSV is placed at ``<tag>/<data_file>`` and the script runs with ``<tag>`` as its
    working folder (see the driver's comment for how scripts are kept apart). Returns a
    :class:`Run` per tag: ``ok`` when the script ran to its end, else ``error`` with R's message
    in ``stderr``, or the whole execution's status when it stopped before reaching the script.
    """
    from causalverify.sandbox import get_sandbox

    tags = [job.tag for job in jobs]
    assert len(set(tags)) == len(tags) and all(_TAG.match(t) for t in tags), tags
    preload = sorted({name for job in jobs for name in _LIBRARY.findall(job.code)})
    files: dict[str, bytes | Path] = {
        "_batch/tags.txt": "".join(f"{t}\n" for t in tags).encode(),
        "_batch/preload.txt": "".join(f"{p}\n" for p in preload).encode(),
    }
    for job in jobs:
        files[f"_batch/{job.tag}.R"] = job.code.encode("utf-8")
        files[f"{job.tag}/{job.data_file}"] = job.csv
    result = get_sandbox().run(_R_DRIVER, "r", files=files, limits=limits)
    runs: dict[str, Run] = {}
    rest = result.stdout
    for tag in tags:
        head, marker, tail = rest.partition(f"\n{_BATCH_END} {tag} ")
        if not marker:
            runs[tag] = Run(result.status, rest, result.stderr, result.missing_package)
            rest = ""
            continue
        status, _, rest = tail.partition("\n")
        ok = status == "ok"
        runs[tag] = Run("ok" if ok else "error", head, "" if ok else status, None)
    return runs

"""``DATASHEET.md``: a datasheet for the release, with counts taken from the frozen cells."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from causalverify.records import RunMeta
from causalverify.scenarios.model import Scenario


def render_datasheet(
    *,
    name: str,
    license_id: str,
    meta: RunMeta,
    scenarios: Sequence[Scenario],
    cells: pd.DataFrame,
    tables: Mapping[str, Mapping[str, Any]],
) -> str:
    """The datasheet (motivation, composition, collection, uses, limitations, licence, upkeep)."""
    sections = [
        f"# Datasheet: {name}\n",
        _MOTIVATION,
        _composition(scenarios, cells, tables),
        _collection(meta),
        _USES,
        _limitations(cells),
        _licensing(license_id),
        _MAINTENANCE,
    ]
    return "\n".join(sections)


_MOTIVATION = """## Motivation

This release freezes one CausalVerify benchmark run: language models were given research
scenarios with realised data and asked for an analysis in R or Python; the code they wrote was run
in a sandbox, the treatment effect it printed was extracted and compared with a canonical
estimator on the same data. The release lets anyone check and rescore that run without calling a
model (`causalverify verify`), and rerun the stored code (`causalverify verify --reexecute`).
"""

_USES = """## Uses

Intended: auditing and reproducing the reported numbers; rescoring under other profiles or
tolerances (`causalverify score RELEASE --out DIR`); reanalysing the per-cell table
(`causalverify analyze RELEASE`); studying how model-written analyses fail.

Out of scope: ranking models on tasks other than these four designs and this data; drawing
conclusions about real-world causal effects (the data are simulated); training models on the
canonical answers of this suite and then evaluating them on it.
"""

_MAINTENANCE = """## Maintenance

A release is immutable: any change makes `causalverify verify` fail and name the file. Corrections
are published as a new release from a new run. Problems can be reported on the project's issue
tracker.
"""


def _composition(
    scenarios: Sequence[Scenario], cells: pd.DataFrame, tables: Mapping[str, Mapping[str, Any]]
) -> str:
    families = Counter(s.family for s in scenarios)
    difficulties = Counter(s.difficulty for s in scenarios)
    statuses = cells["status"].value_counts().sort_index() if len(cells) else pd.Series(dtype=int)
    lines = [
        "## Composition\n",
        f"- Scenarios in the suite: {len(scenarios)} ("
        + ", ".join(f"{k}: {v}" for k, v in sorted(families.items()))
        + "); by difficulty: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(difficulties.items())),
        f"- Scenarios with cells: {cells['scenario_id'].nunique() if len(cells) else 0}",
        f"- Cells (scenario x model x language x sample): {len(cells)}",
        f"- Models: {cells['model'].nunique() if len(cells) else 0}; languages: "
        + ", ".join(sorted(cells["language"].unique()) if len(cells) else []),
        f"- Cells whose code ran without error (L2b): {int(cells['L2b'].sum()) if len(cells) else 0}",
        f"- Cells passing L2b+: {int((cells['L2b_plus'] == 1).sum()) if len(cells) else 0}; "
        f"unscoreable: {int(cells['unscoreable'].sum()) if len(cells) else 0}",
        "",
        "| model | language | cells | L1 | L2a | L2b | L2b+ |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (model, language), group in cells.groupby(["model", "language"], sort=True):
        sums = [int(group[c].sum()) for c in ("L1", "L2a", "L2b")]
        plus = int((group["L2b_plus"] == 1).sum())
        lines.append(
            f"| {model} | {language} | {len(group)} | {' | '.join(map(str, sums))} | {plus} |"
        )
    lines += ["", "| status | cells |", "|---|---:|"]
    lines += [f"| {status} | {int(n)} |" for status, n in statuses.items()]
    if tables:
        lines += ["", "Other results stored with the run (calibration, Experiment A):", ""]
        lines += [f"- `{info['file']}`: {info['rows']} rows" for _, info in sorted(tables.items())]
    return "\n".join(lines) + "\n"


def _collection(meta: RunMeta) -> str:
    options = meta.model_options
    return f"""## Collection process

- Suite seed {meta.suite_seed}; prompt protocol `{meta.protocol}`; samples per
  (scenario, model, language): {meta.samples}.
- Model options: temperature {options.temperature}, max tokens
  {options.max_tokens}, reasoning effort {options.reasoning_effort}.
- Code ran in the sandbox (unsafe mode: {meta.unsafe}) under the limits in
  `ENVIRONMENT.json`; R and Python package versions are recorded there too.
- Scoring: profile `{meta.scoring.profile}`, tolerance {meta.scoring.tolerance}, extractor
  `{meta.scoring.extractor}` (judge model: {meta.judge_model}).
- Files: `suite/` (scenarios, CSVs, canonical estimates), `records/` (prompts, raw responses,
  executions, extractions and judge outputs, per-cell scores), `scores.csv`, `scenarios.csv`,
  `report/` (summary.json, figures, index.html), `ENVIRONMENT.json`, `croissant.json`,
  `SHA256SUMS`.
"""


def _limitations(cells: pd.DataFrame) -> str:
    tokens = int(cells["output_tokens"].sum()) if len(cells) else 0
    cost = float(cells["cost_usd"].sum()) if len(cells) else 0.0
    return f"""## Limitations

The data are simulated from four textbook designs (difference in differences, event studies,
instrumental variables, regression discontinuity); the canonical estimator is one reasonable
analysis, not the only one. The extracted estimate comes from printed output, so an analysis that
prints its result in an unusual way can be scored as having no estimate. Model answers are
samples: another run may differ. The run used {tokens} output tokens at a recorded cost of
${cost:.2f}.
"""


def _licensing(license_id: str) -> str:
    return f"""## Licensing

The release (suite, records, report) is distributed under {license_id}. Model answers are
included as returned by the providers; their terms of use may also apply. The CausalVerify code is
MIT-licensed.
"""

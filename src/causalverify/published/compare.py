"""Cell-by-cell agreement between a run of ours and a published per-cell table.

For every (scenario, model) cell present in both, four things are compared: L2a, L2b, the
extracted value (ours against the published ``judge_effect``) and L2b+ (ours against the published
headline ``L2b_plus_v2``). Every disagreement gets one reason, the first that applies:

``missing package <pkg>``  our execution failed on a package the environment lacks, theirs ran
``code differs``           L2a differs (a code block found / parsed on one side only)
``execution differs``      L2b differs for another reason (the detail has our status and stderr)
``extraction differs``     both executed, the extracted values differ
``canonical differs``      values agree, L2b+ differs, and so do the canonical estimates
``scoring differs``        values and canonicals agree, L2b+ still differs (tolerance, ES rule)

The same figures are given for all matched cells and for the cells whose code uses installed
packages only (judged from the code itself and the run's environment manifest).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from causalverify.analysis import load_published_cells
from causalverify.errors import CompareError as CompareError
from causalverify.families import Language
from causalverify.published.packages import missing_packages
from causalverify.records import CellRecord
from causalverify.sandbox import environment_manifest
from causalverify.store import RunStore, cells_frame

#: compared quantities, in report order
LAYERS: Final[tuple[str, ...]] = ("L2a", "L2b", "value", "L2b_plus")
#: canonical estimates closer than this count as equal (the release rounds to 6 decimals)
CANONICAL_ATOL: Final[float] = 5e-7
_NUMBER: Final[re.Pattern[str]] = re.compile(r"(\d+)$")
CELL_TABLE_COLUMNS: Final[tuple[str, ...]] = (
    "scenario_id", "method", "model", "published_model", "ours_L2a", "published_L2a",
    "ours_L2b", "published_L2b", "ours_value", "published_value", "ours_L2b_plus",
    "published_L2b_plus", "ours_canonical", "published_canonical", "ours_status",
    "missing_packages", "installed_only", "agree_L2a", "agree_L2b", "agree_value",
    "agree_L2b_plus", "reason", "detail",
)  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_run`.

    Attributes
    ----------
    cells
        One row per matched cell, columns :data:`CELL_TABLE_COLUMNS`.
    model_map
        Our model spec -> the published model it was matched with.
    unmatched_ours, unmatched_published
        ``(scenario_id, model)`` cells present on one side only (for matched models).
    published_models_not_compared
        Published models no model of the run was matched with.
    """

    cells: pd.DataFrame
    model_map: dict[str, str]
    unmatched_ours: list[tuple[str, str]] = field(default_factory=list)
    unmatched_published: list[tuple[str, str]] = field(default_factory=list)
    published_models_not_compared: list[str] = field(default_factory=list)

    @property
    def disagreements(self) -> pd.DataFrame:
        """The matched cells that disagree on at least one compared quantity."""
        return self.cells.loc[self.cells["reason"] != ""].reset_index(drop=True)


def scenario_number(scenario_id: str) -> int | None:
    """``s07`` and ``s007`` -> 7 (``None`` if the id does not end in digits)."""
    match = _NUMBER.search(str(scenario_id))
    return int(match[1]) if match else None


def _our_frame(records: list[CellRecord], language: Language, installed: set[str]) -> pd.DataFrame:
    records = [r for r in records if r.key.language == language and r.key.sample == 0]
    frame = cells_frame(records)
    extra = {}
    for r in records:
        code = r.code.code if r.code is not None else None
        missing = missing_packages(code, language, installed)
        if r.status == "missing_package" and r.execution and r.execution.missing_package:
            missing = list(dict.fromkeys([r.execution.missing_package, *missing]))
        stderr = r.execution.stderr.strip().splitlines() if r.execution else []
        extra[(r.key.scenario_id, r.key.model)] = {
            "missing_packages": ",".join(missing),
            "response_model": r.response.model if r.response else None,
            "stderr_tail": stderr[-1][:200] if stderr else "",
        }
    keys = list(zip(frame["scenario_id"], frame["model"], strict=True))
    for column in ("missing_packages", "response_model", "stderr_tail"):
        frame[column] = [extra[k][column] for k in keys]
    return frame


def _names_of(spec: str, ours: pd.DataFrame) -> set[str]:
    """Names our model spec may carry in a published table."""
    names = {spec}
    if spec.startswith("replay/"):
        rest = spec[len("replay/") :]
        folder, sep, slug = rest.rpartition(":")
        names.add(slug if sep and folder else Path(rest).name)
    answered = ours.loc[ours["model"] == spec, "response_model"].dropna()
    names.update(str(v) for v in answered.unique())
    return names


def match_models(
    ours: pd.DataFrame, published_models: pd.DataFrame, explicit: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Pair each of our model specs with a published model.

    A spec matches a published model whose ``model`` or ``model_slug`` equals the spec, the
    replay slug in it, or the model name its answers report; ``explicit`` pairs take precedence.

    Raises
    ------
    CompareError
        If a spec matches several published models.
    """
    pairs = dict(explicit or {})
    for spec in sorted(set(ours["model"]) - set(pairs)):
        names = _names_of(spec, ours)
        hits = {
            str(row.model)
            for row in published_models.itertuples()
            if str(row.model) in names or str(row.model_slug) in names
        }
        if len(hits) > 1:
            raise CompareError(
                f"{spec} matches several published models ({', '.join(sorted(hits))}); "
                "say which with --model-map OURS=PUBLISHED"
            )
        if hits:
            pairs[spec] = hits.pop()
    return pairs


def _published(path: Path, fmt: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = load_published_cells(path, fmt=fmt)  # type: ignore[arg-type]
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    slug = raw["model_slug"] if "model_slug" in raw.columns else raw["model"]
    models = pd.DataFrame({"model": raw["model"], "model_slug": slug}).drop_duplicates()
    has_judge = "judge_effect" in raw.columns
    cells["value"] = cells["judge_effect"] if has_judge else cells["estimated"]
    excerpt = raw["err_excerpt"] if "err_excerpt" in raw.columns else pd.Series("", index=raw.index)
    notes = dict(zip(zip(raw["scenario_id"], raw["model"], strict=True), excerpt, strict=True))
    cells["err_excerpt"] = [
        notes.get((s, m), "") for s, m in zip(cells["scenario_id"], cells["model"], strict=True)
    ]
    return cells, models.reset_index(drop=True)


def _same(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-12


def _fmt(value: float) -> str:
    return "none" if math.isnan(value) else f"{value:.6g}"


def _reason(row: Mapping[str, Any], rtol: float) -> tuple[str, str]:
    """The first reason that explains a disagreeing cell, and its detail."""
    if all(row[f"agree_{k}"] in (True, None) for k in LAYERS):
        return "", ""
    if row["ours_status"] == "missing_package" and row["published_L2b"] == 1:
        package = str(row["missing_packages"]).split(",")[0] or "?"
        return f"missing package {package}", "the published environment had it; ours does not"
    if row["missing_packages"] and row["ours_L2b"] == 0:
        package = str(row["missing_packages"]).split(",")[0]
        return f"missing package {package}", (
            f"the code needs {row['missing_packages']}, not installed here; ours "
            f"{row['ours_status']}"
        )
    if not row["agree_L2a"]:
        return "code differs", f"ours {row['ours_status']}, published L2a={row['published_L2a']}"
    if not row["agree_L2b"]:
        theirs = str(row["published_err"])[:160] or f"published L2b={row['published_L2b']}"
        failed = row["ours_L2b"] == 0 and row["stderr"]
        ours = f"ours {row['ours_status']}" + (f" ({row['stderr']})" if failed else "")
        return "execution differs", f"{ours}; published: {theirs}"
    if row["agree_value"] is False:
        return "extraction differs", (
            f"ours {_fmt(row['ours_value'])}, published judge {_fmt(row['published_value'])}"
        )
    canon_a, canon_b = row["ours_canonical"], row["published_canonical"]
    if not math.isnan(canon_b) and abs(canon_a - canon_b) > CANONICAL_ATOL:
        return "canonical differs", f"ours {canon_a:.6g}, published {canon_b:.6g}"
    return "scoring differs", (
        f"value {_fmt(row['ours_value'])}: ours L2b+={row['ours_L2b_plus']}, "
        f"published L2b+={row['published_L2b_plus']}"
    )


def _flag(value: float) -> float:
    return -1.0 if math.isnan(value) else float(value)


def _agreements(row: dict[str, Any], rtol: float) -> dict[str, Any]:
    both_ran = row["ours_L2b"] == 1 and row["published_L2b"] == 1
    return {
        "agree_L2a": row["ours_L2a"] == row["published_L2a"],
        "agree_L2b": row["ours_L2b"] == row["published_L2b"],
        "agree_value": _same(row["ours_value"], row["published_value"], rtol) if both_ran else None,
        "agree_L2b_plus": _flag(row["ours_L2b_plus"]) == _flag(row["published_L2b_plus"]),
    }


def _cell_row(ours: Any, theirs: Any, published_model: str, rtol: float) -> dict[str, Any]:
    row: dict[str, Any] = {
        "scenario_id": ours.scenario_id,
        "method": ours.method,
        "model": ours.model,
        "published_model": published_model,
        "ours_L2a": int(ours.L2a),
        "published_L2a": int(theirs.L2a),
        "ours_L2b": int(ours.L2b),
        "published_L2b": int(theirs.L2b),
        "ours_value": float(ours.estimated),
        "published_value": float(theirs.value),
        "ours_L2b_plus": float(ours.L2b_plus),
        "published_L2b_plus": float(theirs.L2b_plus),
        "ours_canonical": float(ours.baseline_effect),
        "published_canonical": float(theirs.baseline_effect),
        "ours_status": str(ours.status),
        "missing_packages": str(ours.missing_packages),
        "installed_only": ours.status != "missing_package" and not ours.missing_packages,
        "published_err": str(theirs.err_excerpt),
        "stderr": str(ours.stderr_tail),
    }
    row.update(_agreements(row, rtol))
    row["reason"], row["detail"] = _reason(row, rtol)
    return row


def compare_frames(
    ours: pd.DataFrame,
    published: pd.DataFrame,
    model_map: Mapping[str, str],
    *,
    value_rtol: float = 0.01,
) -> Comparison:
    """Compare our cells (with the extra columns of a run) with normalised published cells."""
    theirs = {
        (scenario_number(str(r.scenario_id)), str(r.model)): r
        for r in published.itertuples(index=False)
    }
    rows, unmatched_ours, used = [], [], set()
    for cell in ours.itertuples(index=False):
        key = (scenario_number(str(cell.scenario_id)), model_map.get(str(cell.model), ""))
        match = theirs.get(key)
        if match is None:
            unmatched_ours.append((str(cell.scenario_id), str(cell.model)))
            continue
        used.add(key)
        rows.append(_cell_row(cell, match, key[1], value_rtol))
    mapped = set(model_map.values())
    unmatched_published = [
        (str(r.scenario_id), str(r.model))
        for k, r in theirs.items()
        if k not in used and str(r.model) in mapped
    ]
    table = pd.DataFrame(rows, columns=[*CELL_TABLE_COLUMNS, "published_err", "stderr"])
    table = table.loc[:, list(CELL_TABLE_COLUMNS)].reset_index(drop=True)
    others = sorted({str(m) for m in published["model"]} - mapped)
    return Comparison(table, dict(model_map), unmatched_ours, sorted(unmatched_published), others)


def compare_run(
    run_dir: Path,
    cells_csv: Path,
    *,
    fmt: str = "causalverify-2026",
    language: Language = "r",
    model_map: Mapping[str, str] | None = None,
    value_rtol: float = 0.01,
) -> Comparison:
    """Compare a stored run with a published per-cell table.

    Parameters
    ----------
    run_dir
        The run folder (``run.sqlite``), e.g. a replay of the published answers.
    cells_csv
        The published per-cell table (``l2b_plus_scores_canonical_judge_v2.csv`` layout).
    fmt
        Its format; only ``"causalverify-2026"`` exists.
    language
        Which of our cells to compare (the release ran R only); sample 0 only.
    model_map
        Explicit ``our spec -> published model`` pairs; others are matched by name.
    value_rtol
        Relative tolerance under which two extracted values count as equal.

    Returns
    -------
    Comparison
        Per-cell table with agreement flags and reasons, and the unmatched cells.

    Raises
    ------
    StoreError, CellsFormatError, CompareError
        If the run or the table cannot be read, or no model of the run matches the table.
    """
    with RunStore.open(Path(run_dir)) as store:
        records = list(store.iter_cells())
        environment = store.run_meta().environment or _live_environment()
    installed = set(environment.get("r_packages", {}) if language == "r" else {})
    installed |= set(environment.get("python_packages", {}) if language == "python" else {})
    ours = _our_frame(records, language, installed)
    published, models = _published(Path(cells_csv), fmt)
    pairs = match_models(ours, models, model_map)
    if not pairs:
        raise CompareError(
            f"no model of the run ({', '.join(sorted(set(ours['model'])))}) matches a model of "
            f"{cells_csv} ({', '.join(sorted(set(models['model'])))}); use --model-map OURS=PUBLISHED"
        )
    return compare_frames(ours, published, pairs, value_rtol=value_rtol)


def _live_environment() -> dict[str, Any]:
    return environment_manifest().model_dump(mode="json")


def _rates(group: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {"cells": len(group)}
    for layer in LAYERS:
        flags = group[f"agree_{layer}"].dropna().astype(bool)
        out[layer] = {
            "agree": int(flags.sum()),
            "n": len(flags),
            "rate": float(flags.mean()) if len(flags) else None,
        }
    for side in ("ours", "published"):
        plus = group[f"{side}_L2b_plus"].dropna()
        out[f"{side}_L2b_rate"] = float(group[f"{side}_L2b"].mean()) if len(group) else None
        out[f"{side}_L2b_plus_rate"] = float(plus.mean()) if len(plus) else None
    return out


def _figures(cells: pd.DataFrame) -> dict[str, Any]:
    return {
        "overall": _rates(cells),
        "by_family": {str(k): _rates(g) for k, g in cells.groupby("method", sort=True)},
        "by_model": {str(k): _rates(g) for k, g in cells.groupby("published_model", sort=True)},
    }


def summarize(comparison: Comparison) -> dict[str, Any]:
    """Agreement figures overall, by family and by model, for all cells and installed-only cells.

    Returns
    -------
    dict
        JSON-ready: ``all`` and ``installed_only`` figures, ``reasons`` (counts), the
        ``disagreements`` (one record per cell), ``model_map`` and the unmatched cells.
    """
    cells = comparison.cells
    wrong = comparison.disagreements
    return {
        "model_map": comparison.model_map,
        "matched_cells": len(cells),
        "all": _figures(cells),
        "installed_only": _figures(cells.loc[cells["installed_only"].astype(bool)]),
        "reasons": {
            str(k): int(v)
            for k, v in pd.Series(wrong["reason"]).value_counts().sort_index().items()
        },
        "disagreements": _records(wrong),
        "unmatched_ours": [list(k) for k in comparison.unmatched_ours],
        "unmatched_published": [list(k) for k in comparison.unmatched_published],
        "published_models_not_compared": comparison.published_models_not_compared,
    }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for record in frame.to_dict(orient="records"):
        out.append({str(k): _plain(v) for k, v in record.items()})
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(float(value)) else float(value)
    return value


def cells_csv_bytes(comparison: Comparison) -> bytes:
    """The per-cell comparison table as CSV bytes (floats at repr precision, LF line ends)."""
    text: str = comparison.cells.to_csv(index=False, lineterminator="\n", float_format=None)
    return text.encode("utf-8")


def iter_groups(summary: Mapping[str, Any], scope: str) -> Iterable[tuple[str, dict[str, Any]]]:
    """``(label, rates)`` rows of one scope (``all`` / ``installed_only``) for a table."""
    figures = summary[scope]
    yield "overall", figures["overall"]
    for name, rates in figures["by_family"].items():
        yield f"family {name}", rates
    for name, rates in figures["by_model"].items():
        yield f"model {name}", rates

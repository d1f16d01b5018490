"""Undecided extractions in scoring, the per-cell table, the analyses and the audit; the
declaration's parsing and checks; what a reference agent declares."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from causalverify.analysis import analyze_cells
from causalverify.models import CellContext, ModelOptions, get_provider
from causalverify.records import (
    CellRecord,
    Declaration,
    ExtractionRecord,
    Message,
    ModelResponse,
    ScenarioBrief,
    Summary,
)
from causalverify.reference import write_declaration
from causalverify.release._records import read_records, write_records
from causalverify.report._render import render_markdown
from causalverify.runner.declare import (
    declaration_request,
    needs_declaration,
    parse_declaration,
    printed_at,
)
from causalverify.scoring import rescore
from causalverify.scoring.audit import cell_id, sample_sheet
from causalverify.store import cells_frame
from test_scoring import cell

#: two labelled effects the evidence cannot separate
TWO = "spec 1 effect: 0.52\nspec 2 effect: 0.31\n"


def _declared(token: str | None, *, accepted: bool) -> Declaration:
    return Declaration(
        request=Message(role="user", content="which number?"),
        request_sha256="0" * 64,
        response=ModelResponse(content=f"ESTIMATE: {token}"),
        token=token,
        accepted=accepted,
    )


def test_the_fixture_is_undecided() -> None:
    extraction = rescore(cell(stdout=TWO, canonical=0.7)).extraction
    assert extraction is not None and extraction.undecided and extraction.value is None
    assert [c.value for c in extraction.candidates] == [0.52, 0.31]


@pytest.mark.parametrize(
    ("canonical", "status", "plus", "upper", "estimate"),
    [
        (0.4, "correct", True, None, 0.52),  # both within 50%: scored on the first
        (2.0, "wrong", False, None, 0.52),  # both far: scored on the first
        (0.7, "undecided", False, True, None),  # 0.52 passes, 0.31 fails: bounds only
    ],
)
def test_an_undecided_cell_is_scored_only_when_its_candidates_agree(
    canonical: float, status: str, plus: bool, upper: bool | None, estimate: float | None
) -> None:
    scored = rescore(cell(stdout=TWO, canonical=canonical))
    assert scored.status == status
    assert scored.scores is not None and scored.scores.L2b_plus is plus
    assert scored.scores.L2b_plus_upper is upper and scored.scores.estimate == estimate
    assert scored.extraction is not None
    said = "all pass" if status == "correct" else "all fail" if status == "wrong" else "1 of 2"
    assert said in scored.extraction.rationale


def test_the_judge_resolves_an_undecided_cell_and_decides_nothing_else() -> None:
    judge = ExtractionRecord(method="judge", value=0.31, rule="judge")
    resolved = rescore(cell(stdout=TWO, canonical=0.7, judge=judge))
    assert resolved.status == "wrong" and resolved.scores is not None
    assert resolved.scores.estimate == 0.31 and resolved.scores.L2b_plus_upper is None
    assert resolved.extraction is not None and "judge" in resolved.extraction.rationale
    # a decided cell keeps the deterministic reading whatever the judge says
    decided = rescore(cell(stdout="ESTIMATE: 0.52\n", canonical=0.7, judge=judge))
    assert decided.status == "correct" and decided.scores is not None
    assert decided.scores.estimate == 0.52


def test_an_accepted_declaration_decides_and_a_rejected_one_does_not() -> None:
    accepted = rescore(
        cell(stdout=TWO, canonical=0.7, declaration=_declared("0.31", accepted=True))
    )
    assert accepted.extraction is not None and accepted.extraction.rule == "declared"
    assert accepted.status == "wrong" and accepted.scores is not None
    assert accepted.scores.estimate == 0.31
    rejected = rescore(
        cell(stdout=TWO, canonical=0.7, declaration=_declared("0.52", accepted=False))
    )
    assert rejected.status == "undecided"


def test_rates_carry_bounds_and_the_table_flags_undecided_cells() -> None:
    records = [
        rescore(cell(stdout=TWO, canonical=0.7)),
        rescore(cell(stdout="ESTIMATE: 0.7\n", canonical=0.7)).model_copy(
            update={"key": cell().key.model_copy(update={"scenario_id": "s002"})}
        ),
    ]
    frame = cells_frame(records)
    assert list(frame["undecided"]) == [1, 0]
    assert frame["L2b_plus_upper"].tolist()[0] == 1.0 and math.isnan(frame["L2b_plus_upper"][1])
    summary = analyze_cells(frame, n_resamples=50)
    plus = summary["rates_detail"]["m"]["L2b_plus"]
    assert (plus["k"], plus["k_upper"], plus["undecided"]) == (1, 2, 1)
    assert plus["rate"] == 0.5 and plus["rate_upper"] == 1.0
    assert summary["undecided"] == {"cells": 1, "by_unit": {"m": 1}}
    assert summary["declared"] == {
        "asked": 0,
        "accepted": 0,
        "by_unit": {"m": {"asked": 0, "accepted": 0}},
    }
    text = render_markdown(Summary.of(summary), "t")
    assert "Undecided: 1 cells (m 1)" in text and "| 1–2/2 |" in text and "Declared" not in text
    asked = records[1].model_copy(update={"declaration": _declared("0.7", accepted=True)})
    again = analyze_cells(cells_frame([records[0], asked]), n_resamples=50)
    assert again["declared"]["by_unit"] == {"m": {"asked": 1, "accepted": 1}}
    assert "accepted/asked: m 1/1" in render_markdown(Summary.of(again), "t")


def test_the_audit_draws_undecided_cells_first() -> None:
    undecided = [
        rescore(cell(stdout=TWO, canonical=0.7, key=cell().key.model_copy(update={"sample": i})))
        for i in range(3)
    ]
    decided = [
        rescore(
            cell(stdout="ESTIMATE: 0.7\n", key=cell().key.model_copy(update={"sample": 10 + i}))
        )
        for i in range(20)
    ]
    for seed in range(5):
        sheet = sample_sheet([*decided, *undecided], n=4, seed=seed)
        assert {cell_id(r) for r in undecided} <= set(sheet["cell_id"])
        assert len(sheet) == 4


def test_parse_and_check_a_declaration() -> None:
    assert parse_declaration("The estimate is the second.\nESTIMATE: 0.4169") == "0.4169"
    assert parse_declaration("**ESTIMATE:** `\u22120.25`.") == "-0.25"
    assert parse_declaration("ESTIMATE: 12.5%") == "12.5%"
    assert parse_declaration("I printed no estimate.") is None
    stdout = "bandwidth used: 0.30\nATT: \u22120.2513 (se 0.04)\nshare: 12.5%\n"
    assert printed_at(stdout, "-0.2513") == 2
    assert printed_at(stdout, "0.2513") is None  # the printed number is negative
    assert printed_at(stdout, "-0.251") is None  # not at that precision
    assert printed_at(stdout, "0.3") is None and printed_at(stdout, "0.30") == 1
    assert printed_at(stdout, "12.5%") == 3 and printed_at(stdout, "12.5") is None


def test_which_cells_are_asked_and_what_the_request_shows() -> None:
    assert needs_declaration(rescore(cell(stdout="Estimated effect: 0.52\n")))
    assert needs_declaration(rescore(cell(stdout=TWO)))
    assert not needs_declaration(rescore(cell(stdout="ESTIMATE: 0.52\n")))
    failed = cell(stdout="Estimated effect: 0.52\n").model_copy(
        update={"execution": cell().execution.model_copy(update={"status": "error"})}  # type: ignore[union-attr]
    )
    assert not needs_declaration(rescore(failed))
    asked = rescore(cell(stdout=TWO, canonical=0.7))
    assert not needs_declaration(
        asked.model_copy(update={"declaration": _declared("1", accepted=False)})
    )
    text = declaration_request(asked).content
    assert TWO.strip() in text and "ESTIMATE: <number>" in text
    assert "0.7" not in text and "correct" not in text.lower() and "wrong" not in text.lower()


def _brief() -> ScenarioBrief:
    return ScenarioBrief(id="s001", family="did", data_file="data/s001.csv", facts={})


def test_reference_agents_declare_their_printed_number_or_none() -> None:
    assert write_declaration("x\n```\nEstimated effect: -0.25\nESTIMATE: 9\n```\nWhich?") == (
        "ESTIMATE: -0.25"
    )
    assert write_declaration("```\nthe effect is 0.125 (se 0.01)\n```") == "ESTIMATE: 0.01"
    silent = write_declaration("```\nModel estimated; the fitted object is kept in `fit`.\n```")
    assert parse_declaration(silent) is None
    agent = get_provider("reference/naive")
    context = CellContext(scenario=_brief(), language="r", protocol="default", request="declare")
    request = Message(role="user", content="Its stdout:\n```\nEstimated effect: 1.5\n```\nWhich?")
    answer = agent.answer([request], options=ModelOptions(), context=context)  # type: ignore[union-attr]
    assert answer.content == "ESTIMATE: 1.5"


def test_records_without_a_declaration_load_as_before() -> None:
    data = cell().model_dump(mode="json")
    data.pop("declaration")
    assert CellRecord.model_validate(data).declaration is None


def test_a_release_keeps_the_declaration(tmp_path: Path) -> None:
    record = rescore(cell(stdout=TWO, canonical=0.7, declaration=_declared("0.31", accepted=True)))
    write_records(tmp_path, [record], limits=None)
    assert read_records(tmp_path) == [record]

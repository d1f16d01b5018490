"""Experiment A: corpus, loader validation, scorers, consensus, kappa and McNemar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from causalverify.errors import ProviderError, SuiteError
from causalverify.models import ModelAccess, ModelOptions, ask, get_provider
from causalverify.papers.heuristic import answer
from causalverify.papers.labels import consensus, parse_vote
from causalverify.papers.prompts import judge_messages, label_messages, paper_messages
from causalverify.papers.records import (
    CORE_METHODS,
    TEXT_FIELDS,
    default_corpus_path,
    load_papers,
)
from causalverify.papers.run import default_factory
from causalverify.papers.scorers import (
    parse_judge_word,
    parse_structured,
    score_s1,
    score_s2,
    split_sections,
)
from causalverify.papers.stats import cohen_kappa, mcnemar_exact
from causalverify.records import Message
from causalverify.scenarios.checks import find_design_names

# ---------------------------------------------------------------- corpus


def test_shipped_corpus_validates_with_coverage() -> None:
    papers = load_papers()
    assert len(papers) >= 60
    methods = [p.reference.method for p in papers if p.reference is not None]
    for family in CORE_METHODS:
        assert methods.count(family) >= 10, family
    assert "OTHER" in methods
    assert len({p.id for p in papers}) == len(papers)


def test_shipped_corpus_text_never_names_the_design() -> None:
    for paper in load_papers():
        for name in (*TEXT_FIELDS, "title"):
            assert find_design_names(getattr(paper, name), modern=False) == [], (paper.id, name)


def _line(**changes: object) -> str:
    first = json.loads(default_corpus_path().read_text(encoding="utf-8").splitlines()[0])
    first.update(changes)
    return json.dumps({k: v for k, v in first.items() if v is not None})


def test_loader_rejects_design_names(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    text = "We compare states before and after, a difference-in-differences comparison of jobs."
    path.write_text(_line(data_description=text) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="names the design"):
        load_papers(path, min_papers=1, min_per_family=0)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"research_question": "Too short?"}, "line 1"),
        ({"year": 1700}, "line 1"),
        ({"doi": "not-a-doi"}, "line 1"),
        ({"unexpected": 1}, "line 1"),
        (
            {"reference": {"method": "MATCHING", "direction": "positive", "basis": "x" * 20}},
            "line 1",
        ),
    ],
)
def test_loader_rejects_schema_violations(
    tmp_path: Path, changes: dict[str, object], match: str
) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(_line(**changes) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=match):
        load_papers(path, min_papers=1, min_per_family=0)


def test_loader_rejects_missing_field_duplicates_and_thin_coverage(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(_line(journal=None) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="journal"):
        load_papers(path, min_papers=1, min_per_family=0)
    path.write_text(_line() + "\n" + _line() + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="duplicate id"):
        load_papers(path, min_papers=1, min_per_family=0)
    path.write_text(_line() + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="at least 60"):
        load_papers(path)


# ---------------------------------------------------------------- statistics


def test_cohen_kappa_known_answer() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    # systematic disagreement on a balanced binary label: kappa -1
    assert cohen_kappa(["y", "n"] * 5, ["n", "y"] * 5) == pytest.approx(-1.0)


def test_cohen_kappa_degenerate_and_errors() -> None:
    assert cohen_kappa([], []) != cohen_kappa([], [])  # nan
    assert cohen_kappa(["x"] * 4, ["x"] * 4) != cohen_kappa(["x"] * 4, ["x"] * 4)  # nan
    with pytest.raises(ValueError):
        cohen_kappa(["a"], ["a", "b"])


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(0, 0, 1.0), (0, 10, 2 / 1024), (4, 0, 0.125), (2, 4, 44 / 64), (3, 3, 1.0), (1, 7, 18 / 256)],
)
def test_mcnemar_exact_known_answers(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p)
    assert mcnemar_exact(c, b) == pytest.approx(p)


# ---------------------------------------------------------------- consensus


@pytest.mark.parametrize(
    ("votes", "label", "level"),
    [
        (["DID"] * 4, "DID", "4/4"),
        (["IV", "IV", "IV", "RDD"], "IV", "3/4"),
        (["IV", "IV", "RDD", "DID"], "IV", "2-1-1"),
        (["IV", "IV", "RDD", None], "IV", "2-1-1"),
        (["IV", "IV", "RDD", "RDD"], None, "2-2"),
        (["IV", "RDD", "DID", "OTHER"], None, "1-1-1-1"),
        ([None, None, None, None], None, "1-1-1-1"),
        (["IV", "IV", "IV", None], "IV", "3/4"),
    ],
)
def test_consensus_rules(votes: list[str | None], label: str | None, level: str) -> None:
    result = consensus(votes)
    assert (result.label, result.level) == (label, level)


def test_parse_vote_is_robust() -> None:
    assert parse_vote('{"method_family": "EVENT_STUDY", "direction": "Negative"}').method == (
        "EVENT_STUDY"
    )
    fenced = "Sure:\n```json\n{'method_family': 'event study', 'direction': 'positive'}\n```"
    assert (parse_vote(fenced).method, parse_vote(fenced).direction) == ("EVENT_STUDY", "positive")
    assert parse_vote("it is an IV paper").method is None
    assert parse_vote('{"method_family": "MATCHING", "direction": "up"}').direction is None


# ---------------------------------------------------------------- scorers

ANSWER = """## 1. Identification Strategy
An instrumental variables design; the instrument shifts schooling.

## 6. Expected Results
A positive effect: schooling should increase earnings.

## 7. Validity Checklist
- difference-in-differences placebo on cohorts; check parallel trends; lower and decrease bounds
{"method_family": "IV", "direction": "negative"}
"""


def test_scorers_read_different_parts_of_an_answer() -> None:
    s2 = score_s2(ANSWER)
    assert (s2.method, s2.direction) == ("IV", "positive")
    s1 = score_s1(ANSWER)
    assert (s1.method, s1.direction) == ("DID", "negative")  # the checklist dominates the tail
    s4 = parse_structured(ANSWER)
    assert (s4.method, s4.direction) == ("IV", "negative")
    assert "6. expected results" in split_sections(ANSWER)
    assert parse_structured("no json here").method is None
    assert score_s2("no headings at all, a positive effect").direction is None


def test_judge_word_parsing() -> None:
    assert parse_judge_word("RDD", "method") == "RDD"
    assert parse_judge_word("Answer: event_study.", "method") == "EVENT_STUDY"
    assert parse_judge_word("Negative.", "direction") == "negative"
    assert parse_judge_word("I cannot tell", "direction") is None
    assert parse_judge_word(None, "method") is None


# ---------------------------------------------------------------- offline reference model


def test_reference_agents_answer_paper_prompts() -> None:
    paper = load_papers()[0]
    agent = default_factory(ModelAccess())("reference/textbook")
    options = ModelOptions()
    text = ask(agent, paper_messages(paper), options=options).content or ""
    headings = [h for h in split_sections(text)]
    assert len(headings) == 7 and headings[0].startswith("1. identification")
    assert parse_structured(text).method is not None
    label = ask(agent, label_messages(paper), options=options).content
    assert parse_vote(label).method is not None
    rid = ask(agent, paper_messages(paper, arm="rid"), options=options).content or ""
    assert "## 3. Falsification Gate" in rid
    word = ask(agent, judge_messages(text, "method"), options=options).content
    assert word == score_s2(text).method
    with pytest.raises(ProviderError, match="Experiment A prompts only"):
        ask(agent, [Message(role="user", content="hello")], options=options)
    # the Experiment B agent of the same name needs a cell and is not asked about papers
    with pytest.raises(ProviderError, match="cell context"):
        ask(get_provider("reference/textbook"), paper_messages(paper), options=options)


def test_heuristic_is_deterministic_and_agents_differ() -> None:
    paper = load_papers()[5]
    messages = paper_messages(paper)
    assert answer("textbook", messages) == answer("textbook", messages)
    assert parse_structured(answer("mute", messages) or "").method is None
    textbook = parse_structured(answer("textbook", messages) or "")
    wrong = parse_structured(answer("wrong-term", messages) or "")
    assert textbook.method == wrong.method and textbook.direction != wrong.direction
    assert answer("textbook", [Message(role="system", content="other")]) is None

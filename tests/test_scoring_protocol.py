"""The score keeps the prompt's promises, and says what it did, from the command line.

One model behind a loopback OpenAI-compatible server answers the smoke suite in R and Python,
reference-style: the event study with a cumulative abnormal return (11 times the per-day
effect), labelled as cumulative in R and printed under an unlabelled heading in Python; the
Python DID answer with a second code block. ``causalverify run --mode repair`` executes them in
the real sandbox (R too), ``report`` writes the report, and the cell pages are opened in a
headless browser. The model has no price.

- The prompt accepts a cumulative figure "if it is labelled as cumulative": the unlabelled one is
  a wrong per-day figure, the labelled one passes, and each cell's record and page say which
  conversion applied (or was refused).
- An answer with several code blocks is run and scored on its first: the record says which block
  ran and how many there were, and flags the protocol violation; the report counts them.
- An unpriced model's cost says ``unpriced`` at the end of ``run`` and in the repair table's cost
  per success (never ``$0.0000``), and at the end of ``papers run`` (Experiment A, without the
  sandbox).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.papers.records import default_corpus_path
from causalverify.reference import write_response
from causalverify.report.explorer import cell_address
from causalverify.scenarios import Scenario, load_suite
from causalverify.store import CellRecord, RunStore
from fake_openai import Behaviour, FakeOpenAIServer, Reply
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite, with_marks

ENV = {"OPENAI_API_KEY": "sk-test", "CAUSALVERIFY_OPENAI_BASE_URL": ""}
LABEL = "Cumulative abnormal return over event days 0 to +10:"
#: the same script's heading without the word that says what the figure is
UNLABELLED = "Event-study estimate over event days 0 to +10:"
EXTRA_BLOCK = "\n```python\nprint('a second script that never runs')\n```\n"
CHROMIUM = shutil.which("chromium")


def _responder(scenarios: list[Scenario]) -> Callable[[dict[str, Any]], Behaviour]:
    def respond(request: dict[str, Any]) -> Behaviour:
        text = " ".join(m["content"] for m in request["messages"])
        s = next(s for s in scenarios if s.title in text)
        language = "python" if "## 2. Python Code" in request["messages"][0]["content"] else "r"
        agent = "cumulative" if s.family == "event_study" else "textbook"
        answer = write_response(agent, s, language=language, protocol="default")
        if s.family == "event_study" and language == "python":
            assert LABEL in answer
            answer = answer.replace(LABEL, UNLABELLED)
        if s.family == "did" and language == "python":
            answer += EXTRA_BLOCK
        return Reply(content=answer, prompt_tokens=900, completion_tokens=400)

    return respond


@pytest.fixture(scope="module")
def crafted_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The run folder (with its report) and what ``run`` printed."""
    suite = smoke_suite(shared_root(tmp_path_factory))
    tmp = tmp_path_factory.mktemp("protocol")
    out = tmp / "run"
    with FakeOpenAIServer(responder=_responder(load_suite(suite).scenarios)) as server:
        args = ["run", "--suite", str(suite), "--models", "openai/crafted", "--mode", "repair"]
        args += ["--max-turns", "2", "--base-url", server.url, "--out", str(out)]
        args += ["--cache", str(tmp / "cache.sqlite"), "--workers", "2", "--quiet"]
        result = CliRunner().invoke(main, args, env=ENV)
    assert result.exit_code == 0, result.output
    report = CliRunner().invoke(main, ["report", str(out), "--resamples", "50"], env=ENV)
    assert report.exit_code == 0, report.output
    return out, result.output


def _cells(run: Path) -> dict[tuple[str, str], CellRecord]:
    with RunStore.open(run) as store:
        return {(r.family, r.key.language): r for r in store.iter_cells()}


@with_marks(needs_r_and_sandbox)
def test_an_unlabelled_cumulative_figure_fails_and_a_labelled_one_passes(
    crafted_run: tuple[Path, str],
) -> None:
    run, _ = crafted_run
    cells = _cells(run)
    labelled, unlabelled = cells[("event_study", "r")], cells[("event_study", "python")]
    assert labelled.scores is not None and unlabelled.scores is not None
    # the same number, 11 times the per-day effect (R and Python fit the same model)
    assert unlabelled.scores.estimate == pytest.approx(labelled.scores.estimate, rel=1e-6)
    assert (labelled.status, unlabelled.status) == ("correct", "wrong")
    assert labelled.scores.matched_conversion == "cumulative_0_10"
    assert unlabelled.scores.matched_conversion == "per_day"
    assert unlabelled.scores.rel_error == pytest.approx(10.0, rel=0.05)
    [note] = labelled.scores.conversions
    assert note.startswith("scale cumulative_0_10:") and LABEL.lower() in note
    [refused] = unlabelled.scores.conversions
    assert refused.startswith("not converted:") and "cumulative_0_10" in refused
    # the other cells convert nothing
    assert all(not r.scores or not r.scores.conversions for k, r in cells.items()
               if k[0] != "event_study")  # fmt: skip
    # rescoring the stored run is byte-for-byte the same verdict
    scored = CliRunner().invoke(main, ["score", str(run), "--json"], env=ENV)
    assert scored.exit_code == 0, scored.output
    again = _cells(run)
    assert again[("event_study", "python")].status == "wrong"
    assert again[("event_study", "r")].scores == labelled.scores


@with_marks(needs_r_and_sandbox)
def test_several_code_blocks_are_recorded_flagged_and_counted(
    crafted_run: tuple[Path, str],
) -> None:
    run, _ = crafted_run
    cells = _cells(run)
    two = cells[("did", "python")]
    assert two.code is not None and two.code.code is not None
    assert (two.code.blocks, two.code.several_blocks) == (2, True)
    assert "never runs" not in two.code.code and two.status == "correct"
    one = cells[("did", "r")]
    assert one.code is not None and (one.code.blocks, one.code.several_blocks) == (1, False)
    summary = json.loads((run / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["several_blocks"] == {"cells": 1, "by_unit": {"openai/crafted": 1}}
    index = (run / "report" / "leaderboard.md").read_text(encoding="utf-8")
    assert "Several code blocks: 1 cells (openai/crafted 1) answered with more than one" in index


@with_marks(needs_r_and_sandbox)
def test_an_unpriced_model_says_so_at_the_end_of_run_and_in_the_repair_table(
    crafted_run: tuple[Path, str],
) -> None:
    run, printed = crafted_run
    assert "$0.0000" not in printed
    assert "unpriced (openai/crafted: no known price" in printed
    index = (run / "report" / "leaderboard.md").read_text(encoding="utf-8")
    [row] = [
        line for line in index.splitlines() if line.startswith("| openai/crafted") and "→" in line
    ]
    assert "$0.0000" not in row and "| unpriced |" in row
    summary = json.loads((run / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["repair"]["openai/crafted"]["unpriced"] is True


@pytest.fixture
def page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=args
        )
        try:
            yield context.new_page()
        finally:
            context.close()


@with_marks(needs_r_and_sandbox)
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_the_cell_page_shows_the_conversion_and_the_block_that_ran(
    crafted_run: tuple[Path, str], page: Any
) -> None:
    run, _ = crafted_run
    cells = _cells(run)
    index = (run / "report" / "index.html").resolve().as_uri()
    for key, first in ((("event_study", "r"), "scale cumulative_0_10:"),
                       (("event_study", "python"), "not converted:")):  # fmt: skip
        page.goto(index + "#" + cell_address(cells[key].key))
        page.wait_for_selector("#cv-cell[data-cell]")
        items = page.locator("#cv-conversions li").all_inner_texts()
        assert len(items) == 1 and items[0].startswith(first), items
    page.goto(index + "#" + cell_address(cells[("did", "python")].key))
    page.wait_for_selector("#cv-blocks")
    said = page.inner_text("#cv-blocks")
    assert said.startswith("Code that ran (fenced block 1 of the answer, the first of its 2 blocks")
    assert "the prompt asks for exactly one" in said
    page.goto(index + "#" + cell_address(cells[("did", "r")].key))
    page.wait_for_selector("#cv-cell[data-cell]")
    assert page.locator("#cv-blocks").count() == 0 and page.locator("#cv-conversions").count() == 0
    assert "its only block in the requested language" in page.inner_text("#cv-cell")


def test_papers_run_says_unpriced_for_a_model_without_a_price(tmp_path: Path) -> None:
    papers = default_corpus_path().read_text(encoding="utf-8").splitlines()[:2]
    corpus = tmp_path / "two.jsonl"
    corpus.write_text("\n".join(papers) + "\n", encoding="utf-8")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"priced": {"input": 1.0, "output": 2.0}}}))
    outputs = []
    with FakeOpenAIServer(responder=lambda request: Reply(content="A plan.")) as server:
        for model in ("openai/plan-model", "openai/priced"):
            args = ["papers", "run", str(tmp_path / model.split("/")[1]), "--models", model]
            args += ["--corpus", str(corpus), "--base-url", server.url, "--quiet"]
            args += ["--cache", str(tmp_path / "cache.sqlite"), "--prices", str(prices)]
            result = CliRunner().invoke(main, args, env=ENV)
            assert result.exit_code == 0, result.output
            outputs.append(result.output)
    unpriced, priced = outputs
    assert "2 asked (2 API requests, unpriced (openai/plan-model: no known price" in unpriced
    assert "$0.0000" not in unpriced
    assert "2 asked (2 API requests, $0.0001); " in priced

"""The report's cell explorer in a real browser (Debian's headless Chromium, driven by Playwright),
language invariance, and ``causalverify view``.

The run: the reference panel on the smoke suite in R and Python (64 cells, the session's shared
run). The browser opens the report from disk, as a newcomer would, and every request it makes is
recorded.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from causalverify.analysis import mcnemar_exact
from causalverify.cli import main
from causalverify.cli.view import serve
from causalverify.records import CellKey, CellRecord
from causalverify.report import write_report
from causalverify.report.explorer import cell_address
from causalverify.scoring import rescore
from causalverify.store import RunStore
from run_e2e_helpers import PanelRun

CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
]
needs_browser = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it)"
)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def run_dir(reference_panel: PanelRun) -> Path:
    """The session's run of the panel, with its report (``causalverify view`` looks beside it)."""
    out = reference_panel.config.out_dir
    write_report(out, out / "report", n_resamples=50)
    return out


@pytest.fixture(scope="module")
def records(reference_panel: PanelRun) -> list[CellRecord]:
    return list(reference_panel.records)


class Browser:
    """One headless Chromium page; every request and page error is recorded."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, index: Path, fragment: str = "") -> None:
        self.page.goto(index.resolve().as_uri() + fragment)

    def rows(self) -> list[list[str]]:
        return [
            [c.strip() for c in row.split("\t")]
            for row in self.page.locator("#cv-table tbody tr").all_inner_texts()
        ]


@pytest.fixture
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS
        )
        try:
            yield Browser(context.new_page())
        finally:
            context.close()


def _index(run_dir: Path) -> Path:
    return run_dir / "report" / "index.html"


@needs_browser
def test_filters_narrow_the_table_and_nothing_leaves_the_machine(
    run_dir: Path, records: list[CellRecord], browser: Browser
) -> None:
    browser.open(_index(run_dir))
    page = browser.page
    page.wait_for_selector("#cv-table tbody tr")
    assert page.inner_text("#cv-count") == f"{len(records)} of {len(records)} cells"
    page.select_option("#cv-f-model", "reference/mute")
    page.select_option("#cv-f-language", "python")
    rows = browser.rows()
    want = [r for r in records if r.key.model == "reference/mute" and r.key.language == "python"]
    assert len(rows) == len(want) == 4
    assert all(row[1] == "reference/mute" and row[2] == "python" for row in rows)
    assert all(row[6] == "no_estimate" for row in rows)
    page.click('#cv-table th[data-key="scenario"]')
    page.click('#cv-table th[data-key="scenario"]')  # descending
    assert [row[0] for row in browser.rows()] == sorted(
        (r.key.scenario_id for r in want), reverse=True
    )
    first = want[0].key.scenario_id
    page.fill("#cv-f-scenario", first)  # the scenario filter is in the address too
    assert f"scenario={first}" in page.evaluate("location.hash")
    address = page.evaluate("location.hash")
    browser.open(_index(run_dir), address)
    page.wait_for_selector("#cv-table tbody tr")
    assert [row[0] for row in browser.rows()] == [first]
    assert page.input_value("#cv-f-scenario") == first
    assert browser.errors == []
    assert browser.requests and all(url.startswith("file://") for url in browser.requests)


@needs_browser
def test_leaderboard_and_family_links_land_on_their_cells(
    run_dir: Path, records: list[CellRecord], browser: Browser
) -> None:
    browser.open(_index(run_dir))
    page = browser.page
    link = page.locator("#leaderboard tbody tr").first.locator("a").first
    unit = link.inner_text()
    link.click()
    page.wait_for_function("location.hash.indexOf('#cells?') === 0")
    assert page.evaluate("location.hash") == "#cells?unit=" + quote(unit, safe="")
    rows = browser.rows()
    assert rows and all(row[1] == unit for row in rows)
    assert len(rows) == sum(r.key.model == unit for r in records)
    # the family table (collapsed below): one unit's cells of one design
    page.click("#by_family summary")
    page.locator("#by_family tbody tr").first.locator("a").nth(1).click()
    page.wait_for_function("location.hash.indexOf('family=') > 0")
    hash_ = page.evaluate("location.hash")
    assert "family=" in hash_ and "unit=" in hash_
    rows = browser.rows()
    families = {row[4] for row in rows}
    assert len(families) == 1 and len({row[1] for row in rows}) == 1
    # a taxonomy count: exactly the cells it counts
    page.click("#taxonomy summary")
    first = page.locator("#taxonomy tbody tr").first
    count = first.locator("a").last
    expected = int(count.inner_text())
    count.click()
    page.wait_for_function("location.hash.indexOf('category=') > 0")
    assert page.inner_text("#cv-count").startswith(f"{expected} of ")
    assert browser.errors == []


@needs_browser
def test_a_cell_address_opens_the_cell_with_its_code_and_the_extracted_line(
    run_dir: Path, records: list[CellRecord], browser: Browser
) -> None:
    record = next(
        r for r in records if r.key.model == "reference/textbook" and r.key.language == "r"
    )
    assert record.extraction is not None and record.extraction.line is not None
    browser.open(_index(run_dir), "#" + cell_address(record.key))
    page = browser.page
    page.wait_for_selector("#cv-cell[data-cell]")
    assert page.get_attribute("#cv-cell", "data-cell") == cell_address(record.key)
    text = page.inner_text("#cv-cell")
    assert record.code is not None and record.code.code is not None
    assert record.code.code.splitlines()[0] in text
    marked = page.inner_text("#cv-extracted")
    assert record.execution is not None
    assert marked == record.execution.stdout.splitlines()[record.extraction.line - 1]
    assert "ESTIMATE" in marked
    # why a cell failed comes first, the prompt last and folded
    headings = page.locator("#cv-cell h3").all_inner_texts()
    order = [next(i for i, h in enumerate(headings) if h.startswith(w)) for w in ("stderr", "stdout", "Code that ran", "Response")]  # fmt: skip
    assert order == sorted(order), headings
    assert page.get_attribute("#cv-prompt", "open") is None
    assert page.evaluate("document.querySelector('#cv-cell').lastElementChild.id === 'cv-prompt'")
    page.click("#cv-prompt summary")
    page.wait_for_function("document.querySelector('#cv-cell').innerText.indexOf('[user]') >= 0")
    assert browser.errors == []
    assert all(url.startswith("file://") for url in browser.requests)


@needs_browser
def test_the_inference_layer_links_to_its_cells_and_shows_both_ses(
    run_dir: Path, records: list[CellRecord], browser: Browser
) -> None:
    """naive-se's wrong SEs from the inference table; a DID cell shows its reported SE beside
    the canonical clustered one, with the unclustered variant it matched and their ratio."""
    browser.open(_index(run_dir))
    page = browser.page
    row = page.locator("#inference tbody tr", has_text="reference/naive-se")
    row.locator("a").nth(6).click()  # L2b+, L2c, k/n, P(L2c | L2b+), matches, plausible, wrong
    page.wait_for_function("location.hash.indexOf('se_tier=wrong') > 0")
    rows = browser.rows()
    wrong = [r for r in records if r.key.model == "reference/naive-se" and r.scores
             and r.scores.se_tier == "wrong"]  # fmt: skip
    assert rows and len(rows) == len(wrong)
    assert all(r[1] == "reference/naive-se" and r[12] == "wrong" for r in rows)
    record = next(r for r in wrong if r.family == "did")
    assert record.inference is not None and record.scores is not None
    browser.open(_index(run_dir), "#" + cell_address(record.key))
    page.wait_for_selector("#cv-inference")
    header, values = page.locator("#cv-inference tr").all_inner_texts()
    assert "canonical SE (cr1)" in header
    cells = [c.strip() for c in values.split("\t")]
    assert cells[3:5] == ["wrong", record.scores.se_variant]
    canonical = record.inference.ses["cr1"]
    assert float(cells[1]) == pytest.approx(canonical, rel=1e-5)
    assert float(cells[2]) == pytest.approx(record.scores.se_ratio, rel=1e-5)
    assert "Canonical SE by variant" in page.inner_text("#cv-cell")
    assert browser.errors == []


def _fake(i: int, stdout: str = "ESTIMATE: 0.5\n") -> CellRecord:
    return CellRecord.model_validate(
        {
            "key": {
                "scenario_id": f"s{i // 8:05d}",
                "model": f"m{i % 4}",
                "language": "r" if i % 2 else "python",
                "sample": (i // 4) % 2,
            },
            "family": ("did", "iv", "rdd", "event_study")[i % 4],
            "difficulty": "easy",
            "beta": 1.0,
            "canonical": 0.5,
            "protocol": "default",
            "prompt": [{"role": "user", "content": f"prompt {i % 7}"}],
            "prompt_sha256": f"sha{i % 7}",
            "code": {"language": "python", "code": "print('ESTIMATE: 0.5')"},
            "execution": {
                "status": "ok",
                "exit_code": 0,
                "stdout": stdout,
                "stderr": "",
                "wall_seconds": 0.1,
                "cpu_seconds": 0.1,
                "sandboxed": True,
            },
            "extraction": {"method": "deterministic", "value": 0.5, "rule": "marker", "line": 1},
            "status": "correct",
        }
    )


@needs_browser
@pytest.mark.slow
def test_twenty_thousand_cells_and_hostile_output(tmp_path: Path, browser: Browser) -> None:
    hostile = '<script>window.PWNED = 1</script><img src=x onerror="window.PWNED = 2">\n'
    records = [_fake(i) for i in range(20_000)]
    records[7] = _fake(7, stdout=hostile + "ESTIMATE: 0.5\n")
    records = [rescore(r) for r in records]
    assert records[7].extraction is not None and records[7].extraction.line == 2
    with RunStore.open(tmp_path / "run", create=True) as store:
        store.put_cells(records)
    index = write_report(tmp_path / "run", tmp_path / "report", n_resamples=20)
    browser.open(index)
    page = browser.page
    page.wait_for_selector("#cv-table tbody tr")
    assert page.inner_text("#cv-count") == "20000 of 20000 cells"
    assert len(browser.rows()) == 100  # one page at a time
    page.select_option("#cv-f-model", "m3")
    page.select_option("#cv-f-language", "r")
    assert page.inner_text("#cv-count") == "5000 of 20000 cells"
    browser.open(index, "#" + cell_address(records[7].key))
    page.wait_for_selector("#cv-cell[data-cell]")
    assert hostile.strip() in page.inner_text("#cv-cell")  # shown as text
    assert page.evaluate("window.PWNED") is None
    assert page.locator("#cv-cell img").count() == 0
    assert all(url.startswith("file://") for url in browser.requests)


def test_language_invariance_pairs_r_and_python(run_dir: Path, records: list[CellRecord]) -> None:
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    inv = summary["language_invariance"]
    fragile = inv["reference/fragile"]
    assert fragile["pairs"] == 4
    by_key = {(r.key.model, r.key.scenario_id, r.key.language): r for r in records}
    for model, entry in inv.items():
        b = sum(
            bool(by_key[(model, s, "r")].scores.L2b_plus)  # type: ignore[union-attr]
            and not by_key[(model, s, "python")].scores.L2b_plus  # type: ignore[union-attr]
            for s in ("s001", "s002", "s003", "s004")
        )
        assert entry["L2b_plus"]["b_r_only"] == b, model
    text = (run_dir / "report" / "leaderboard.md").read_text()
    assert "Language invariance: R against Python on the same scenarios" in text
    assert mcnemar_exact(0, 0) is None
    assert mcnemar_exact(0, 6) == pytest.approx(2 * 0.5**6)
    assert mcnemar_exact(3, 3) == 1.0


def test_view_prints_the_report_and_serves_it_on_loopback(run_dir: Path) -> None:
    result = CliRunner().invoke(main, ["view", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert Path(result.output.strip()) == _index(run_dir).resolve()
    missing = CliRunner().invoke(main, ["view", str(run_dir / "report" / "explorer")])
    assert missing.exit_code != 0 and "causalverify report" in missing.output
    server = serve(_index(run_dir).parent, 0)
    import threading

    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/explorer/cells.js") as response:
            assert response.read().startswith(b"window.CV_INDEX=")
    finally:
        server.shutdown()
        server.server_close()


def test_cell_addresses_encode_every_part() -> None:
    key = CellKey(scenario_id="s001", model="openai/gpt 4o", language="r", sample=2)
    assert cell_address(key) == "cell/s001/openai%2Fgpt%204o/r/2"

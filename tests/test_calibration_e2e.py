"""End to end: elicit confidences on real runs, through the loopback OpenAI server and offline.

A real run (the smoke suite, R, in the sandbox) has one OpenAI-compatible model on loopback that
writes the textbook answer for two scenarios and the naive one for the other two. ``calibrate``
then asks it for confidences through the same server: answers come fenced, as percentages, as
prose, and once as a persistent server error. The test checks the stored rows, that a rerun makes
no new calls (and re-asks only the failed row), and that the report gains a calibration section.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.calibration import CalibrationConfig, calibrate_run, load_calibration
from causalverify.calibration.prompts import SYSTEM
from causalverify.cli import main
from causalverify.models import ModelAccess, ResponseCache, RetryPolicy, get_provider
from causalverify.models.base import Provider
from causalverify.reference import write_response
from causalverify.report import write_report
from causalverify.runner import RunConfig, default_stages, run_benchmark
from causalverify.scenarios import Scenario, load_suite
from causalverify.store import RunStore
from fake_openai import Behaviour, ErrorReply, FakeOpenAIServer, Reply
from run_e2e_helpers import (
    PanelRun,
    needs_r_and_sandbox,
    only_language,
    shared_root,
    smoke_suite,
)

pytestmark = needs_r_and_sandbox

RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02, max_retry_after=1.0)
MODEL = "openai/model-a"
CONFIDENCE_ANSWERS = {
    1: '```json\n{"method_confidence": 0.9, "specification_confidence": 0.85, '
    '"numerical_confidence": 0.8}\n```',
    2: 'Sure.\n{"method_confidence": "95%", "specification_confidence": "90%", '
    '"numerical_confidence": "85%"}\nThat is my honest view.',
    3: "I am not able to put numbers on this.",
}


class Script:
    """Experiment B: textbook for s001-s002, naive for s003-s004. Calibration: see above."""

    def __init__(self, scenarios: list[Scenario]) -> None:
        self.scenarios = scenarios
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.broken = True  # scenario 4's confidence request fails until this is cleared

    def __call__(self, request: dict[str, Any]) -> Behaviour:
        text = " ".join(m["content"] for m in request["messages"])
        s = next(s for s in self.scenarios if s.title in text)
        calibration = request["messages"][0]["content"] == SYSTEM
        with self.lock:
            self.calls["calibration" if calibration else "answer"] += 1
        if not calibration:
            agent = "textbook" if s.index <= 2 else "naive"
            return Reply(content=write_response(agent, s, language="r", protocol="default"))
        if s.index in CONFIDENCE_ANSWERS:
            return Reply(content=CONFIDENCE_ANSWERS[s.index], prompt_tokens=50)
        if self.broken:
            return ErrorReply(status=503)
        return Reply(content=json.dumps({"method_confidence": 0.99, "specification_confidence": 0.9, "numerical_confidence": 0.97}))  # fmt: skip


def _factory(server: FakeOpenAIServer, cache: ResponseCache) -> Any:
    def make(spec: str) -> Provider:
        return get_provider(spec, base_url=server.url, cache=cache, retry_policy=RETRY)

    return make


def test_elicitation_through_the_openai_server_is_stored_and_resumable(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite_dir = smoke_suite(shared_root(tmp_path_factory))
    script = Script(load_suite(suite_dir).scenarios)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    run_config = RunConfig(
        suite_dir=suite_dir,
        out_dir=tmp_path / "run",
        models=(MODEL,),
        languages=("r",),
        workers=2,
        access=ModelAccess(cache_path=tmp_path / "cache.sqlite"),
    )
    with FakeOpenAIServer(responder=script) as server:
        stages = dataclasses.replace(
            default_stages(run_config), make_provider=_factory(server, cache)
        )
        run_benchmark(run_config, stages=stages)
        report_before = write_report(run_config.out_dir, tmp_path / "before", n_resamples=20)
        assert "calibration" not in json.loads(report_before.with_name("summary.json").read_text())

        config = CalibrationConfig(run_dir=run_config.out_dir, access=ModelAccess(concurrency=3))
        first = calibrate_run(config, make_provider=_factory(server, cache))
        assert first.total == 4 and first.computed == 4 and first.skipped == 0
        assert first.counts == {"api_error": 1, "ok": 2, "unparsable": 1}
        assert script.calls["calibration"] == 3 + RETRY.max_attempts
        with RunStore.open(run_config.out_dir) as store:
            rows = {r.key.scenario_id: r for r in store.iter_calibration("default")}
            correct = {c.key.scenario_id: c.status for c in store.iter_cells()}
            assert store.meta()["calibration"]["default"]["models"] == [MODEL]
        assert correct == {"s001": "correct", "s002": "correct", "s003": "wrong", "s004": "wrong"}
        assert rows["s001"].confidences == {"method": 0.9, "specification": 0.85, "numerical": 0.8}
        assert rows["s002"].confidence("numerical") == pytest.approx(0.85)
        assert rows["s002"].scale == "percent"
        assert rows["s003"].missing["numerical"].startswith("unparsable")
        assert rows["s004"].status == "api_error"
        # the model was shown its own answer and the run's criterion
        shown = rows["s003"].prompt[1].content
        naive_answer = write_response(
            "naive", script.scenarios[2], language="r", protocol="default"
        )
        assert naive_answer in shown
        assert "within 50% of the estimate a correct analysis computes" in shown

        calls = script.calls["calibration"]
        second = calibrate_run(config, make_provider=_factory(server, cache))
        assert second.computed == 1 and second.skipped == 3  # only the api_error row again
        script.broken = False
        third = calibrate_run(config, make_provider=_factory(server, cache))
        assert third.computed == 1 and third.counts == {"ok": 3, "unparsable": 1}
        fourth = calibrate_run(config, make_provider=_factory(server, cache))
        assert fourth.computed == 0 and fourth.skipped == 4
        assert script.calls["calibration"] == calls + RETRY.max_attempts + 1

    frame = load_calibration(run_config.out_dir)
    assert frame is not None and len(frame) == 4
    index = write_report(run_config.out_dir, tmp_path / "after", n_resamples=50)
    summary = json.loads(index.with_name("summary.json").read_text())
    numerical = summary["calibration"]["protocols"]["default"]["models"][MODEL]["types"][
        "numerical"
    ]
    # s001 0.8 and s002 0.85 right; s004 0.97 wrong; s003 missing (wrong)
    assert numerical["n"] == 3 and numerical["n_missing"] == 1
    assert numerical["confidence_gap"] == pytest.approx(0.825 - 0.97)
    assert numerical["auroc"] == 0.0 and numerical["p_high_given_wrong"] == 1.0
    assert numerical["brier"] == pytest.approx((0.2**2 + 0.15**2 + 0.97**2) / 3)
    assert (tmp_path / "after" / "figures" / "calibration_default.png").is_file()
    html = index.read_text()
    assert 'id="calibration-default"' in html and 'id="fig-calibration_default"' in html
    again = write_report(run_config.out_dir, tmp_path / "again", n_resamples=50)
    assert again.read_bytes() == index.read_bytes()


def test_reference_panel_calibrates_offline_through_the_cli(
    tmp_path: Path, reference_panel: PanelRun
) -> None:
    run_dir = tmp_path / "panel"
    run_dir.mkdir()
    src_dir = reference_panel.config.out_dir
    with RunStore.open(src_dir) as src, RunStore.open(run_dir, create=True) as dst:
        dst.set_meta({**src.meta(), "languages": ["r"]})
        for cell in only_language(reference_panel, "r"):  # the panel's R cells: 32 answers
            dst.put_cell(cell)
    runner = CliRunner()
    args = ["calibrate", str(run_dir), "--quiet", "--cache", str(tmp_path / "c.sqlite")]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "32 answers: 32 asked now" in result.output
    paper = runner.invoke(main, [*args, "--protocol", "paper", "--models", "reference/naive"])
    assert paper.exit_code == 0, paper.output
    assert "4 answers: 4 asked now" in paper.output
    rerun = runner.invoke(main, args)
    assert "0 asked now, 32 already stored" in rerun.output
    bad = runner.invoke(main, [*args, "--models", "openai/not-in-run"])
    assert bad.exit_code != 0 and "did not answer in this run" in bad.output

    frame = load_calibration(run_dir)
    assert frame is not None
    default = frame[frame["protocol"] == "default"]
    prose = default[default["model"] == "reference/prose"]
    assert prose["numerical_missing"].eq("null").all() and prose["status"].eq("partial").all()
    mute = default[default["model"] == "reference/mute"]
    assert mute["status"].eq("ok").all()  # percentages as strings in a fenced block
    naive = default[default["model"] == "reference/naive"]
    assert (naive["correct"] == 0).all() and (naive["numerical_confidence"] > 0.8).all()
    naive_paper = frame[(frame["protocol"] == "paper") & (frame["model"] == "reference/naive")]
    shift = naive["numerical_confidence"].mean() - naive_paper["numerical_confidence"].mean()
    assert shift == pytest.approx(0.10, abs=0.02)

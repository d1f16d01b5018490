"""The declaration end to end, against a loopback server speaking the OpenAI API.

The model answers with the textbook script of the ``paper`` protocol (it prints ``Estimated
effect: <number>`` and no ``ESTIMATE:`` line), so under the default protocol every executed
cell is asked which printed number is its estimate, once, in the same conversation.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from causalverify.cli import main
from causalverify.models import ModelAccess, ResponseCache, RetryPolicy, get_provider
from causalverify.models.base import Provider
from causalverify.reference import write_response
from causalverify.runner import RunConfig, default_stages, run_benchmark
from causalverify.runner.declare import REQUEST
from causalverify.runner.stages import Stages, close_stages
from causalverify.scenarios import Scenario, load_suite
from causalverify.store import RunStore
from fake_openai import Behaviour, FakeOpenAIServer, Reply
from run_e2e_helpers import needs_r_and_sandbox, shared_root, smoke_suite

pytestmark = needs_r_and_sandbox

RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)
_PRINTED = re.compile(r"Estimated effect: (\S+)")


class Model:
    """Answers the prompt with a script that prints no marker; declares ``declare(printed)``."""

    def __init__(self, scenarios: list[Scenario], declare: Any = lambda printed: printed) -> None:
        self.scenarios, self.declare = scenarios, declare
        self.declarations: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> Behaviour:
        last = request["messages"][-1]["content"]
        if REQUEST in last:
            self.declarations.append(request)
            printed = _PRINTED.findall(last)
            return Reply(content=f"It is this one.\nESTIMATE: {self.declare(printed[-1])}")
        text = " ".join(m["content"] for m in request["messages"])
        scenario = next(s for s in self.scenarios if s.title in text)
        return Reply(
            content=write_response("textbook", scenario, language="python", protocol="paper")
        )


def _config(tmp_path: Path, suite_dir: Path, **overrides: Any) -> RunConfig:
    fields: dict[str, Any] = {
        "suite_dir": suite_dir,
        "out_dir": tmp_path / "run",
        "models": ("openai/m",),
        "languages": ("python",),
        "workers": 2,
        "access": ModelAccess(cache_path=tmp_path / "cache.sqlite"),
    }
    fields.update(overrides)
    return RunConfig(**fields)


def _run(config: RunConfig, server: FakeOpenAIServer, stages: Stages | None = None) -> list[Any]:
    cache = ResponseCache(config.access.cache_path)

    def make(spec: str) -> Provider:
        return get_provider(spec, base_url=server.url, cache=cache, retry_policy=RETRY)

    stages = dataclasses.replace(stages or default_stages(config), make_provider=make)
    try:
        run_benchmark(config, stages=stages)
    finally:
        close_stages(stages)
    with RunStore.open(config.out_dir) as store:
        return sorted(store.iter_cells(), key=lambda r: r.key.scenario_id)


@pytest.fixture
def suite(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return load_suite(smoke_suite(shared_root(tmp_path_factory)))


def test_a_cell_without_a_marker_is_asked_once_and_its_declaration_decides(
    tmp_path: Path, suite: Any
) -> None:
    model = Model(suite.scenarios)
    with FakeOpenAIServer(responder=model) as server:
        cells = _run(_config(tmp_path, suite.root), server)
        assert server.request_count == 2 * len(cells) == 8
    canonicals = [s.canonical.estimate for s in suite.scenarios]
    for record in cells:
        declaration = record.declaration
        assert declaration is not None and declaration.accepted, declaration
        assert record.extraction is not None and record.extraction.rule == "declared"
        assert record.status == "correct"
        assert record.execution is not None
        assert f"Estimated effect: {declaration.token}" in record.execution.stdout
        last_line = record.execution.stdout.strip().splitlines()[-1]
        assert last_line in declaration.request.content  # the stdout excerpt is shown
    for request in model.declarations:
        # the same conversation: the prompt, the answer, then the request
        roles = [m["role"] for m in request["messages"]]
        assert roles[-2:] == ["assistant", "user"] and len(roles) == 4
        # the script's own stdout, and nothing else that could hold the canonical or a verdict
        last = request["messages"][-1]["content"]
        shown = re.findall(r"```\n(.*?)\n```", last, flags=re.S)
        assert len(shown) == 1 and any(shown[0] in r.execution.stdout for r in cells)  # type: ignore[union-attr]
        outside = last.replace(shown[0], "")
        assert not any(repr(c) in outside or f"{c:.4g}" in outside for c in canonicals)
        assert "correct" not in outside.lower() and "error" not in outside.lower()


def test_a_declared_number_that_is_not_printed_is_rejected(tmp_path: Path, suite: Any) -> None:
    model = Model(suite.scenarios, declare=lambda printed: printed[:-1] + "9")
    with FakeOpenAIServer(responder=model) as server:
        cells = _run(_config(tmp_path, suite.root), server)
    assert len(model.declarations) == 4
    for record in cells:
        declaration = record.declaration
        assert declaration is not None and not declaration.accepted
        assert "not printed" in declaration.reason and declaration.token is not None
        assert record.extraction is not None and record.extraction.rule != "declared"


def test_the_paper_protocol_never_asks(tmp_path: Path, suite: Any) -> None:
    model = Model(suite.scenarios)
    with FakeOpenAIServer(responder=model) as server:
        cells = _run(_config(tmp_path, suite.root, protocol="paper"), server)
        assert server.request_count == 4
    assert not model.declarations and all(r.declaration is None for r in cells)


def test_no_declare_never_asks_and_a_resume_must_repeat_it(tmp_path: Path, suite: Any) -> None:
    model = Model(suite.scenarios)
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=model) as server:
        args = [
            "run", "--suite", str(suite.root), "--models", "openai/m", "--languages", "python",
            "--workers", "2", "--out", str(out), "--cache", str(tmp_path / "cache.sqlite"),
            "--base-url", server.url, "--json",
        ]  # fmt: skip
        result = CliRunner().invoke(main, [*args, "--no-declare"])
        assert result.exit_code == 0, result.output
        assert server.request_count == 4 and not model.declarations
        with RunStore.open(out) as store:
            assert store.meta()["declare"] is False
            assert all(r.declaration is None for r in store.iter_cells())
        resumed = CliRunner().invoke(main, args)  # declaring now would mix two protocols
        assert resumed.exit_code != 0 and "declare" in resumed.output
        assert server.request_count == 4


class _Killed(BaseException):
    """Stands for the process dying after a declaration was paid for, before the cell was stored."""


def test_a_killed_run_resumes_without_paying_for_a_declaration_twice(
    tmp_path: Path, suite: Any
) -> None:
    model = Model(suite.scenarios)
    config = _config(
        tmp_path,
        suite.root,
        workers=1,
        access=ModelAccess(concurrency=1, cache_path=tmp_path / "cache.sqlite"),
    )
    real = default_stages(config)
    rescore = real.rescore

    def dies_on_a_declared_cell(record: Any, **kwargs: Any) -> Any:
        if record.declaration is not None:
            raise _Killed
        return rescore(record, **kwargs)

    with FakeOpenAIServer(responder=model) as server:
        try:
            with pytest.raises(_Killed):
                _run(config, server, dataclasses.replace(real, rescore=dies_on_a_declared_cell))
        finally:
            close_stages(real)
        paid = server.request_count
        assert len(model.declarations) >= 1 and paid >= 2
        cells = _run(config, server)
        # the first cell's answer and declaration come from the cache; the others are asked once
        assert server.request_count == 8
        assert len(model.declarations) == 4
    assert len(cells) == 4 and all(r.declaration is not None for r in cells)
    assert all(r.declaration.accepted for r in cells)  # type: ignore[union-attr]

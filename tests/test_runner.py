"""The runner with fake stages: planning, statuses, resume, retries, compatibility, concurrency."""

from __future__ import annotations

import dataclasses
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from causalverify.errors import ProviderError, SandboxUnavailableError, StoreError
from causalverify.models import ModelAccess
from causalverify.models.base import CellContext, ModelOptions
from causalverify.runner import (
    ProgressEvent,
    RunConfig,
    Stages,
    plan_cells,
    run_benchmark,
)
from causalverify.sandbox._classify import unavailable
from causalverify.sandbox.base import ExecResult, Limits
from causalverify.scenarios.model import Canonical, Scenario
from causalverify.scoring import rescore
from causalverify.store import (
    CellRecord,
    ExtractionRecord,
    Message,
    ModelResponse,
    RunStore,
    stable_view,
)


def scenario(index: int, *, canonical: float = 2.0) -> Scenario:
    sid = f"s{index:03d}"
    return Scenario(
        id=sid,
        index=index,
        family="did",
        difficulty="easy",
        group="g",
        suite_seed=7,
        attempt=0,
        beta=2.0,
        params={},
        topic="t",
        title=f"title {sid}",
        research_question="q",
        data_description="d",
        columns={"y": "outcome"},
        target="effect",
        facts={},
        data_file=f"data/{sid}.csv",
        csv_sha256="0" * 64,
        canonical=Canonical(estimate=canonical, se=0.1, n=10, method="ols"),
    )


@dataclass
class FakeSuite:
    root: Path
    scenarios: list[Scenario]
    reads: Counter[str] = field(default_factory=Counter)

    def data_path(self, s: Scenario) -> Path:
        return self.root / s.data_file

    def read_data(self, s: Scenario) -> pd.DataFrame:
        self.reads[s.id] += 1
        return pd.DataFrame({"y": [1.0, 2.0]})


@dataclass(frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    sha256: str


def render(
    scenario: Scenario, data: pd.DataFrame, *, language: Any, protocol: Any, manifest: Any
) -> Prompt:
    text = f"{scenario.title} in {language} ({protocol}), {len(data)} rows"
    return Prompt((Message(role="user", content=text),), f"{hash(text) & 0xFFFF:064x}")


#: what each fake agent answers; the fake sandbox "runs" ``print(<a> * <b>)`` lines, printing
#: the protocol's ``ESTIMATE:`` line, and the real scoring reads it (canonical 2.0: 2.1 is
#: correct, 9.0 wrong); ``fake/mute`` prints nothing, so the run asks it to declare its estimate
ANSWERS = {
    "fake/good": "```{lang}\nprint(0.7 * 3)\n```",
    "fake/wrong": "```{lang}\nprint(4.5 * 2)\n```",
    "fake/prose": "I would use a difference in differences.",
    "fake/empty": "",
    "fake/broken": "```{lang}\nprint(0.7 * 3\n```",
    "fake/crash": "```{lang}\nstop()\n```",
    "fake/mute": "```{lang}\nx <- 1\n```",
}


class FakeProvider:
    def __init__(self, spec: str, *, fail: set[str] | None = None) -> None:
        self.spec = spec
        self.fail = fail if fail is not None else set()
        self.calls: list[tuple[str, str, int]] = []
        self.declarations: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()

    def answer(  # a fake model that answers per scenario: an offline agent
        self,
        messages: Sequence[Message],
        *,
        options: ModelOptions,
        context: CellContext | None,
    ) -> ModelResponse:
        assert context is not None and options.max_tokens == 8192
        if context.request == "declare":  # what a model that printed nothing answers
            assert messages[-1].role == "user" and "ESTIMATE" in messages[-1].content
            with self.lock:
                self.declarations.append((context.scenario.id, context.language, context.sample))
            content = "My script did not print its estimate."
            return ModelResponse(content=content, input_tokens=10, output_tokens=5, cost_usd=0.01)
        with self.lock:
            self.calls.append((context.scenario.id, context.language, context.sample))
        if context.scenario.id in self.fail:
            return ModelResponse(content=None, error="HTTP 500 after 3 attempts")
        if self.spec == "fake/setup":
            raise ProviderError("401: bad API key")
        content = ANSWERS[self.spec].format(lang=context.language)
        return ModelResponse(content=content, input_tokens=10, output_tokens=5, cost_usd=0.01)


def extract_code(response: str, language: Any, *, policy: Any) -> Any:
    match = re.search(r"```(\w+)\n(.*?)```", response, re.S)
    if match is None or match.group(1) != language:
        return None
    return _Block(match.group(2), 0)


@dataclass(frozen=True)
class _Block:
    code: str
    index: int


@dataclass(frozen=True)
class _Parse:
    ok: bool
    error: str | None


def check_parses(code: str, language: Any, sandbox: Any) -> _Parse:
    ok = code.count("(") == code.count(")")
    return _Parse(ok, None if ok else "unbalanced parentheses")


class FakeSandbox:
    def __init__(self, *, unavailable: bool = False) -> None:
        self.unavailable = unavailable
        self.runs = 0
        self.lock = threading.Lock()

    def run(self, code: str, language: Any, files: Any, limits: Limits | None = None) -> ExecResult:
        with self.lock:
            self.runs += 1
        assert len(files) == 1 and next(iter(files)).startswith("data/s")
        if self.unavailable:
            return unavailable("no user namespaces")
        if "stop()" in code:
            return ExecResult(
                status="error",
                exit_code=1,
                stdout="",
                stderr="Error",
                wall_seconds=0.1,
                cpu_seconds=0.1,
            )
        products = re.findall(r"print\(([-\d.]+) \* ([-\d.]+)\)", code)
        stdout = "".join(f"ESTIMATE: {round(float(a) * float(b), 9)}\n" for a, b in products)
        return ExecResult(
            status="ok", exit_code=0, stdout=stdout, stderr="", wall_seconds=0.1, cpu_seconds=0.1
        )


class Harness:
    """A fake world: suite, providers and sandbox, and a factory for configs and stages."""

    def __init__(self, tmp_path: Path, n: int = 3) -> None:
        self.suite = FakeSuite(tmp_path / "suite", [scenario(i) for i in range(1, n + 1)])
        self.sandbox = FakeSandbox()
        self.providers: dict[str, FakeProvider] = {}
        self.fail: set[str] = set()
        self.out = tmp_path / "run"

    def make_provider(self, spec: str) -> FakeProvider:
        self.providers[spec] = FakeProvider(spec, fail=self.fail)
        return self.providers[spec]

    def stages(self) -> Stages:
        return Stages(
            render=render,
            make_provider=self.make_provider,
            sandbox=self.sandbox,  # type: ignore[arg-type]
            extract_code=extract_code,
            check_parses=check_parses,
            rescore=rescore,
        )

    def config(self, models: Sequence[str] = tuple(ANSWERS), **kw: Any) -> RunConfig:
        kw.setdefault("workers", 2)
        return RunConfig(suite_dir=self.suite.root, out_dir=self.out, models=tuple(models), **kw)

    def run(self, config: RunConfig | None = None, **kw: Any) -> Any:
        return run_benchmark(config or self.config(), stages=self.stages(), suite=self.suite, **kw)


EXPECTED = {
    "fake/good": "correct",
    "fake/wrong": "wrong",
    "fake/prose": "no_code",
    "fake/empty": "no_response",
    "fake/broken": "parse_error",
    "fake/crash": "exec_error",
    "fake/mute": "no_estimate",
}


def test_every_cell_gets_its_status(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    events: list[ProgressEvent] = []
    summary = world.run(progress=events.append)
    assert summary.total == summary.computed == 3 * 7 * 2 and summary.skipped == 0
    with RunStore.open(world.out) as store:
        records = list(store.iter_cells())
    assert len(records) == 42
    assert {(r.key.model, r.status) for r in records} == set(EXPECTED.items())
    assert summary.counts == dict(
        sorted(Counter(v for v in EXPECTED.values() for _ in range(6)).items())
    )
    good = next(m for m in summary.models if m.model == "fake/good")
    assert (good.L1, good.L2a, good.L2b, good.L2b_plus, good.cells) == (1.0, 1.0, 1.0, 1.0, 6)
    crash = next(m for m in summary.models if m.model == "fake/crash")
    assert (crash.L2a, crash.L2b, crash.L2b_plus) == (1.0, 0.0, 0.0)
    assert world.sandbox.runs == 4 * 6  # good, wrong, crash, mute execute; the rest never run
    # the six mute cells ran, printed no ESTIMATE line and were asked to declare their estimate
    asked = {m: len(p.declarations) for m, p in world.providers.items() if p.declarations}
    assert asked == {"fake/mute": 6}
    mute = [r for r in records if r.key.model == "fake/mute"]
    assert all(r.declaration is not None and not r.declaration.accepted for r in mute)
    assert all(r.declaration is None for r in records if r.key.model != "fake/mute")
    assert summary.requests == 48 and summary.cost_usd == pytest.approx(0.48)
    assert summary.input_tokens == 480 and summary.output_tokens == 240
    assert [e.kind for e in events] == ["start"] + ["cell"] * 42 + ["done"]
    assert events[-1].done == events[-1].total == 42
    assert all(w.reads[s] == 1 for w in [world.suite] for s in w.reads)  # one read per scenario


def test_record_contents(tmp_path: Path) -> None:
    world = Harness(tmp_path, n=1)
    world.run(world.config(models=["fake/good", "fake/prose"], languages=("r",)))
    with RunStore.open(world.out) as store:
        good, prose = list(store.iter_cells())
        meta = store.meta()
    assert good.prompt[0].content == "title s001 in r (default), 2 rows"
    assert good.code is not None and good.code.code == "print(0.7 * 3)\n" and good.code.parses
    assert good.execution is not None and good.execution.stdout == "ESTIMATE: 2.1\n"
    assert good.extraction is not None and good.extraction.value == 2.1
    assert good.canonical == 2.0 and good.protocol == "default"
    assert set(good.timings) == {"model", "parse", "execute", "score"}
    assert prose.code is not None and prose.code.code is None and prose.execution is None
    assert meta["models"] == ["fake/good", "fake/prose"] and meta["languages"] == ["r"]
    assert meta["suite_seed"] == 7 and len(meta["suite_fingerprint"]) == 64
    assert meta["package_versions"]["pandas"] == pd.__version__


def test_rerun_resumes_without_new_work(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    world.run()
    with RunStore.open(world.out) as store:
        before = [stable_view(r) | {"timings": r.timings} for r in store.iter_cells()]
        seq_before = store._conn.execute("SELECT seq FROM cells ORDER BY seq").fetchall()
    runs_before = world.sandbox.runs
    world.providers.clear()
    summary = world.run()
    assert summary.computed == 0 and summary.skipped == 42 and summary.total == 42
    assert world.sandbox.runs == runs_before
    assert world.providers == {}  # nothing to do: no provider is even created
    with RunStore.open(world.out) as store:
        after = [stable_view(r) | {"timings": r.timings} for r in store.iter_cells()]
        assert store._conn.execute("SELECT seq FROM cells ORDER BY seq").fetchall() == seq_before
    assert after == before


def test_api_errors_are_retried_on_resume(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    world.fail.add("s002")
    first = world.run(world.config(models=["fake/good"]))
    assert first.counts == {"api_error": 2, "correct": 4}
    world.fail.clear()
    second = world.run(world.config(models=["fake/good"]))
    assert second.computed == 2 and second.skipped == 4
    assert sorted(world.providers["fake/good"].calls) == [("s002", "python", 0), ("s002", "r", 0)]
    assert second.counts == {"correct": 6}


def test_limit_samples_and_superset(tmp_path: Path) -> None:
    world = Harness(tmp_path, n=4)
    world.run(world.config(models=["fake/good"], limit=2, languages=("python",)))
    with RunStore.open(world.out) as store:
        assert store.count_cells() == 2
    summary = world.run(world.config(models=["fake/good", "fake/wrong"], samples=2))
    assert summary.total == 4 * 2 * 2 * 2 and summary.skipped == 2
    calls = world.providers["fake/good"].calls
    assert len(calls) == 14 and {c[2] for c in calls} == {0, 1}
    assert plan_cells(world.suite.scenarios[:1], world.config(samples=2))[1].sample == 1


def test_incompatible_store_is_refused(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    world.run(world.config(models=["fake/good", "fake/wrong"]))
    with pytest.raises(StoreError, match="tolerance"):
        world.run(world.config(models=["fake/good", "fake/wrong"], tolerance=0.25))
    with pytest.raises(StoreError, match="also holds fake/wrong"):
        world.run(world.config(models=["fake/good"]))
    with pytest.raises(StoreError, match="protocol"):
        world.run(world.config(models=["fake/good", "fake/wrong"], protocol="paper"))
    # the model access: options and the server are settings of the results, the calls in
    # flight are not
    both = ["fake/good", "fake/wrong"]
    hotter = ModelAccess(options=ModelOptions(temperature=0.3))
    with pytest.raises(StoreError, match="model_options"):
        world.run(world.config(models=both, access=hotter))
    with pytest.raises(StoreError, match="base_url"):
        world.run(world.config(models=both, access=ModelAccess(base_url="http://127.0.0.1:9/v1")))
    assert world.run(world.config(models=both, access=ModelAccess(concurrency=1))).skipped == 12


def test_setup_errors_stop_the_run_and_keep_finished_cells(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    with pytest.raises(ProviderError, match="bad API key"):
        world.run(world.config(models=["fake/setup"]))
    with RunStore.open(world.out) as store:
        assert store.count_cells() == 0
    other = Harness(tmp_path / "other")
    other.sandbox.unavailable = True
    with pytest.raises(SandboxUnavailableError, match="no user namespaces"):
        other.run(other.config(models=["fake/good", "fake/prose"]))
    with RunStore.open(other.out) as store:  # cells that never needed the sandbox are kept
        assert {r.status for r in store.iter_cells()} <= {"no_code"}


def test_config_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="repeated"):
        RunConfig(suite_dir=tmp_path, out_dir=tmp_path, models=("a", "a"))
    with pytest.raises(ValueError, match="judge"):
        RunConfig(suite_dir=tmp_path, out_dir=tmp_path, extractor="both")
    assert RunConfig(suite_dir=tmp_path, out_dir=tmp_path, protocol="paper").code_policy == "paper"


def test_judge_extraction_is_recorded_and_passed_to_scoring(tmp_path: Path) -> None:
    world = Harness(tmp_path, n=1)
    seen: list[tuple[str, str, str]] = []

    def judge(provider: Any, *, code: str, stdout: str, family: Any) -> ExtractionRecord:
        seen.append((provider.spec, stdout, family))
        return ExtractionRecord(method="judge", value=2.1, rule="judge", rationale="the effect")

    scored: list[str] = []

    def spy(record: CellRecord, **kw: Any) -> CellRecord:
        scored.append(kw["extractor"])
        return rescore(record, **kw)

    stages = dataclasses.replace(world.stages(), judge_extract=judge, rescore=spy)
    config = world.config(
        models=["fake/good", "fake/prose"],
        languages=("r",),
        extractor="both",
        judge_model="fake/judge",
    )
    run_benchmark(config, stages=stages, suite=world.suite)
    assert seen == [("fake/judge", "ESTIMATE: 2.1\n", "did")]  # only executed cells are judged
    assert scored == ["both", "both"]
    with RunStore.open(world.out) as store:
        good, prose = list(store.iter_cells())
        assert store.meta()["judge_model"] == "fake/judge"
    assert good.judge is not None and good.judge.value == 2.1 and prose.judge is None


def test_a_corrected_model_list_is_accepted_when_the_typo_has_no_cells(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    with pytest.raises(ProviderError, match="bad API key"):
        world.run(world.config(models=["fake/setup"]))
    summary = world.run(world.config(models=["fake/good"]))  # the corrected command
    assert summary.counts == {"correct": 6}
    with RunStore.open(world.out) as store:
        assert store.meta()["models"] == ["fake/good"]
    with pytest.raises(StoreError, match="also holds fake/good"):  # a model with cells stays
        world.run(world.config(models=["fake/wrong"]))


def test_a_provider_that_cannot_be_made_leaves_no_run_folder(tmp_path: Path) -> None:
    world = Harness(tmp_path)

    def refuse(spec: str) -> FakeProvider:
        raise ProviderError(f"{spec}: OPENAI_API_KEY is not set")

    stages = dataclasses.replace(world.stages(), make_provider=refuse)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        run_benchmark(world.config(models=["fake/good"]), stages=stages, suite=world.suite)
    assert not world.out.exists()


def test_cells_without_an_answer_are_in_no_rate(tmp_path: Path) -> None:
    world = Harness(tmp_path)
    world.fail.add("s002")
    summary = world.run(world.config(models=["fake/good"]))
    good = summary.models[0]
    assert good.cells == 6 and good.unanswered == 2
    assert (good.L1, good.L2a, good.L2b, good.L2b_plus) == (1.0, 1.0, 1.0, 1.0)


def test_limit_takes_a_balanced_reproducible_nested_subset() -> None:
    from causalverify.runner.suite import balanced_subset

    families = ("did", "event_study", "iv", "rdd")
    suite = [
        scenario(i).model_copy(update={"family": families[(i - 1) // 10]}) for i in range(1, 41)
    ]  # forty scenarios, family-major like the default grid
    four = balanced_subset(suite, 4)
    assert sorted(s.family for s in four) == sorted(families)  # not the first four (all DID)
    assert balanced_subset(suite, 4) == four  # reproducible
    six, nine = balanced_subset(suite, 6), balanced_subset(suite, 9)
    assert set(map(id, four)) <= set(map(id, six)) <= set(map(id, nine))
    assert [s.index for s in nine] == sorted(s.index for s in nine)  # suite order kept
    assert max(Counter(s.family for s in nine).values()) == 3
    assert balanced_subset(suite, 99) == suite and balanced_subset(suite, None) == suite


def test_a_run_into_a_folder_another_run_is_writing_stops(tmp_path: Path) -> None:
    from causalverify.store.sqlite import writer_lock

    world = Harness(tmp_path)
    with writer_lock(world.out), pytest.raises(StoreError, match="another causalverify process"):
        world.run(world.config(models=["fake/good"]))
    assert world.run(world.config(models=["fake/good"])).counts == {"correct": 6}

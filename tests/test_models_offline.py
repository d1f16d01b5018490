"""The offline providers: ``replay/<dir>[:<slug>]`` and ``reference/<agent>``."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import causalverify.models.reference
import causalverify.reference
from causalverify.errors import ProviderError
from causalverify.models import CellContext, ModelOptions, get_provider
from causalverify.models.replay import parse_replay_spec
from causalverify.records import Message, ScenarioBrief
from models_helpers import make_scenario

MESSAGES = [Message(role="user", content="analyse this")]
OPTIONS = ModelOptions()


def ctx(sid: str = "s01", language: str = "r") -> CellContext:
    brief = ScenarioBrief.of(make_scenario(sid))
    return CellContext(scenario=brief, language=language, protocol="paper")  # type: ignore[arg-type]


def write_cached(folder: Path, sid: str, slug: str, **llm: object) -> Path:
    record = {
        "scenario_id": sid,
        "method_family": "DID",
        "difficulty": "easy",
        "title": "t",
        "model": slug,
        "run_at": "2026-01-01T00:00:00",
        "llm_response": {
            "model": f"vendor/{slug}",
            "input_tokens": 900,
            "output_tokens": 1500,
            "content": f"answer {sid} by {slug}",
            "stop_reason": "end_turn",
            **llm,
        },
        "_ground_truth": {},
    }
    path = folder / f"{sid}_{slug}.json"
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    for sid in ("s01", "s02", "s10"):
        write_cached(tmp_path, sid, "gpt_4o")
    write_cached(tmp_path, "s01", "claude_sonnet", stop_reason="max_tokens", content="cut")
    write_cached(tmp_path, "s02", "claude_sonnet", stop_reason="length")
    return tmp_path


def test_replay_reads_published_format(outputs: Path):
    provider = get_provider(f"replay/{outputs}:gpt_4o")
    response = provider.answer(MESSAGES, options=OPTIONS, context=ctx("s02"))
    assert response.content == "answer s02 by gpt_4o"
    assert (response.input_tokens, response.output_tokens) == (900, 1500)
    assert response.cost_usd == 0.0 and response.error is None
    assert response.stop_reason == "end_turn" and not response.truncated
    assert response.model == "vendor/gpt_4o"


def test_replay_stop_reasons_mark_truncation(outputs: Path):
    provider = get_provider(f"replay/{outputs}:claude_sonnet")
    first = provider.answer(MESSAGES, options=OPTIONS, context=ctx("s01"))
    second = provider.answer(MESSAGES, options=OPTIONS, context=ctx("s02"))
    assert first.truncated and first.content == "cut"
    assert second.truncated and second.stop_reason == "length"


def test_replay_matches_scenario_numbers_across_padding(outputs: Path):
    provider = get_provider(f"replay/{outputs}:gpt_4o")
    assert provider.answer(MESSAGES, options=OPTIONS, context=ctx("s001")).content == (
        "answer s01 by gpt_4o"
    )
    assert provider.answer(MESSAGES, options=OPTIONS, context=ctx("s010")).content == (
        "answer s10 by gpt_4o"
    )


def test_replay_missing_answer_is_a_cell_error(outputs: Path):
    provider = get_provider(f"replay/{outputs}:gpt_4o")
    response = provider.answer(MESSAGES, options=OPTIONS, context=ctx("s03"))
    assert response.content is None
    assert response.error == "no cached answer for s03"


def test_replay_unreadable_file_is_a_cell_error(outputs: Path):
    (outputs / "s05_gpt_4o.json").write_text("{broken")
    provider = get_provider(f"replay/{outputs}:gpt_4o")
    response = provider.answer(MESSAGES, options=OPTIONS, context=ctx("s05"))
    assert response.content is None
    assert response.error is not None and "s05_gpt_4o.json" in response.error


def test_replay_infers_the_only_slug(tmp_path: Path):
    write_cached(tmp_path, "s07", "only_model")
    provider = get_provider(f"replay/{tmp_path}")
    assert provider.answer(MESSAGES, options=OPTIONS, context=ctx("s07")).content == (
        "answer s07 by only_model"
    )


def test_replay_ambiguous_or_unknown_slug_is_a_setup_error(outputs: Path):
    with pytest.raises(ProviderError, match="claude_sonnet, gpt_4o"):
        get_provider(f"replay/{outputs}")
    with pytest.raises(ProviderError, match="no files"):
        get_provider(f"replay/{outputs}:llama")
    with pytest.raises(ProviderError, match="does not exist"):
        get_provider(f"replay/{outputs / 'absent'}")


def test_replay_needs_context(outputs: Path):
    provider = get_provider(f"replay/{outputs}:gpt_4o")
    with pytest.raises(ProviderError, match="context"):
        provider.answer(MESSAGES, options=OPTIONS, context=None)


def test_parse_replay_spec(tmp_path: Path):
    assert parse_replay_spec("runs/out:gpt-4o") == (Path("runs/out"), "gpt-4o")
    assert parse_replay_spec("runs/out") == (Path("runs/out"), None)
    odd = tmp_path / "a:b"
    odd.mkdir()
    assert parse_replay_spec(str(odd)) == (odd, None)


def fake_writer(agent, scenario, *, language, protocol):
    return f"{agent}|{scenario.id}|{language}|{protocol}"


def test_reference_provider_calls_write_response(monkeypatch):
    monkeypatch.setattr(causalverify.models.reference, "write_response", fake_writer)
    provider = get_provider("reference/naive")
    response = provider.answer(MESSAGES, options=OPTIONS, context=ctx("s04", "python"))
    assert response.content == "naive|s04|python|paper"
    assert (response.input_tokens, response.output_tokens, response.cost_usd) == (0, 0, 0.0)
    assert response.error is None and response.model == "reference/naive"
    with ThreadPoolExecutor(max_workers=4) as pool:
        again = list(
            pool.map(
                lambda _: (
                    provider.answer(MESSAGES, options=OPTIONS, context=ctx("s04", "python")).content
                ),
                range(8),
            )
        )
    assert again == [response.content] * 8


def test_reference_provider_rejects_unknown_agent():
    known = ", ".join(causalverify.reference.AGENTS)
    with pytest.raises(
        ProviderError, match=f"unknown reference agent 'genius'; choose one of {known}$"
    ):
        get_provider("reference/genius")
    assert [get_provider(f"reference/{a}").agent for a in causalverify.reference.AGENTS] == list(
        causalverify.reference.AGENTS
    )


def test_reference_provider_needs_context():
    provider = get_provider("reference/textbook")
    with pytest.raises(ProviderError, match="context"):
        provider.answer(MESSAGES, options=OPTIONS, context=None)


@pytest.mark.parametrize("language", ["r", "python"])
def test_reference_panel_through_the_provider(language):
    """Every agent of the real panel answers through the provider, deterministically."""
    scenario = make_scenario("s003")
    context = CellContext(
        scenario=ScenarioBrief.of(scenario), language=language, protocol="default"
    )
    for agent in causalverify.reference.AGENTS:
        provider = get_provider(f"reference/{agent}")
        first = provider.answer(MESSAGES, options=OPTIONS, context=context)
        second = provider.answer([], options=ModelOptions(temperature=1.0), context=context)
        expected = causalverify.reference.write_response(
            agent, scenario, language=language, protocol="default"
        )
        assert first.content == second.content == expected
        assert first.input_tokens == first.output_tokens == 0 and first.cost_usd == 0.0

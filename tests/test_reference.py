"""Unit tests of the reference panel's answers (no execution; see test_reference_exec.py)."""

from __future__ import annotations

import difflib
import itertools
import re

import pytest

import causalverify.reference as ref
from causalverify.errors import SetupError
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import LANGUAGES, Family, Language
from causalverify.reference import AGENTS, agent_variant, fragile_fault, write_response
from reference_exec import REFERENCE_IDS, code_blocks, reference_scenario

HEADINGS = ("## 1. Identification Strategy", "## 3. Expected Findings")
CODE_AGENTS = tuple(a for a in AGENTS if a != "prose")


def _scenario(family: Family, scenario_id: str | None = None):  # type: ignore[no-untyped-def]
    return reference_scenario(REFERENCE_IDS[family][0], family, scenario_id)


def test_public_api_is_all() -> None:
    public = {name for name in dir(ref) if not name.startswith("_")}
    assert public == set(ref.__all__)


def test_agents_are_the_agreed_panel() -> None:
    assert AGENTS == (
        "textbook",
        "naive",
        "cumulative",
        "wrong-term",
        "naive-se",
        "fragile",
        "mute",
        "prose",
    )


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("agent", AGENTS)
def test_answer_has_three_sections_in_order(agent: str, language: Language, family: Family) -> None:
    text = write_response(agent, _scenario(family), language=language, protocol="default")
    code_heading = "## 2. R Code" if language == "r" else "## 2. Python Code"
    positions = [text.index(h) for h in (HEADINGS[0], code_heading, HEADINGS[1])]
    assert positions == sorted(positions)
    assert len(re.findall(r"^## ", text, flags=re.MULTILINE)) == 3


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("agent", CODE_AGENTS)
def test_code_agents_write_one_block_reading_the_data_file(
    agent: str, language: Language, family: Family
) -> None:
    scenario = _scenario(family)
    text = write_response(agent, scenario, language=language, protocol="default")
    blocks = code_blocks(text)
    assert [lang for lang, _ in blocks] == [language]
    code = blocks[0][1]
    assert f'"{scenario.data_file}"' in code
    assert "<<" not in code  # every placeholder was filled


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_prose_has_no_code(language: Language, family: Family) -> None:
    text = write_response("prose", _scenario(family), language=language, protocol="default")
    assert "```" not in text
    assert "read.csv" not in text and "read_csv" not in text


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("agent", CODE_AGENTS)
def test_estimate_line_only_under_default_protocol(agent: str, language: Language) -> None:
    scenario = _scenario("did")
    default = code_blocks(write_response(agent, scenario, language=language, protocol="default"))
    paper = code_blocks(write_response(agent, scenario, language=language, protocol="paper"))
    assert "ESTIMATE:" not in paper[0][1]
    expected = 0 if agent == "mute" else 1
    assert default[0][1].count("ESTIMATE:") == expected
    if agent != "mute":
        assert "Estimated effect:" in paper[0][1]


def test_answers_are_deterministic() -> None:
    scenario = _scenario("iv")
    for agent in AGENTS:
        first = write_response(agent, scenario, language="python", protocol="paper")
        assert write_response(agent, scenario, language="python", protocol="paper") == first


def test_answers_never_use_the_true_effect_or_canonical() -> None:
    scenario = _scenario("did")
    text = write_response("textbook", scenario, language="r", protocol="default")
    assert repr(scenario.canonical.estimate) not in text
    assert f"{scenario.canonical.estimate:.4f}" not in text


def test_unknown_agent_is_a_setup_error() -> None:
    with pytest.raises(SetupError, match="textbook"):
        write_response("oracle", _scenario("did"), language="r", protocol="default")


def test_fragile_hits_about_forty_percent_split_between_faults() -> None:
    faults = [fragile_fault(f"s{i:03d}") for i in range(1, 101)]
    missing, typo = faults.count("missing"), faults.count("typo")
    assert 30 <= missing + typo <= 50
    assert missing >= 10 and typo >= 10


def test_fragile_code_matches_its_fault() -> None:
    ids = {fragile_fault(f"x{i}"): f"x{i}" for i in range(50)}
    r_missing = write_response(
        "fragile", _scenario("did", ids["missing"]), language="r", protocol="default"
    )
    assert "library(fixest)" in r_missing
    rdd_missing = write_response(
        "fragile", _scenario("rdd", ids["missing"]), language="python", protocol="default"
    )
    assert "from rdd import rdd" in rdd_missing
    clean = write_response("fragile", _scenario("iv", ids[None]), language="r", protocol="paper")
    assert clean == write_response(
        "textbook", _scenario("iv", ids[None]), language="r", protocol="paper"
    )
    assert agent_variant("fragile", ids["typo"]) == "typo"
    with pytest.raises(ValueError, match="no script"):
        agent_variant("prose", "s001")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("agent", CODE_AGENTS)
def test_paper_script_is_default_script_without_the_estimate_line(
    agent: str, language: Language, family: Family
) -> None:
    """So a run under one protocol vouches for the computation under the other: the paper script
    is the default one without its protocol lines (the ``ESTIMATE:`` line and, for the agents
    that report inference, the piece computing the SE and the ``SE:``/``CI:``/``VCOV:`` lines)."""
    scenario = _scenario(family)
    [(_, default)] = code_blocks(
        write_response(agent, scenario, language=language, protocol="default")
    )
    [(_, paper)] = code_blocks(write_response(agent, scenario, language=language, protocol="paper"))
    matcher = difflib.SequenceMatcher(a=default.splitlines(), b=paper.splitlines(), autojunk=False)
    ops = matcher.get_opcodes()
    assert {op for op, *_ in ops} <= {"equal", "delete"}
    dropped = [
        line for op, i1, i2, _, _ in ops if op == "delete" for line in default.splitlines()[i1:i2]
    ]
    markers = [m for m in ("SE:", "CI:", "VCOV:", "ESTIMATE:") if any(m in x for x in dropped)]
    if agent == "mute":
        assert dropped == []
    elif agent_variant(agent, scenario.id) in ("textbook", "naive-se"):
        assert markers == ["SE:", "CI:", "VCOV:", "ESTIMATE:"]
        assert any(line.lstrip().startswith("se ") or "se <-" in line for line in dropped)
    else:
        assert dropped and all("ESTIMATE:" in line for line in dropped)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_inference_lines_come_before_the_estimate_line(language: Language, family: Family) -> None:
    scenario = _scenario(family)
    for agent in ("textbook", "naive-se"):
        [(_, code)] = code_blocks(
            write_response(agent, scenario, language=language, protocol="default")
        )
        at = [next(i for i, line in enumerate(code.splitlines()) if m in line)
              for m in ('"SE: ', '"CI: [', '"VCOV: ', '"ESTIMATE: ')]  # fmt: skip
        assert at == sorted(at) and at[-1] == len(code.splitlines()) - 1
    for agent in ("naive", "cumulative", "wrong-term", "mute"):
        [(_, code)] = code_blocks(
            write_response(agent, scenario, language=language, protocol="default")
        )
        assert '"SE: ' not in code and "vcov_used" not in code


@pytest.mark.r
@pytest.mark.sandbox
def test_agents_load_only_installed_packages_except_fragile_faults() -> None:
    from causalverify.sandbox import environment_manifest

    manifest = environment_manifest()
    installed = {"r": set(manifest.r_packages), "python": set(manifest.python_packages)}
    loads = {
        "r": re.compile(r"^\s*(?:library|require)\((\w+)\)", re.MULTILINE),
        "python": re.compile(r"^\s*(?:import|from)\s+(\w+)", re.MULTILINE),
    }
    ids = {fragile_fault(f"x{i}"): f"x{i}" for i in range(50)}
    for family, language, agent in itertools.product(FAMILIES, LANGUAGES, CODE_AGENTS):
        for scenario_id in ids.values():
            text = write_response(
                agent, _scenario(family, scenario_id), language=language, protocol="default"
            )
            [(_, code)] = code_blocks(text)
            used = set(loads[language].findall(code))
            assert used, code
            absent = used - installed[language]
            if agent == "fragile" and fragile_fault(scenario_id) == "missing":
                assert len(absent) == 1, (family, language, absent)
            else:
                assert absent == set(), (agent, family, language, absent)

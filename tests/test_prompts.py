"""Tests of the Experiment B prompts (protocols ``paper`` and ``default``)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import causalverify.prompts as prompts
from causalverify.families import CORE_FAMILIES as FAMILIES  # the four published designs
from causalverify.families import LANGUAGES, Family, Language
from causalverify.prompts import RenderedPrompt, messages_sha256, render_experiment_b
from causalverify.records import Manifest
from causalverify.scenarios.model import Scenario
from reference_exec import REFERENCE_IDS, reference_csv, reference_scenario

MANIFEST = Manifest(
    r_version="4.2.2",
    r_packages={"sandwich": "3.0-2", "AER": "1.2-10", "lmtest": "0.9-40"},
    python_version="3.11.2",
    python_packages={"statsmodels": "0.14.4", "pandas": "2.2.3", "linearmodels": "6.1"},
)

#: design names the prompt itself must never use (scenario text is checked by the suite checks)
FORBIDDEN = re.compile(
    r"difference-in-differences|\bdid\b|event study|instrumental|2sls|two-stage|"
    r"regression discontinuity|\brdd\b|fixed effects",
    re.IGNORECASE,
)


def _inputs(family: Family) -> tuple[Scenario, pd.DataFrame]:
    source = REFERENCE_IDS[family][0]
    return reference_scenario(source, family), pd.read_csv(reference_csv(source))


def _render(
    family: Family, language: Language, protocol: str, manifest: Manifest | None = MANIFEST
) -> RenderedPrompt:
    scenario, data = _inputs(family)
    return render_experiment_b(
        scenario,
        data,
        language=language,
        protocol=protocol,  # type: ignore[arg-type]
        manifest=manifest,
    )


def test_public_api_is_all() -> None:
    public = {name for name in dir(prompts) if not name.startswith("_")}
    assert public == set(prompts.__all__)


@pytest.mark.parametrize("protocol", ["paper", "default"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_system_message_asks_for_three_sections(language: Language, protocol: str) -> None:
    rendered = _render("did", language, protocol)
    assert [m.role for m in rendered.messages] == ["system", "user"]
    system = rendered.messages[0].content
    code = "## 2. R Code" if language == "r" else "## 2. Python Code"
    headings = ["## 1. Identification Strategy", code, "## 3. Expected Findings"]
    assert [system.index(h) for h in headings] == sorted(system.index(h) for h in headings)
    assert "expert applied econometrician" in system
    assert "robustness" in system
    assert FORBIDDEN.search(system) is None


@pytest.mark.parametrize("family", FAMILIES)
def test_user_message_presents_the_scenario(family: Family) -> None:
    scenario, _ = _inputs(family)
    user = _render(family, "r", "paper").messages[1].content
    for text in (scenario.title, scenario.research_question, scenario.data_description):
        assert text in user
    assert f"`{scenario.data_file}`" in user
    first_six = reference_csv(REFERENCE_IDS[family][0]).read_text().splitlines()[:6]
    assert "```csv\n" + "\n".join(first_six) + "\n```" in user
    for column in scenario.columns:
        assert re.search(rf"- `{column}`: (integer|numeric \(double\))", user)


def test_column_types_follow_the_data() -> None:
    user = _render("did", "r", "paper").messages[1].content
    assert "- `unit_id`: integer" in user
    assert "- `y`: numeric (double)" in user


def test_paper_protocol_adds_nothing_of_ours() -> None:
    rendered = _render("iv", "r", "paper")
    text = "\n".join(m.content for m in rendered.messages)
    assert "ESTIMATE" not in text
    for package in ("sandwich", "statsmodels"):
        assert package not in text
    assert "Python" not in text
    assert "R Code" in text


@pytest.mark.parametrize("language", LANGUAGES)
def test_default_protocol_names_language_packages_and_estimate_line(language: Language) -> None:
    rendered = _render("rdd", language, "default")
    system, user = (m.content for m in rendered.messages)
    assert "`ESTIMATE: <number>`" in system
    own, other = ("R", "Python") if language == "r" else ("Python", "R")
    assert f"Write the analysis in {own}." in user
    assert f"## 2. {own} Code" in system and f"## 2. {other} Code" not in system
    own_pkgs = MANIFEST.r_packages if language == "r" else MANIFEST.python_packages
    other_pkgs = MANIFEST.python_packages if language == "r" else MANIFEST.r_packages
    for name, version in own_pkgs.items():
        assert f"{name} {version}" in user
    for name in other_pkgs:
        assert name not in user
    assert reference_scenario(REFERENCE_IDS["rdd"][0], "rdd").target in user


def test_packages_listed_in_sorted_order() -> None:
    user = _render("did", "r", "default").messages[1].content
    assert user.index("AER") < user.index("lmtest") < user.index("sandwich")


def test_design_packages_are_listed_only_for_their_designs() -> None:
    # a package made for one design is offered only where that design is the question
    packages = {"pandas": "2.2.3", "differences": "0.3.0", "pysyncon": "1.7.0", "rdrobust": "2.1"}
    manifest = MANIFEST.model_copy(update={"python_packages": packages})
    did = _render("did", "python", "default", manifest=manifest).messages[1].content
    rdd = _render("rdd", "python", "default", manifest=manifest).messages[1].content
    assert "pandas 2.2.3" in did and "pandas 2.2.3" in rdd
    for name in ("differences", "pysyncon", "rdrobust"):
        assert name not in did
    assert "rdrobust 2.1" in rdd and "pysyncon" not in rdd and "differences" not in rdd


def test_no_manifest_means_no_package_list() -> None:
    user = _render("did", "python", "default", manifest=None).messages[1].content
    assert "Write the analysis in Python." in user
    assert "installed" not in user
    assert "statsmodels" not in user


def test_hash_is_sha256_of_canonical_json() -> None:
    rendered = _render("event_study", "python", "default")
    payload = json.dumps(
        [m.model_dump(mode="json") for m in rendered.messages],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert rendered.sha256 == hashlib.sha256(payload.encode("utf-8")).hexdigest()
    assert messages_sha256(list(rendered.messages)) == rendered.sha256


def test_rendering_is_deterministic_and_inputs_change_the_hash() -> None:
    hashes = {
        (family, language, protocol): _render(family, language, protocol).sha256
        for family in FAMILIES
        for language in LANGUAGES
        for protocol in ("paper", "default")
    }
    assert len(set(hashes.values())) == len(hashes)
    assert _render("did", "r", "default") == _render("did", "r", "default")
    assert _render("did", "r", "default", manifest=None).sha256 != hashes[("did", "r", "default")]


def test_rendered_prompt_is_frozen() -> None:
    rendered = _render("did", "r", "paper")
    with pytest.raises(AttributeError):
        rendered.sha256 = "x"  # type: ignore[misc]


def test_unknown_protocol_is_rejected() -> None:
    with pytest.raises(ValueError, match="protocol"):
        _render("did", "r", "published")


def test_every_default_scenario_shows_its_file_head_verbatim(default_suite_dir: Path) -> None:
    from causalverify.scenarios import load_suite

    suite = load_suite(default_suite_dir)
    for scenario in suite.scenarios:
        rendered = render_experiment_b(
            scenario,
            suite.read_data(scenario),
            language="python",
            protocol="default",
            manifest=MANIFEST,
        )
        head = (suite.root / scenario.data_file).read_text().splitlines()[:6]
        user = rendered.messages[1].content
        assert "```csv\n" + "\n".join(head) + "\n```" in user, scenario.id
        assert scenario.target in user
        assert FORBIDDEN.search(rendered.messages[0].content) is None

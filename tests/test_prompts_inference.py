"""The default protocol asks for the reported inference (SE, CI, VCOV); the paper one does not."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from causalverify.families import CORE_FAMILIES as FAMILIES
from causalverify.families import LANGUAGES, Family, Language
from causalverify.prompts import render_experiment_b
from reference_exec import REFERENCE_IDS, reference_csv, reference_scenario


def _system(family: Family, language: Language, protocol: str) -> str:
    source = REFERENCE_IDS[family][0]
    rendered = render_experiment_b(
        reference_scenario(source, family),
        pd.read_csv(reference_csv(source)),
        language=language,
        protocol=protocol,  # type: ignore[arg-type]
        manifest=None,
    )
    return rendered.messages[0].content


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_default_protocol_asks_for_se_ci_and_vcov_before_the_estimate(
    family: Family, language: Language
) -> None:
    system = _system(family, language, "default")
    lines = ("`SE: <number>`", "`CI: [<lo>, <hi>]`", "`VCOV: <text>`", "`ESTIMATE: <number>`")
    positions = [system.index(line) for line in lines]
    assert positions == sorted(positions)
    assert "last line your script prints must be the `ESTIMATE:` line" in system
    # the request names no variance estimator, so it does not steer the analysis
    request = system[system.index("The script must end by") :]
    assert not re.search(r"cluster|robust|HC[0-3]|sandwich|heterosk", request, re.IGNORECASE)


@pytest.mark.parametrize("language", LANGUAGES)
def test_paper_protocol_asks_for_no_inference_lines(language: Language) -> None:
    system = _system("did", language, "paper")
    for marker in ("SE:", "CI:", "VCOV:", "ESTIMATE"):
        assert marker not in system

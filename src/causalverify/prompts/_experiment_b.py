"""Experiment B prompts: one system and one user message per (scenario, language, protocol).

Two protocols:

``paper``
    The published three-section format: the model is an expert applied econometrician and
    answers with an identification strategy, one R code block, and expected findings. (Asked
    for Python, only the code section's heading and fence say Python instead of R.) The user
    message gives the title, research question, data description, the CSV path, the first five
    rows and the column types. Nothing is said about packages or the output format.
``default``
    The same, plus the language (R or Python), the packages the execution environment actually
    has (from the :class:`~causalverify.records.Manifest`), and the request to end
    the script with machine-readable lines: ``SE: <number>``, ``CI: [<lo>, <hi>]``,
    ``VCOV: <text>`` (how the SE was computed) and, last, ``ESTIMATE: <number>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

import pandas as pd

from causalverify.designs import DESIGNS
from causalverify.families import Language
from causalverify.records import Manifest, Message, messages_sha256
from causalverify.scenarios.model import Scenario

Protocol = Literal["paper", "default"]

#: How section 2 is titled for each language.
CODE_SECTION: dict[Language, str] = {"r": "## 2. R Code", "python": "## 2. Python Code"}
LANGUAGE_NAME: dict[Language, str] = {"r": "R", "python": "Python"}
FENCE_TAG: dict[Language, str] = {"r": "r", "python": "python"}

#: Python packages made for one kind of design (each design's ``design_packages``), listed only
#: in the prompts of the families that use them (every other installed package is listed for
#: every scenario)
DESIGN_PACKAGES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        package: frozenset(f for f, d in DESIGNS.items() if package in d.design_packages)
        for package in sorted(set().union(*(d.design_packages for d in DESIGNS.values())))
    }
)


@dataclass(frozen=True, kw_only=True)
class RenderedPrompt:
    """The messages sent to a model for one cell, and their hash.

    Attributes
    ----------
    messages
        The system message followed by the user message.
    sha256
        Hex SHA-256 of the canonical JSON of ``messages`` (see :func:`messages_sha256`).
    """

    messages: tuple[Message, ...]
    sha256: str


def render_experiment_b(
    scenario: Scenario,
    data: pd.DataFrame,
    *,
    language: Language,
    protocol: Protocol,
    manifest: Manifest | None,
) -> RenderedPrompt:
    """Render the Experiment B prompt for one scenario.

    Parameters
    ----------
    scenario
        The scenario whose text and data path the prompt presents.
    data
        The scenario's realised data as read from its CSV (used for the first rows and the
        column types).
    language
        ``"r"`` or ``"python"``. Under ``paper`` with ``"r"`` the text is the published
        format; with ``"python"`` only the code section's heading and fence change.
    protocol
        ``"paper"`` (the published format) or ``"default"`` (adds language, installed packages
        and the ``ESTIMATE:`` line).
    manifest
        What the execution environment has installed; ``None`` means packages are not mentioned.

    Returns
    -------
    RenderedPrompt
        The two messages and their hash. Identical inputs give identical output.
    """
    if protocol not in ("paper", "default"):
        raise ValueError(f"unknown protocol {protocol!r}; expected 'paper' or 'default'")
    if language not in CODE_SECTION:
        raise ValueError(f"unknown language {language!r}; expected 'r' or 'python'")
    system = _system_message(language, protocol)
    user = _user_message(scenario, data, language, protocol, manifest)
    messages = (Message(role="system", content=system), Message(role="user", content=user))
    return RenderedPrompt(messages=messages, sha256=messages_sha256(messages))


def _system_message(language: Language, protocol: Protocol) -> str:
    name = LANGUAGE_NAME[language]
    lines = [
        "You are an expert applied econometrician. You are given a research scenario and a "
        "dataset. Choose a credible way to identify the causal effect asked about, and write "
        f"{name} code that estimates it on the data provided.",
        "",
        "Answer in exactly three sections, with these headings:",
        "",
        "## 1. Identification Strategy",
        "Which research design you use and why, and the key assumptions it relies on.",
        "",
        CODE_SECTION[language],
        f"Exactly one fenced code block (```{FENCE_TAG[language]}). The script must be complete "
        "and self-contained: it reads the CSV file from the relative path given in the scenario, "
        "runs the analysis, prints a clear numerical result for the effect, and includes basic "
        "robustness checks.",
        "",
        "## 3. Expected Findings",
        "The sign and approximate magnitude of the effect you expect to find.",
    ]
    if protocol == "default":
        lines += [
            "",
            f"The code is run non-interactively with {name}, with the data file placed at the "
            "given relative path in the working directory. There is no network access and no "
            "package can be installed, so use only the packages listed as available.",
            "The script must end by printing these four lines, in this order, each exactly once:",
            "`SE: <number>` (the standard error of your estimate),",
            "`CI: [<lo>, <hi>]` (its 95% confidence interval),",
            "`VCOV: <text>` (how the standard error was computed, in a few words),",
            "`ESTIMATE: <number>` (your point estimate of the target quantity).",
            "Write the numbers as plain decimal numbers (for example `ESTIMATE: -0.1234`). The "
            "last line your script prints must be the `ESTIMATE:` line; print no other line "
            "starting with `ESTIMATE:`, `SE:`, `CI:` or `VCOV:`.",
        ]
    return "\n".join(lines) + "\n"


def _user_message(
    scenario: Scenario,
    data: pd.DataFrame,
    language: Language,
    protocol: Protocol,
    manifest: Manifest | None,
) -> str:
    parts = [
        f"# {scenario.title}",
        f"## Research question\n{scenario.research_question}",
        f"## Data description\n{scenario.data_description}",
        f"## Data file\n`{scenario.data_file}` (CSV with a header row, relative to the working "
        "directory)",
        f"## Column types\n{_column_types(data)}",
        f"## First 5 rows\n```csv\n{_head_csv(data)}```",
    ]
    if protocol == "default":
        parts.append(f"## Target quantity\n{scenario.target}")
        parts.append(_environment_section(language, manifest, scenario.family))
    return "\n\n".join(parts) + "\n"


def _head_csv(data: pd.DataFrame) -> str:
    """The first five rows as CSV text, formatted the way the suite writes its files."""
    text: str = data.head(5).to_csv(index=False, lineterminator="\n")
    return text


def _column_types(data: pd.DataFrame) -> str:
    return "\n".join(f"- `{col}`: {_type_name(data[col])}" for col in data.columns)


def _type_name(column: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(column):
        return "logical"
    if pd.api.types.is_integer_dtype(column):
        return "integer"
    if pd.api.types.is_float_dtype(column):
        return "numeric (double)"
    return "character"


def _environment_section(language: Language, manifest: Manifest | None, family: str) -> str:
    name = LANGUAGE_NAME[language]
    head = f"## Execution environment\nWrite the analysis in {name}."
    if manifest is None:
        return head
    if language == "r":
        version = manifest.r_version or "unknown version"
        packages = manifest.r_packages
        intro = f"It runs with R {version}; the installed add-on packages are:"
    else:
        packages = {
            pkg: ver
            for pkg, ver in manifest.python_packages.items()
            if family in DESIGN_PACKAGES.get(pkg, frozenset({family}))
        }
        intro = f"It runs with Python {manifest.python_version}; the installed packages are:"
    listing = ", ".join(f"{pkg} {ver}" for pkg, ver in sorted(packages.items()))
    text = f"{head} {intro} {listing or '(none)'}."
    if language == "python":
        text += " The Python standard library is available as usual."
    return text

"""What a design family is: the :class:`Design` record every layer reads, and its parts' types."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

import numpy as np
import pandas as pd

from causalverify.designs._code import AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult
from causalverify.designs._inference import SeVariants
from causalverify.families import Difficulty, Family

#: grid parameters of a scenario: sizes and noise (``n_units``, ``sigma`` ...)
Params = Mapping[str, float | int]


@dataclass(frozen=True, kw_only=True)
class GridGroup:
    """A group of grid entries sharing their parameters: one scenario per ``beta``."""

    group: str
    difficulties: tuple[Difficulty, ...]
    params: tuple[tuple[str, float | int], ...]
    betas: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.betas) != len(self.difficulties):
            raise ValueError(f"grid group {self.group!r}: one difficulty per beta is needed")


@dataclass(frozen=True, kw_only=True)
class ScenarioText:
    """Everything a scenario says in words, plus the facts its sentences state."""

    topic: str
    title: str
    research_question: str
    data_description: str
    columns: dict[str, str]
    target: str
    facts: dict[str, object]
    conversions: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class ReportedScales:
    """The scales besides its own on which a design's estimate may be reported: an event
    study's per-day effect is also reported cumulated over k days of its event window."""

    #: the multiples of the estimate a reported figure may be (1 is the estimate itself): all
    #: of them are accepted under profile ``paper`` (named ``k=<k>``), and extraction takes a
    #: figure that is one of them times another printed figure for the same estimate
    multiples: tuple[int, ...]
    #: the scales accepted under profile ``default`` when a scenario declares none (name ->
    #: multiple); a scenario of the design declares its own (``Scenario.conversions``)
    default: Mapping[str, int]
    #: whether figures are reported over windows of the design's time axis (``CAR[-10,-2]``),
    #: so that a window ending before the event marks a placebo
    event_windows: bool


@dataclass(frozen=True)
class CodeHints:
    """Variable names read off the script: aliases of the effect term and IV variables."""

    aliases: frozenset[str] = field(default_factory=frozenset)
    endogenous: frozenset[str] = field(default_factory=frozenset)
    instruments: frozenset[str] = field(default_factory=frozenset)
    #: terms the code picks one coefficient-table row by (``coef(summary(fit))["x", ]``,
    #: ``.loc["x"]``): the name of a row printed without its term
    row_terms: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Analysis:
    """One analysis of a design: a short name (for the build log) and what it does."""

    name: str
    label: str
    compute: Callable[[pd.DataFrame], float]


@dataclass(frozen=True)
class DesignAnalyses:
    """The analyses a draw of a design must separate: every defensible one within the scoring
    tolerance of the canonical, every characteristic mistake outside it."""

    defensible: tuple[Analysis, ...]
    mistakes: tuple[Analysis, ...]


class Stated(Protocol):
    """What a suite check reads of a scenario besides its data (a ``Scenario`` has it all)."""

    @property
    def id(self) -> str: ...

    @property
    def facts(self) -> dict[str, object]: ...

    @property
    def data_description(self) -> str: ...

    @property
    def conversions(self) -> dict[str, int]: ...


class Generator(Protocol):
    """Draws one realised data set in the family's published layout."""

    def __call__(self, params: Params, beta: float, rng: np.random.Generator) -> pd.DataFrame: ...


class TextWriter(Protocol):
    """Writes a scenario's text; the topic is the ``ordinal``-th (shifted by the suite seed)."""

    def __call__(self, params: Params, *, ordinal: int, suite_seed: int) -> ScenarioText: ...


@dataclass(frozen=True, kw_only=True)
class Design:
    """Everything one design family is. One instance per family, in ``designs/<family>.py``.

    Attributes
    ----------
    family : Family
        The family's name.
    columns : tuple of str
        The published CSV layout, in order (what the generator writes).
    required_columns : tuple of str
        The columns the canonical estimator reads (a subset of ``columns``).
    groups : tuple of GridGroup
        The parameter grid of the family's suite, in suite order (the core designs' first group
        is ``base``).
    generate : Generator
        Draws a realised data set from grid parameters, the true effect and a generator.
    canonical : callable
        The canonical estimator (profile ``paper``) on a realised data set.
    naive_answer : callable or None
        What the textbook regression reports on these data, for the designs where it is wrong
        (the modern designs); ``None`` where the textbook regression is the canonical.
    topics : tuple
        The applied topics the texts are written over (cycled by scenario).
    render_text : TextWriter
        The scenario's text.
    check : callable
        The family's suite checks of a scenario and its realised data (the layout already
        matches): human-readable violations, each starting with the scenario id.
    r_code, python_code : FamilyCode
        The reference agents' code pieces in R and in Python.
    prose : AgentProse
        The prose of the reference agents' answers.
    analyses : DesignAnalyses or None
        The defensible analyses and characteristic mistakes a draw must separate to enter the
        modern suite (:mod:`causalverify.scenarios.acceptance`); ``None`` outside it.
    inference : SeVariants or None
        The canonical SE under each variance estimator a competent analysis may use, and the
        reference variant; ``None`` for the designs without variants (the modern ones).
    design_packages : frozenset of str
        Python packages made for this kind of design: a prompt lists them only to the families
        that name them (may be empty).
    term_score : callable
        Scores a printed coefficient name (normalised, neither intercept nor a code alias) as
        the family's effect term: ``None`` never, larger is better.
    spec_bad : re.Pattern
        Specification names the family never takes as its main estimate.
    effect_alias : re.Pattern or None
        Right-hand sides of assignments that define the effect term under another name.
    instrumented : bool
        Whether the estimate is a second-stage (instrumental-variables) coefficient.
    discontinuity : {"sharp", "fuzzy"} or None
        The regression-discontinuity estimator (``rdrobust``, sharp or ``fuzzy=``) that fits the
        design, if any: its logged fit's ``conventional`` row is the effect.
    label_good : re.Pattern
        Words in a printed label or heading that name the family's effect.
    label_bad : re.Pattern
        Words in a printed label or heading that name another quantity of the design.
    scales : ReportedScales or None
        The other scales the estimate may be reported on (the event study's cumulative
        effects); ``None`` for a design whose estimate has one scale.
    judge_target : str
        The quantity the optional model judge is asked to read off the output, as the end of
        the sentence "The quantity wanted is ..." of its prompt.
    """

    family: Family
    columns: tuple[str, ...]
    required_columns: tuple[str, ...]
    groups: tuple[GridGroup, ...]
    generate: Generator
    canonical: Callable[[pd.DataFrame], CanonicalResult]
    naive_answer: Callable[[pd.DataFrame], float] | None
    topics: tuple[object, ...]
    render_text: TextWriter
    check: Callable[[Stated, pd.DataFrame], list[str]]
    r_code: FamilyCode
    python_code: FamilyCode
    prose: AgentProse
    analyses: DesignAnalyses | None
    inference: SeVariants | None
    design_packages: frozenset[str]
    term_score: Callable[[str, CodeHints], int | None]
    spec_bad: re.Pattern[str]
    effect_alias: re.Pattern[str] | None
    instrumented: bool
    discontinuity: Literal["sharp", "fuzzy"] | None
    label_good: re.Pattern[str]
    label_bad: re.Pattern[str]
    scales: ReportedScales | None
    judge_target: str


T = TypeVar("T")


def pick_topic(topics: tuple[T, ...], ordinal: int, suite_seed: int) -> T:
    """The topic of the ``ordinal``-th scenario (0-based) of a family in a suite.

    Topics are cycled so consecutive scenarios of a family differ; the suite seed shifts the start.
    """
    return topics[(ordinal + suite_seed) % len(topics)]


def stated_in(pattern: str, text: str) -> tuple[str, ...] | None:
    """The groups of ``pattern``'s first match in a scenario's text (``None`` if absent)."""
    match = re.search(pattern, text)
    return None if match is None else match.groups()


def dictionary(columns: Mapping[str, str]) -> str:
    """The column dictionary closing a data description."""
    lines = [f"- `{name}`: {meaning}" for name, meaning in columns.items()]
    return "Columns:\n" + "\n".join(lines)

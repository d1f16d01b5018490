"""The reference panel: deterministic agents that answer Experiment B prompts with real code.

Each agent has one documented behaviour (see ``docs/REFERENCE_PANEL.md``):

``textbook``
    the correct design; reproduces the canonical estimate exactly.
``naive``
    a plausible but biased analysis (no pre-period differencing, a benchmark contaminated by
    the event window, OLS ignoring endogeneity, a difference in means over the whole sample).
``cumulative``
    reports a cumulative effect where a per-period one is the target (DID, event study); IV and
    RDD have no per-period target, so it behaves like ``textbook`` there.
``wrong-term``
    fits a model and reports a neighbouring coefficient (a main effect, the market beta, the
    first stage, the running-variable slope).
``naive-se``
    gets the point right and the inference wrong (``default`` protocol): unclustered OLS standard
    errors on panel data (DID, event study), the second-stage OLS standard error of a
    two-stage least squares done by hand (IV), a two-sample standard error that ignores the
    local linear fit (RDD).
``fragile``
    on a deterministic ~40% of scenarios either loads a package that is not installed or
    misspells a column name; otherwise ``textbook``.
``mute``
    runs the correct model and never prints the estimate.
``prose``
    describes the analysis in words, with no code at all.

In repair mode, shown the execution feedback on its answer, ``fragile`` and ``mute`` write the
textbook script (:data:`REPAIRS`); the others repeat themselves.
"""

from __future__ import annotations

import hashlib
from typing import Final, Literal

from causalverify.designs import DESIGNS
from causalverify.designs.rdd import CUTOFF
from causalverify.errors import ProviderError, SetupError
from causalverify.families import Language
from causalverify.records import ScenarioFacts
from causalverify.reference._code import Variant, assemble
from causalverify.reference._pieces import code_pieces

AGENTS: Final[tuple[str, ...]] = (
    "textbook",
    "naive",
    "cumulative",
    "wrong-term",
    "naive-se",
    "fragile",
    "mute",
    "prose",
)

#: one line per agent, for ``causalverify models``
AGENT_SUMMARIES: Final[dict[str, str]] = {
    "textbook": "the correct design; reproduces the canonical estimate",
    "naive": "a plausible but biased analysis (no differencing, OLS ignoring endogeneity, ...)",
    "cumulative": "reports a cumulative effect where a per-period one is asked (DID, event study)",
    "wrong-term": "fits a model and reports a neighbouring coefficient",
    "naive-se": "the right point with a wrong standard error (unclustered on panels, ...)",
    "fragile": "on ~40% of scenarios loads a missing package or misspells a column",
    "mute": "runs the correct model and never prints the estimate",
    "prose": "describes the analysis in words, with no code",
}

FragileFault = Literal["missing", "typo"]


def require_agent(agent: str) -> str:
    """``agent`` if it is a reference agent.

    Raises
    ------
    ProviderError
        Naming the agents there are (a ``reference/<agent>`` spec with an unknown agent).
    """
    if agent not in AGENTS:
        raise ProviderError(f"unknown reference agent {agent!r}; choose one of {', '.join(AGENTS)}")
    return agent


_SECTION_TITLES: Final[dict[Language, str]] = {"r": "## 2. R Code", "python": "## 2. Python Code"}


def fragile_fault(scenario_id: str) -> FragileFault | None:
    """Which failure the ``fragile`` agent injects for a scenario, if any.

    A scenario's SHA-256 bucket decides: 1 in 5 gets a package that is not installed, 1 in 5 a
    misspelled column name, the rest the textbook script.

    Parameters
    ----------
    scenario_id
        The scenario's id, e.g. ``"s001"``.

    Returns
    -------
    {"missing", "typo"} or None
        The injected failure, or ``None`` when the script is the textbook one.
    """
    bucket = int(hashlib.sha256(f"fragile:{scenario_id}".encode()).hexdigest(), 16) % 5
    if bucket == 0:
        return "missing"
    if bucket == 1:
        return "typo"
    return None


#: what an agent writes when shown execution feedback on its previous answer (repair mode):
#: ``fragile`` fixes its package or column name and ``mute`` prints its estimate, both becoming
#: the textbook script; the others write what they wrote before (``prose`` still writes no code,
#: and an executed script with an estimate gets no feedback at all)
REPAIRS: Final[dict[str, str]] = {"fragile": "textbook", "mute": "textbook"}


def repaired_agent(agent: str, turn: int) -> str:
    """The agent whose answer ``agent`` gives at ``turn`` of a repair-mode conversation."""
    return REPAIRS.get(agent, agent) if turn > 1 else agent


def write_response(
    agent: str,
    scenario: ScenarioFacts,
    *,
    language: Language,
    protocol: Literal["paper", "default"],
) -> str:
    """Write a reference agent's full markdown answer to an Experiment B prompt.

    Parameters
    ----------
    agent
        One of :data:`AGENTS`.
    scenario
        The scenario being answered.
    language
        ``"r"`` or ``"python"``: the language of the code block.
    protocol
        ``"default"`` makes the script end with ``ESTIMATE: <number>`` (``textbook`` and
        ``naive-se`` print ``SE:``, ``CI:`` and ``VCOV:`` lines before it); ``"paper"`` prints a
        labelled ``Estimated effect: <number>`` line only.

    Returns
    -------
    str
        Markdown with the three sections ``## 1. Identification Strategy``, ``## 2. R Code`` (or
        ``## 2. Python Code``) and ``## 3. Expected Findings``; section 2 holds one fenced code
        block that reads ``scenario.data_file`` relative to the working directory (except for
        ``prose``, which has no code). Identical inputs give identical text.

    Raises
    ------
    SetupError
        If ``agent`` is not a reference agent.
    """
    if agent not in AGENTS:
        raise SetupError(
            f"unknown reference agent {agent!r}; choose one of: {', '.join(AGENTS)} "
            "(for example --models reference/textbook)"
        )
    if language not in _SECTION_TITLES:
        raise ValueError(f"unknown language {language!r}; expected 'r' or 'python'")
    prose = DESIGNS[scenario.family].prose
    strategy = prose.naive_identification if agent == "naive" else prose.identification
    if agent == "prose":
        body = prose.plan
    else:
        code = _script(agent, scenario, language, protocol)
        body = f"```{language}\n{code}```"
    return (
        f"## 1. Identification Strategy\n\n{strategy}\n\n"
        f"{_SECTION_TITLES[language]}\n\n{body}\n\n"
        f"## 3. Expected Findings\n\n{prose.expected}\n"
    )


def agent_variant(agent: str, scenario_id: str) -> Variant:
    """The script variant an agent writes for a scenario (``prose`` has none: ValueError)."""
    if agent == "fragile":
        return fragile_fault(scenario_id) or "textbook"
    if agent in ("textbook", "naive", "cumulative", "wrong-term", "naive-se", "mute"):
        return agent  # type: ignore[return-value]
    raise ValueError(f"agent {agent!r} writes no script")


def _script(
    agent: str, scenario: ScenarioFacts, language: Language, protocol: Literal["paper", "default"]
) -> str:
    pieces, reporter = code_pieces(language, scenario.family)
    cutoff = scenario.facts.get("cutoff", CUTOFF)
    return assemble(
        pieces,
        reporter,
        agent_variant(agent, scenario.id),
        data_file=scenario.data_file,
        cutoff=float(cutoff) if isinstance(cutoff, int | float) else CUTOFF,
        estimate_line=protocol == "default",
    )

"""Offline confidence answers of the reference panel, for the calibration arm.

Each agent states confidences that fit its documented behaviour (``docs/REFERENCE_PANEL.md``),
so a calibration run of the panel shows the phenomena the arm measures without any API key:

``textbook``, ``naive-se``
    always right (the point), modestly confident (slightly under-confident).
``naive``, ``wrong-term``
    usually wrong and as confident as ``textbook`` or more: over-confidence.
``cumulative``
    confident everywhere, wrong on the per-period designs.
``fragile``
    less sure of the number where it loaded a package it is unsure is installed (the scenarios
    where it fails on a missing package); unaware of its misspelled columns. Its confidence
    therefore separates right from wrong partly (AUROC above 0.5).
``mute``
    answers in percentages written as strings, inside a fenced block with prose around it.
``prose``
    answers on a 0-100 scale and gives ``null`` for the numerical confidence (it wrote no code),
    which the parser records as missing.

Values carry a small deterministic jitter (from a hash of agent, scenario and language) so that
bins and ranks are not all ties. Under the ``paper`` prompt (the stricter "within 20%" wording)
every agent states a numerical confidence 0.10 lower.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final, Literal

from causalverify.errors import SetupError
from causalverify.families import Language
from causalverify.records import ScenarioFacts
from causalverify.reference._agents import AGENTS, fragile_fault

#: base (method, specification, numerical) confidence of each agent
BASE: Final[dict[str, tuple[float, float, float]]] = {
    "textbook": (0.92, 0.86, 0.82),
    "naive": (0.90, 0.86, 0.88),
    "cumulative": (0.90, 0.84, 0.80),
    "wrong-term": (0.93, 0.90, 0.90),
    "naive-se": (0.92, 0.86, 0.82),
    "fragile": (0.90, 0.84, 0.82),
    "mute": (0.90, 0.85, 0.60),
    "prose": (0.80, 0.50, 0.0),
}
#: the ``fragile`` agent's (specification, numerical) where it loaded a missing package
FRAGILE_UNSURE: Final[tuple[float, float]] = (0.70, 0.55)
JITTER: Final[float] = 0.04
PAPER_NUMERICAL_SHIFT: Final[float] = 0.10


def _jitter(agent: str, scenario_id: str, language: str, slot: int) -> float:
    digest = hashlib.sha256(f"confidence:{agent}:{scenario_id}:{language}:{slot}".encode())
    unit = int.from_bytes(digest.digest()[:8], "big") / 2**64
    return (2.0 * unit - 1.0) * JITTER


def agent_confidences(
    agent: str,
    scenario: ScenarioFacts,
    *,
    language: Language,
    protocol: Literal["paper", "default"],
) -> tuple[float, float, float]:
    """The (method, specification, numerical) confidences an agent states, in [0, 1].

    Raises
    ------
    SetupError
        If ``agent`` is not a reference agent.
    """
    if agent not in AGENTS:
        raise SetupError(f"unknown reference agent {agent!r}; choose one of: {', '.join(AGENTS)}")
    method, spec, numerical = BASE[agent]
    if agent == "fragile" and fragile_fault(scenario.id) == "missing":
        spec, numerical = FRAGILE_UNSURE
    if protocol == "paper":
        numerical -= PAPER_NUMERICAL_SHIFT
    values = [
        min(1.0, max(0.0, round(v + _jitter(agent, scenario.id, language, i), 2)))
        for i, v in enumerate((method, spec, numerical))
    ]
    return values[0], values[1], values[2]


def write_confidence(
    agent: str,
    scenario: ScenarioFacts,
    *,
    language: Language,
    protocol: Literal["paper", "default"],
) -> str:
    """Write a reference agent's answer to the calibration prompt.

    Parameters
    ----------
    agent
        One of :data:`~causalverify.reference.AGENTS`.
    scenario
        The scenario whose Experiment B answer is being assessed.
    language
        The language of that answer.
    protocol
        The calibration prompt protocol, ``"default"`` or ``"paper"``.

    Returns
    -------
    str
        The answer text; identical inputs give identical text.
    """
    method, spec, numerical = agent_confidences(
        agent, scenario, language=language, protocol=protocol
    )
    if agent == "mute":
        body = {
            "method_confidence": f"{method:.0%}",
            "specification_confidence": f"{spec:.0%}",
            "numerical_confidence": f"{numerical:.0%}",
        }
        text = json.dumps(body, indent=2)
        return f"Here is my assessment:\n\n```json\n{text}\n```\n\nI kept the output brief."
    if agent == "prose":
        body_p: dict[str, int | None] = {
            "method_confidence": round(100 * method),
            "specification_confidence": round(100 * spec),
            "numerical_confidence": None,
        }
        return (
            "I described the analysis in words and did not write code, so I cannot state a "
            f"confidence in a number.\n{json.dumps(body_p)}\n"
        )
    return json.dumps(
        {
            "method_confidence": method,
            "specification_confidence": spec,
            "numerical_confidence": numerical,
        }
    )

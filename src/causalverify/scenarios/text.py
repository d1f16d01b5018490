"""Scenario text: title, research question, data description with a column dictionary, target.

Each family writes its own text (``render_text`` of its design module in
:mod:`causalverify.designs`). The sentences that carry checkable facts use fixed phrasings, so
:mod:`causalverify.scenarios.checks` can read them back and compare them with the data:

- did: ``The first treated period is period 5.`` and ``... with `unit_id` below 100 ...``
- event_study: ``Event window: days -10 to +10.`` and ``Effect window: days 0 to +10.``
- iv: ``Coding of `z`: z = 1 if ..., 0 otherwise.``
- rdd: ``... at or above the cutoff of 0.5 are treated ...`` and ``... within 0.3 of the cutoff ...``

Column names are the only words written in backticks. No text names the design family or its
estimator (see :data:`causalverify.scenarios.checks.FORBIDDEN`).
"""

from __future__ import annotations

from collections.abc import Mapping

from causalverify.designs import DESIGNS, ScenarioText
from causalverify.designs.event_study import CONVERSIONS as ES_CONVERSIONS
from causalverify.families import Family

__all__ = ["ES_CONVERSIONS", "ScenarioText", "render_text"]


def render_text(
    family: Family, params: Mapping[str, float | int], *, ordinal: int, suite_seed: int
) -> ScenarioText:
    """Write the text of one scenario.

    Parameters
    ----------
    family : Family
        The design family (never named in the text).
    params : Mapping
        The grid parameters (sizes are stated in the text).
    ordinal : int
        0-based position of the scenario among the suite's scenarios of this family.
    suite_seed : int
        The suite seed (shifts which topic comes first).

    Returns
    -------
    ScenarioText
        Title, research question, data description, column dictionary, target, facts.

    Raises
    ------
    KeyError
        For an unknown family.
    """
    return DESIGNS[family].render_text(params, ordinal=ordinal, suite_seed=suite_seed)

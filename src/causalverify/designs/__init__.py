"""Design families: everything one family is, in one module each, and the registry every layer
reads.

``designs/<family>.py`` holds the family's CSV layout and constants (cutoff, windows), its grid
groups, generator, canonical estimator, naive answer (modern designs), topics and text, suite
checks, the extraction vocabulary of its effect term and labels, and the reference agents' code
pieces and prose, gathered in one :class:`Design`. :data:`DESIGNS` keys
them by family; an incomplete family fails at import (:func:`build_registry`).

::

    design(family) -> Design   (.columns, .groups, .generate, .canonical, .render_text, ...)
"""

from __future__ import annotations

from causalverify.designs._base import (
    Analysis,
    CodeHints,
    Design,
    DesignAnalyses,
    Generator,
    GridGroup,
    Params,
    ReportedScales,
    ScenarioText,
    TextWriter,
    pick_topic,
)
from causalverify.designs._code import AgentProse, FamilyCode
from causalverify.designs._estimate import CanonicalResult, finished, package_versions
from causalverify.designs._registry import DESIGNS, build_registry, check_design, design

__all__ = [
    "DESIGNS",
    "AgentProse",
    "Analysis",
    "CanonicalResult",
    "CodeHints",
    "Design",
    "DesignAnalyses",
    "FamilyCode",
    "Generator",
    "GridGroup",
    "Params",
    "ReportedScales",
    "ScenarioText",
    "TextWriter",
    "build_registry",
    "check_design",
    "design",
    "finished",
    "package_versions",
    "pick_topic",
]

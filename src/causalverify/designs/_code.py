"""The reference agents' code pieces and prose, as each design module states them.

A reference agent's script is a setup piece (imports, reading the CSV, derived columns), an
analysis piece that leaves the reported number in ``est``, optional robustness output, an
inference piece and a report piece; :mod:`causalverify.reference` assembles them per agent. Each
family's module holds its pieces in both languages (``R_CODE``, ``PYTHON_CODE``) and the prose of
its answers (``PROSE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, kw_only=True)
class FamilyCode:
    """The code pieces for one design family in one language.

    Each analysis piece assigns the number it reports to ``est``; ``textbook`` also leaves the
    fitted model in ``fit`` for ``robustness``. ``<<DATA>>`` stands for the CSV path and
    ``<<CUTOFF>>`` for the running-variable cutoff.
    """

    setup: str
    textbook: str
    robustness: str
    naive: str
    cumulative: str
    wrong_term: str
    missing: str
    typo: str
    #: printed (as a plain-text line) before the number by the variant that reports it; see
    #: :data:`DESCRIPTIONS`
    descriptions: dict[str, str]
    #: ``default`` protocol only, after ``textbook``'s analysis: the reference variant's SE in
    #: ``se`` (clustered CR1 for panels, HC1 otherwise) and its description in ``vcov_used``;
    #: empty for the designs without canonical inference
    inference: str = ""
    #: ``naive-se``: the analysis when it differs from ``textbook``'s (a hand-made two-stage
    #: least squares), else empty; the point estimate is ``textbook``'s either way
    naive_se: str = ""
    #: ``naive-se``, ``default`` protocol only: a wrong SE in ``se`` and ``vcov_used``
    naive_se_inference: str = ""


@dataclass(frozen=True, kw_only=True)
class AgentProse:
    """The prose of a reference agent's answer for one design family."""

    #: section 1 of the agents that use the correct design
    identification: str
    #: section 1 of the ``naive`` agent, which ignores the design's key adjustment
    naive_identification: str
    #: section 3: what the analysis is expected to find
    expected: str
    #: section 2 of the ``prose`` agent: how it would do the analysis, without any code
    plan: str


#: the R packages every textbook design's setup loads (robust and clustered SEs)
R_SE_HELPERS: Final[str] = """\
library(sandwich)
library(lmtest)
"""

#: the Python imports every textbook design's setup starts with
PY_IMPORTS: Final[str] = """\
import pandas as pd
import statsmodels.formula.api as smf
"""

"""The code pieces of a language and family: the family's design, the language's reporter."""

from __future__ import annotations

from causalverify.designs import DESIGNS, FamilyCode
from causalverify.families import Family, Language
from causalverify.reference import _python_code, _r_code
from causalverify.reference._code import Reporter


def code_pieces(language: Language, family: Family) -> tuple[FamilyCode, Reporter]:
    """Return the code pieces and the reporter for a language and family."""
    design = DESIGNS[family]
    if language == "r":
        return design.r_code, _r_code.REPORTER
    return design.python_code, _python_code.REPORTER

"""The code templates of each language, chosen by language and family."""

from __future__ import annotations

from causalverify.families import MODERN_FAMILIES, Family, Language
from causalverify.reference import _modern_code, _python_code, _r_code
from causalverify.reference._code import FamilyCode, Reporter


def code_pieces(language: Language, family: Family) -> tuple[FamilyCode, Reporter]:
    """Return the code pieces and the reporter for a language and family."""
    module = _r_code if language == "r" else _python_code
    if family in MODERN_FAMILIES:
        modern = _modern_code.R_PIECES if language == "r" else _modern_code.PYTHON_PIECES
        return modern[family], module.REPORTER
    return module.PIECES[family], module.REPORTER

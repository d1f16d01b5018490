"""The code templates of each language, chosen by language and family."""

from __future__ import annotations

from causalverify.families import Family, Language
from causalverify.reference import _python_code, _r_code
from causalverify.reference._code import FamilyCode, Reporter


def code_pieces(language: Language, family: Family) -> tuple[FamilyCode, Reporter]:
    """Return the code pieces and the reporter for a language and family."""
    module = _r_code if language == "r" else _python_code
    return module.PIECES[family], module.REPORTER

"""Which printed term is the treatment effect of a design family, and which contexts to distrust.

The family-specific vocabulary (effect terms, specification names, aliases, whether the estimate
is a second-stage one) lives in each design (:mod:`causalverify.designs`); this module applies it.

Scores are small integers: ``None`` means "never this term", a larger score is a better match.
Code hints (variable names the script defines or instruments it declares) widen the matches.
"""

from __future__ import annotations

import re
from typing import Final

from causalverify.designs import DESIGNS, CodeHints
from causalverify.families import Family

__all__ = [
    "IV_CONTEXT",
    "MAIN_CONTEXT",
    "OLS_CONTEXT",
    "SECONDARY",
    "CodeHints",
    "code_hints",
    "context_score",
    "normalize_term",
    "spec_score",
    "term_score",
]

_INTERCEPT: Final = re.compile(r"^\(?(intercept|const(ant)?|_cons|\(intercept\))\)?$")
#: words in a table's preceding text or a label that mark a secondary specification
SECONDARY: Final = re.compile(
    r"robustness|sensitivity|placebo|pre-?trend|falsification|alternative|donut|heterogen"
    r"|subgroup|balance|density|mccrary|leads|first[- ]stage|reduced[- ]form|naive"
    r"|specification\s*[2-9]|check"
)
#: words that mark an instrumental-variables (second-stage) result
IV_CONTEXT: Final = re.compile(
    r"ivreg|iv_robust|2sls|tsls|iv-2sls|instrumental|\biv\b|second[- ]stage|estimation:\s+iv"
)
#: words that mark an OLS result when an IV one is wanted
OLS_CONTEXT: Final = re.compile(r"\bols\b|naive|first[- ]stage|reduced[- ]form|\blm\(formula")
#: words that mark the preferred specification
MAIN_CONTEXT: Final = re.compile(r"\bmain\b|final|preferred|primary|headline|baseline spec")


def normalize_term(term: str) -> str:
    """Lower-case a printed term and drop factor-level decorations (``TRUE``, ``[T.True]``)."""
    t = term.strip().strip("`'\"").lower()
    t = re.sub(r"\[t\.(true|1|1\.0)\]", "", t)
    t = re.sub(r"(true|1)$", "", t) if re.search(r"[a-z)](true)$", t) else t
    return t.replace("`", "")


def term_score(term: str, family: Family, hints: CodeHints) -> int | None:
    """Score how well a printed coefficient name matches the family's effect term.

    An intercept never matches and an alias the code defines always does; every other name is
    scored by the family's design (:attr:`~causalverify.designs.Design.term_score`).
    """
    t = normalize_term(term)
    if not t or _INTERCEPT.match(t):
        return None
    if t in hints.aliases:
        return 3
    return DESIGNS[family].term_score(t, hints)


def spec_score(name: str, family: Family) -> int:
    """Score a row of a table of specifications (``spec``/``model`` column) as the main one.

    -5 for a robustness, placebo or other secondary specification and for one the family never
    takes as its estimate (OLS for IV, a global or polynomial fit for RDD); +2 for one named main,
    preferred or baseline; 0 otherwise.
    """
    low = name.lower()
    if SECONDARY.search(low) or DESIGNS[family].spec_bad.search(low):
        return -5
    return 2 if MAIN_CONTEXT.search(low) else 0


def context_score(context: str, family: Family) -> int:
    """Adjust a candidate by the text printed just before it (lower-cased)."""
    score = 0
    if SECONDARY.search(context):
        score -= 3
    if MAIN_CONTEXT.search(context):
        score += 1
    if DESIGNS[family].instrumented:
        if IV_CONTEXT.search(context):
            score += 2
        elif OLS_CONTEXT.search(context):
            score -= 2
    return score


_ASSIGN = re.compile(
    r"""(?:\$|\[\s*["']|\b)(\w+)["']?\s*\]?\s*(?:<-|=(?!=))\s*(.+)""",
)


def code_hints(code: str, family: Family) -> CodeHints:
    """Read aliases of the effect term and, for IV, the endogenous and instrument names."""
    design = DESIGNS[family]
    aliases: set[str] = set()
    if design.effect_alias is not None:
        for line in code.splitlines():
            for m in _ASSIGN.finditer(line):
                name, rhs = m.group(1).lower(), m.group(2).lower()
                if design.effect_alias.search(rhs):
                    aliases.add(name)
    endog, instr = _iv_names(code) if design.instrumented else (set(), set())
    rows = {m.group(1) or m.group(2) for m in _ROW_PICK.finditer(code)}
    return CodeHints(frozenset(aliases), frozenset(endog), frozenset(instr), frozenset(rows))


_ROW_PICK: Final = re.compile(
    r"""\[\s*["']([^"'\]]+)["']\s*,\s*\]|\.loc\[\s*["']([^"'\]]+)["']\s*\]"""
)


def _split_vars(part: str) -> set[str]:
    names = re.findall(r"[A-Za-z_.][\w.]*", part)
    return {n.lower() for n in names if n not in {"1", "0", "data", "df"}}


def _iv_names(code: str) -> tuple[set[str], set[str]]:
    endog: set[str] = set()
    instr: set[str] = set()
    for m in re.finditer(r"\[\s*([\w.+ ]+?)\s*~\s*([\w.+ ]+?)\s*\]", code):  # linearmodels
        endog |= _split_vars(m.group(1))
        instr |= _split_vars(m.group(2))
    for m in re.finditer(r"\|\s*([\w.+ ]+?)\s*~\s*([\w.+ ]+?)\s*[\"']", code):  # pyfixest
        endog |= _split_vars(m.group(1))
        instr |= _split_vars(m.group(2))
    for m in re.finditer(
        r"~([^~|\"'\n]+)\|([^~|\"'\n,)]+)(?=[,)\"'\n]|$)", code
    ):  # R: y ~ x + w | z + w
        regs, insts = _split_vars(m.group(1)), _split_vars(m.group(2))
        endog |= regs - insts
        instr |= insts - regs
    for m in re.finditer(r"endog\s*=\s*\w+\s*(?:\.(\w+)|\[\[?\s*['\"](\w+)['\"])", code):
        endog.add((m.group(1) or m.group(2)).lower())
    for m in re.finditer(r"instruments\s*=\s*\w+\s*(?:\.(\w+)|\[\[?\s*['\"](\w+)['\"])", code):
        instr.add((m.group(1) or m.group(2)).lower())
    return endog - instr, instr

"""Which printed term is the treatment effect of a design family, and which contexts to distrust.

Scores are small integers: ``None`` means "never this term", a larger score is a better match.
Code hints (variable names the script defines or instruments it declares) widen the matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from causalverify.families import Family

_INTERCEPT: Final = re.compile(r"^\(?(intercept|const(ant)?|_cons|\(intercept\))\)?$")
_INTERACTION_SEP: Final = re.compile(r":|\*|×|\bx\b|_x_")
_DID_NAME: Final = re.compile(
    r"\bdid\b|^did|diff.?in.?diff|^d_?i_?d$|treat\w*[_.:*× ]+(x[_. ])?\w*(post|after)"
    r"|(post|after)\w*[_.:*× ]+(x[_. ])?\w*treat|^txp$|^tp$|treat_?post|post_?treat"
)
_ES_POST: Final = re.compile(
    r"^post|post_?event|event_?(window|period|dummy|post|ind)|^after|^event$|^ed$|^d$"
    r"|>=\s*0|>\s*-1|^treat|^in_?window|^post_?day"
)
_ES_NEVER: Final = re.compile(r"mkt|market|beta|alpha|stock|^c\(|factor\(|rel_?day|^event_?day$")
_RDD_TREAT: Final = re.compile(
    r"^treat(ed|ment)?(true|1)?$|^d$|above|right|^rd$|^t$|>=|cutoff|^treat"
)
_RDD_NEVER: Final = re.compile(r"running|^x_?c$|centered|dist|score|slope|^x$|:|\*|×")
_IV_GOOD: Final = re.compile(
    r"^x$|x_?hat|xhat|fitted|^fit_|_fit$|pred|endog|^x_|2sls|tsls|^iv$|instrumented"
)
_IV_NEVER: Final = re.compile(r"^z$|instrument|^z_|control|^ols$|naive|first")
_STAGGERED: Final = re.compile(
    r"^att$|overall|^simple|^agg|^treat(ed|ment)?$|^d$|^post$|treat\w*[_.:*× ]+post|^did$"
)
_FUZZY_GOOD: Final = re.compile(r"took_?up|take_?up|participat|fitted|x_?hat|2sls|tsls|^iv$|^late$")
_FUZZY_NEVER: Final = re.compile(r"eligib|running|^rc$|^r_?c$|centered|centred|:|\*|×|first")
_SYNTH: Final = re.compile(r"^att$|effect|gap|^post$|treat\w*[_.:*× ]+post|^treat(ed|ment)?$")

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


@dataclass(frozen=True)
class CodeHints:
    """Variable names read off the script: aliases of the effect term and IV variables."""

    aliases: frozenset[str] = field(default_factory=frozenset)
    endogenous: frozenset[str] = field(default_factory=frozenset)
    instruments: frozenset[str] = field(default_factory=frozenset)
    #: terms the code picks one coefficient-table row by (``coef(summary(fit))["x", ]``,
    #: ``.loc["x"]``): the name of a row printed without its term
    row_terms: frozenset[str] = field(default_factory=frozenset)


def normalize_term(term: str) -> str:
    """Lower-case a printed term and drop factor-level decorations (``TRUE``, ``[T.True]``)."""
    t = term.strip().strip("`'\"").lower()
    t = re.sub(r"\[t\.(true|1|1\.0)\]", "", t)
    t = re.sub(r"(true|1)$", "", t) if re.search(r"[a-z)](true)$", t) else t
    return t.replace("`", "")


def term_score(term: str, family: Family, hints: CodeHints) -> int | None:
    """Score how well a printed coefficient name matches the family's effect term."""
    t = normalize_term(term)
    if not t or _INTERCEPT.match(t):
        return None
    if t in hints.aliases:
        return 3
    if family == "did":
        return _did_score(t)
    if family == "event_study":
        if _ES_NEVER.search(t):
            return None
        return 2 if _ES_POST.search(t) else None
    if family == "rdd":
        if _RDD_NEVER.search(t) and not re.search(r">=", t):
            return None
        return 2 if _RDD_TREAT.search(t) else None
    if family == "staggered_did":
        return 2 if _STAGGERED.search(t) else None
    if family == "fuzzy_rdd":
        if t in hints.instruments or _FUZZY_NEVER.search(t):
            return None
        return 3 if t in hints.endogenous else (2 if _FUZZY_GOOD.search(t) else None)
    if family == "synthetic_control":
        return 2 if _SYNTH.search(t) else None
    return _iv_score(t, hints)


def _did_score(t: str) -> int | None:
    if _DID_NAME.search(t):
        return 3
    if _INTERACTION_SEP.search(t):
        parts = [p for p in re.split(r":|\*|×|_x_", t) if p.strip()]
        treat = any("treat" in p for p in parts)
        if len(parts) == 2 and treat and any(re.search(r"post|after|policy", p) for p in parts):
            return 2
    return None


#: the fitted values of a first stage used as the second-stage regressor
_PREDICTED: Final = re.compile(r"^(predict|fitted)(\.values)?\(")


def _iv_score(t: str, hints: CodeHints) -> int | None:
    if _PREDICTED.match(t):
        return 2
    if t in hints.instruments or _IV_NEVER.search(t):
        return None
    if t in hints.endogenous:
        return 3
    return 2 if _IV_GOOD.search(t) else None


#: specification names a family never takes as its main estimate
_SPEC_BAD: Final[dict[Family, re.Pattern[str]]] = {
    "did": re.compile(r"pre[- ]?period|simple diff|no controls"),
    "event_study": re.compile(r"market|pre[- ]?event|estimation window"),
    "iv": re.compile(r"\bols\b(?!.*(2sls|iv\b))|naive|first[- ]stage|reduced[- ]form"),
    "rdd": re.compile(r"slope|global|polynomial|quadratic|cubic"),
    "staggered_did": re.compile(r"pre[- ]?period|simple diff|no controls|placebo"),
    "fuzzy_rdd": re.compile(r"sharp|first[- ]stage|reduced[- ]form|intent|\bitt\b|\bols\b"),
    "synthetic_control": re.compile(r"pre[- ]?period|placebo|\bfit\b|\brmspe\b"),
}


def spec_score(name: str, family: Family) -> int:
    """Score a row of a table of specifications (``spec``/``model`` column) as the main one.

    -5 for a robustness, placebo or other secondary specification and for one the family never
    takes as its estimate (OLS for IV, a global or polynomial fit for RDD); +2 for one named main,
    preferred or baseline; 0 otherwise.
    """
    low = name.lower()
    if SECONDARY.search(low) or _SPEC_BAD[family].search(low):
        return -5
    return 2 if MAIN_CONTEXT.search(low) else 0


def context_score(context: str, family: Family) -> int:
    """Adjust a candidate by the text printed just before it (lower-cased)."""
    score = 0
    if SECONDARY.search(context):
        score -= 3
    if MAIN_CONTEXT.search(context):
        score += 1
    if family in ("iv", "fuzzy_rdd"):
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
    aliases: set[str] = set()
    for line in code.splitlines():
        for m in _ASSIGN.finditer(line):
            name, rhs = m.group(1).lower(), m.group(2).lower()
            if _alias_of_effect(rhs, family):
                aliases.add(name)
    endog, instr = _iv_names(code) if family in ("iv", "fuzzy_rdd") else (set(), set())
    rows = {m.group(1) or m.group(2) for m in _ROW_PICK.finditer(code)}
    return CodeHints(frozenset(aliases), frozenset(endog), frozenset(instr), frozenset(rows))


_ROW_PICK: Final = re.compile(
    r"""\[\s*["']([^"'\]]+)["']\s*,\s*\]|\.loc\[\s*["']([^"'\]]+)["']\s*\]"""
)


def _alias_of_effect(rhs: str, family: Family) -> bool:
    if family == "did":
        return bool(
            re.search(r"treat\w*\W*\s*\*\s*\W*\w*\W*post|post\w*\W*\s*\*\s*\W*\w*treat", rhs)
        )
    if family == "event_study":
        return bool(re.search(r"event_?day\W*\s*(>=\s*0|>\s*-1)", rhs))
    if family == "rdd":
        return bool(re.search(r"running\w*\W*\s*>=?\s*[\d.]", rhs))
    return False


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

"""``ESTIMATE:`` marker lines and labelled lines (``cat("DiD estimate:", b)``, ``print(f"...")``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from causalverify.extraction._numbers import NUMBER, normalize_line, parse_number
from causalverify.extraction._terms import MAIN_CONTEXT, SECONDARY
from causalverify.families import Family

#: ``[1] "`` / ``[1]`` prefixes of R prints and surrounding quotes
_R_PREFIX: Final = re.compile(r"^\s*(?:\[\d+\]\s*)?[\"']?")
#: the protocol's marker exactly: upper case, a colon (markdown emphasis around it is tolerated)
_MARKER: Final = re.compile(rf"^\s*\**\s*ESTIMATE\s*\**\s*:\s*\**\s*({NUMBER})")
_LABELLED: Final = re.compile(
    rf"(?P<label>[^:=\n]*?[A-Za-z][^:=\n]*?)(?:[:=≈]|\bis\b|\bwas\b|\bequals\b|\bof\b(?=\s*[-+.\d]))"
    rf"\s*(?:approximately\s*|about\s*)?[\[(]?\s*(?P<num>{NUMBER})(?P<pct>\s*%)?"
)
_POSITIVE: Final = re.compile(
    r"estimate|effect|impact|\bate\b|\batt\b|\blate\b|coefficient|\bcoef\b|\bdid\b|diff.?in.?diff"
    r"|difference[- ]in[- ]differences|2sls|tsls|\biv\b|discontinuity|\brdd?\b|jump|\bcaa?r\b"
    r"|\baa?r\b|abnormal|\bbeta_?hat\b|β̂"
)
_NEGATIVE: Final = re.compile(
    r"\bse\b|std|standard|s\.e\.|error|t[- ]?stat|t[- ]?value|\bt\b|p[- ]?val|\bp\b|pr\(|\bci\b"
    r"|conf|interval|lower|upper|f[- ]?stat|\bf\b|\bn\b|\bobs|observations|r[- ]?squared|\br2\b"
    r"|bandwidth|\bsd\b|variance|\bdf\b|degrees|rmse|aic|bic|likelihood|weak|wald (test|stat|chi)"
    r"|hausman|sargan|partial|(control|treated|baseline|pre|outcome|dependent|group)\s*(group\s*)?mean"
    r"|mean (of )?(y|outcome)|(fixed|random|entity|time) effects|number|count|percent|share of|proportion|cutoff value|seed|rows|columns"
)
_FAMILY_BAD: Final[dict[Family, re.Pattern[str]]] = {
    "did": re.compile(
        r"main effect|coef\w* (on|for|of) (treated|post)\s*$|pre[- ]?period|simple diff"
    ),
    "event_study": re.compile(
        r"\bmarket\b|\bmkt\b|\balpha\b|\bbeta\b|pre[- ]?event|estimation window"
    ),
    "iv": re.compile(
        r"\bols\b(?!.*(2sls|iv\b))|naive|first[- ]stage|reduced[- ]form|coef\w* on z\b"
    ),
    "rdd": re.compile(r"slope|global|polynomial|quadratic|running"),
    "staggered_did": re.compile(r"pre[- ]?period|placebo|\bpre\b"),
    "fuzzy_rdd": re.compile(
        r"sharp|first[- ]stage|reduced[- ]form|intent|\bitt\b|take[- ]?up (jump|rate)|\bols\b"
    ),
    "synthetic_control": re.compile(r"pre[- ]?period|placebo|rmspe|\bweight"),
}
_FAMILY_GOOD: Final[dict[Family, re.Pattern[str]]] = {
    "did": re.compile(r"\bdid\b|diff|interaction|twfe|treat\w*\s*[x×:*]\s*post"),
    "event_study": re.compile(
        r"per[- ]day|daily|average (ar|abnormal)|mean (ar|abnormal)|\baar\b|post[- ]event"
    ),
    "iv": re.compile(r"\biv\b|2sls|tsls|instrument|\blate\b|wald|second[- ]stage"),
    "rdd": re.compile(r"\brdd?\b|discontinuity|jump|at (the )?cutoff|local"),
    "staggered_did": re.compile(r"\batt\b|overall|aggregate|average (treatment )?effect"),
    "fuzzy_rdd": re.compile(r"\biv\b|2sls|tsls|wald|\blate\b|take[- ]?up effect|ratio"),
    "synthetic_control": re.compile(r"\batt\b|post[- ]?period|average (post )?gap|effect"),
}


@dataclass(frozen=True)
class Labelled:
    """A number printed after a label, with the score of the label for the family."""

    label: str
    value: float
    line: int
    score: int
    percent: bool


def _clean(raw: str) -> str:
    text = normalize_line(raw)
    text = _R_PREFIX.sub("", text, count=1)
    return text.replace('"', " ").replace("`", "")


def find_markers(stdout: str) -> list[tuple[float, int]]:
    """Every ``ESTIMATE: <number>`` line as (value, 1-based line), in printing order.

    Only the protocol's spelling counts (``Estimate: 0.4`` is a labelled line, not the marker).
    """
    found: list[tuple[float, int]] = []
    for no, raw in enumerate(stdout.splitlines(), start=1):
        m = _MARKER.match(_clean(raw))
        if m:
            value = parse_number(m.group(1))
            if value is not None:
                found.append((value, no))
    return found


def label_score(label: str, family: Family) -> int | None:
    """Score a label for the family; None when it names something other than the effect."""
    low = label.lower().strip()
    bare = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", low)  # "Estimate (SE)" -> "Estimate"
    if not _POSITIVE.search(low) or _NEGATIVE.search(bare):
        return None
    if _FAMILY_BAD[family].search(bare):
        return None
    score = 2
    if _FAMILY_GOOD[family].search(low):
        score += 2
    if MAIN_CONTEXT.search(low):
        score += 1
    if SECONDARY.search(bare):
        score -= 4
    return score


def find_labelled(stdout: str, family: Family) -> list[Labelled]:
    """Every labelled number whose label names an effect estimate, in printing order."""
    out: list[Labelled] = []
    for no, raw in enumerate(stdout.splitlines(), start=1):
        text = _clean(raw)
        m = _LABELLED.search(text)
        if not m or len(m.group("label")) > 90:
            continue
        score = label_score(m.group("label"), family)
        value = parse_number(m.group("num"))
        if score is None or value is None:
            continue
        pct = bool(m.group("pct"))
        out.append(Labelled(m.group("label").strip(" :=-*#"), value, no, score, pct))
    return out

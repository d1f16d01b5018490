"""What the code that printed a line says about it: variable names and nearby comments.

The line that printed a labelled number is found by its label text (a string literal of the
code); the names on that code line (outside the literal) and the comments just above it say
whether it prints a naive, first-stage, placebo or robustness result, or the main one.
"""

from __future__ import annotations

import re
from typing import Final

from causalverify.designs import DESIGNS
from causalverify.extraction._evidence import _NAIVE, Candidate
from causalverify.extraction._terms import MAIN_CONTEXT, SECONDARY
from causalverify.families import Family
from causalverify.records import OutputOrigin

_STRING: Final = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
_WORDS: Final = re.compile(r"[a-z][a-z0-9_ ().\-]{5,}")
_MAX_LINES: Final = 5000
_MAX_LOOKUPS: Final = 400
#: variable names that hold a naive, first-stage or secondary fit
_SECONDARY_NAME: Final = re.compile(
    r"(?<![a-z])(naive|first_?stage|fs|reduced_?form|rf|placebo|pooled|simple)(?![a-z])"
)
_OLS_NAME: Final = re.compile(r"(?<![a-z])ols(?![a-z])")


class CodeLines:
    """The code, indexed for finding the statement that printed a label."""

    def __init__(self, code: str) -> None:
        self.lines = [x.lower() for x in code.splitlines()[:_MAX_LINES]]
        self.lookups = 0
        self.cache: dict[str, int | None] = {}

    def find(self, label: str) -> int | None:
        """The first code line whose text contains the label's words (0-based), or None."""
        needle = " ".join(label.lower().split())
        needle = needle.strip(" :=-*#>[(")[-40:]
        m = _WORDS.search(needle)
        if m is None or len(needle) < 6:
            return None
        needle = needle[m.start() :]
        if needle in self.cache:
            return self.cache[needle]
        self.lookups += 1
        found = None
        if self.lookups <= _MAX_LOOKUPS:
            found = next(
                (i for i, x in enumerate(self.lines) if needle in " ".join(x.split())), None
            )
        self.cache[needle] = found
        return found

    def context(self, at: int) -> tuple[str, str]:
        """The names on the printing line (literals removed) and the comment that heads its
        paragraph of code (the comment lines above it, across code lines up to a blank one)."""
        names = _STRING.sub(" ", self.lines[at].split("#")[0])
        comments: list[str] = []
        for j in range(at - 1, max(-1, at - 12), -1):  # the comment heading its paragraph
            text = self.lines[j].strip()
            if text.startswith("#"):
                comments.append(text)
            elif comments or not text:
                break
        return names, " ".join(comments)

    def evidence(self, cand: Candidate, family: Family) -> None:
        """Add what the printing code says to ``cand`` (a labelled number)."""
        at = self.find(cand.printed.label)
        if at is None:
            return
        names, comments = self.context(at)
        if SECONDARY.search(comments) or _NAIVE.search(comments):
            cand.add(-2.0, f"the comment above the printing code: {comments[:60]!r}")
        elif MAIN_CONTEXT.search(comments):
            cand.add(1.0, f"the comment above the printing code: {comments[:60]!r}")
        bad = _SECONDARY_NAME.search(names)
        if bad is None and DESIGNS[family].instrumented:
            bad = _OLS_NAME.search(names)
        if bad is not None:
            cand.add(-2.0, f"the printing code uses {bad.group(0)!r}")


def call_name(function: str) -> str:
    """The name a script calls a fitting function by (``AER::ivreg`` -> ``ivreg``)."""
    return re.split(r"::|\.", function)[-1].lower()


class FitSites:
    """Where in the code each logged fit was made: the n-th fit of a function is taken to be
    its n-th call in the code, when the code calls it at least that often (a loop breaks this;
    then nothing is said)."""

    def __init__(self, code: CodeLines, functions: list[str]) -> None:
        self.code = code
        seen: dict[str, int] = {}
        self.sites: list[int | None] = []
        calls: dict[str, list[int]] = {}
        for function in functions:
            name = call_name(function)
            n = seen.get(name, 0)
            seen[name] = n + 1
            if name not in calls:
                pat = re.compile(rf"(?<![\w.]){re.escape(name)}\s*\(")
                calls[name] = [i for i, x in enumerate(code.lines) if pat.search(x.split("#")[0])]
            lines = calls[name]
            # only when the calls and the fits of this function correspond one to one
            total = sum(1 for f in functions if call_name(f) == name)
            self.sites.append(lines[n] if len(lines) == total else None)

    def evidence(self, cand: Candidate, fit: int, family: Family) -> None:
        """What the comments above the code that made fit ``fit`` say about its coefficient."""
        at = self.sites[fit] if 0 <= fit < len(self.sites) else None
        if at is None:
            return
        names, comments = self.code.context(at)
        assigned = names.split("<-")[0].split("=")[0] if ("<-" in names or "=" in names) else ""
        if SECONDARY.search(comments) or _NAIVE.search(comments):
            cand.add(-3.0, f"the comment above the code that fitted it: {comments[:60]!r}")
        elif MAIN_CONTEXT.search(comments):
            cand.add(1.0, f"the comment above the code that fitted it: {comments[:60]!r}")
        bad = _SECONDARY_NAME.search(assigned) or (
            _OLS_NAME.search(assigned) if DESIGNS[family].instrumented else None
        )
        if bad is not None:
            cand.add(-2.0, f"the fit is stored as {assigned.strip()[:40]!r}")


#: identifiers in code that name an estimate of the effect
_EFFECT_NAME: Final = re.compile(
    r"(?<![a-z])(est|estimate|effect|att|ate|late|did|iv|tsls|2sls|coef|beta|car|aar|ar|tau"
    r"|jump|rd|discontinuity|second_?stage|impact|treat_?x_?post|treat_?post)(?![a-z])"
)


def _identifiers(code: str) -> str:
    """The names of a code line (string literals and comments removed), split into words."""
    text = _STRING.sub(" ", code.split("#")[0])
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", text).lower()
    return " ".join(re.findall(r"[a-z][a-z0-9]*", text.replace("_", " ").replace(".", " ")))


class Origins:
    """What the code that printed each stdout line says (output provenance, when recorded)."""

    def __init__(self, code: CodeLines, origins: dict[int, OutputOrigin]) -> None:
        self.code = code
        self.origins = origins

    def evidence(self, cand: Candidate, family: Family) -> None:
        """The printing code's names and the comments above it; for a number printed without a
        label of its own, the printing code's names are its label."""
        origin = self.origins.get(cand.printed.line)
        if origin is None or not origin.code:
            return
        names = _identifiers(origin.code)
        where = f"printed by line {origin.line}: {origin.code.strip()[:60]!r}"
        bad = _SECONDARY_NAME.search(names.replace(" ", "_")) or (
            _OLS_NAME.search(names) if DESIGNS[family].instrumented else None
        )
        if bad is not None or SECONDARY.search(names) or _NAIVE.search(names):
            cand.add(-2.5, f"{where}, a secondary or naive result")
        elif (
            not cand.printed.label.strip()
            and not cand.printed.column
            and _EFFECT_NAME.search(names)
        ):
            cand.add(2.0, f"{where}, which names an estimate", "code")
        at = (origin.line or 0) - 1
        if 0 <= at < len(self.code.lines):
            _, comments = self.code.context(at)
            if SECONDARY.search(comments) or _NAIVE.search(comments):
                cand.add(-2.0, f"the comment above the printing code: {comments[:60]!r}")
            elif MAIN_CONTEXT.search(comments):
                cand.add(1.0, f"the comment above the printing code: {comments[:60]!r}")

"""Finding the code in a model's answer (layer L2a) and checking that it parses.

A response is markdown. Code sits in fenced blocks (```` ```r ````, ```` ```{r} ````,
```` ```python ````, ``~~~`` fences too). Blocks without a language label are attributed to R or
Python by their content. Two policies pick the block that is executed:

``paper``
    the first R block, whatever language was requested (what the published harness did);
``default``
    the first block of the requested language.

:func:`check_parses` runs the real parser: Python's :func:`ast.parse` in-process (parsing never
executes code) and R's ``parse()`` inside the sandbox, with the code passed as a file.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from causalverify.families import Language
from causalverify.sandbox.base import Limits

if TYPE_CHECKING:
    from causalverify.sandbox.base import Sandbox

__all__ = ["CodeBlock", "ParseCheck", "check_parses", "extract_code", "find_code_blocks"]

Policy = Literal["paper", "default"]

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")

_LABELS: dict[str, Language] = {
    "r": "r",
    "rscript": "r",
    "splus": "r",
    "python": "python",
    "py": "python",
    "python3": "python",
    "py3": "python",
    "ipython": "python",
    "ipython3": "python",
}

# Content cues for unlabelled blocks: (pattern, weight)
_R_CUES: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"^\s*(library|require)\s*\(", re.M), 3),
    (re.compile(r"<-"), 2),
    (re.compile(r"\bread\.csv\s*\(|\bread_csv\s*\(\s*\"|\bfread\s*\("), 2),
    (re.compile(r"\b(lm|glm|feols|ivreg|iv_robust|lm_robust|plm|coeftest)\s*\("), 1),
    (re.compile(r"\bsummary\s*\("), 1),
    (re.compile(r"\bc\s*\("), 1),
    (re.compile(r"%>%|\|>"), 1),
    (re.compile(r"\bfunction\s*\("), 1),
)
_PY_CUES: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"^\s*import\s+\w+", re.M), 3),
    (re.compile(r"^\s*from\s+[\w.]+\s+import\b", re.M), 3),
    (re.compile(r"^\s*def\s+\w+\s*\(.*\)\s*:", re.M), 2),
    (re.compile(r"\bprint\s*\(\s*f?[\"']"), 1),
    (re.compile(r"\bpd\.read_csv\s*\("), 2),
    (re.compile(r"^\s*(for|if|while|with)\b[^\n]*:\s*$", re.M), 1),
    (re.compile(r"\bNone\b|\bTrue\b|\bFalse\b"), 1),
)


@dataclass(frozen=True, kw_only=True)
class CodeBlock:
    """One fenced code block of a response.

    Attributes
    ----------
    language : {"r", "python"}
        Language from the fence label, or inferred from the content for unlabelled blocks.
    code : str
        The block's content without the fences.
    index : int
        Position among all fenced blocks of the response (0-based).
    label : str
        The fence's info string as written (``""`` when unlabelled).
    """

    language: Language
    code: str
    index: int
    label: str


@dataclass(frozen=True, kw_only=True)
class ParseCheck:
    """Result of running the language's parser on a block."""

    ok: bool
    error: str | None = None


def _label_language(info: str) -> Language | None:
    """Map a fence info string (``r``, ``{r}``, ``{r setup, echo=FALSE}``, ``python3``) to a language."""
    word = info.strip()
    if word.startswith("{") and word.endswith("}"):
        word = word[1:-1]
    word = re.split(r"[\s,{}]", word.strip(), maxsplit=1)[0] if word.strip() else ""
    word = word.lstrip(".").lower()
    return _LABELS.get(word)


def guess_language(code: str) -> Language | None:
    """Attribute unlabelled code to R or Python by content cues; ``None`` when undecidable."""
    r_score = sum(w for pat, w in _R_CUES if pat.search(code))
    py_score = sum(w for pat, w in _PY_CUES if pat.search(code))
    if r_score == py_score:
        return None
    if max(r_score, py_score) < 2:
        return None
    return "r" if r_score > py_score else "python"


def _iter_fenced(response: str) -> list[tuple[str, str]]:
    """Return ``(info, body)`` for every fenced block, CommonMark style (closing fence >= opener)."""
    lines = response.splitlines()
    blocks: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if m is None or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence, info, indent = m["fence"], m["info"].strip(), len(m["indent"])
        closer = re.compile(rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and closer.match(lines[i]) is None:
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            i += 1
        i += 1  # skip the closing fence (or run off the end: an unclosed block ends the text)
        text = "\n".join(body)
        blocks.append((info, text + "\n" if text else ""))
    return blocks


def find_code_blocks(response: str) -> list[CodeBlock]:
    """All fenced R/Python blocks of a response, in order; blocks of other languages are skipped.

    Parameters
    ----------
    response : str
        The model's markdown answer.

    Returns
    -------
    list of CodeBlock
        Blocks whose language is known from the label or inferred from the content. ``index``
        counts every fenced block, including skipped ones.
    """
    found: list[CodeBlock] = []
    for index, (info, body) in enumerate(_iter_fenced(response)):
        if not body.strip():
            continue
        language = _label_language(info) if info else guess_language(body)
        if language is None:
            continue
        found.append(CodeBlock(language=language, code=body, index=index, label=info))
    return found


def extract_code(
    response: str, language: Language, *, policy: Policy = "default"
) -> CodeBlock | None:
    """Pick the block to execute from a response.

    Parameters
    ----------
    response : str
        The model's markdown answer.
    language : {"r", "python"}
        The language the prompt asked for.
    policy : {"default", "paper"}
        ``default``: the first block in ``language``. ``paper``: the first R block, as the
        published harness did; the published harness had no Python arm, so a Python cell under
        ``paper`` takes the first Python block (never an R block it could not run).

    Returns
    -------
    CodeBlock or None
        ``None`` when no block qualifies (the cell fails L2a as ``no_code``).
    """
    if policy not in ("default", "paper"):
        raise ValueError(
            f"unknown code-extraction policy {policy!r}; expected 'default' or 'paper'"
        )
    wanted: Language = language
    for block in find_code_blocks(response):
        if block.language == wanted:
            return block
    return None


# The R checker is a fixed program; the code under test is only ever read from a file.
_R_PARSE_CHECK = """\
res <- tryCatch({
  invisible(parse(file = "code.R", keep.source = FALSE, encoding = "UTF-8"))
  "CAUSALVERIFY_PARSE_OK"
}, error = function(e) paste0("CAUSALVERIFY_PARSE_ERROR ", conditionMessage(e)))
cat(res, "\\n", sep = "")
"""


#: characters of a parser's message that are kept
_MAX_ERROR = 2000

#: CPython 3.11's ``ast.parse`` is not safe from several threads at once ("AST constructor
#: recursion depth mismatch"), and the runner checks cells from a thread pool.
_AST_LOCK = threading.Lock()


def check_parses(code: str, language: Language, sandbox: Sandbox) -> ParseCheck:
    """Run the real parser of ``language`` on ``code``.

    Parameters
    ----------
    code : str
        Source code to check.
    language : {"r", "python"}
        Python is parsed in-process with :func:`ast.parse` (no execution). R is parsed by R's
        ``parse()`` inside ``sandbox``, with the code placed in the scratch folder as a file.
    sandbox : Sandbox
        Used for R only.

    Returns
    -------
    ParseCheck
        ``ok`` and, when it fails, the parser's message.
    """
    if language == "python":
        try:
            with _AST_LOCK:
                ast.parse(code)
        # RecursionError and MemoryError: code nested or long past what CPython's compiler
        # handles (``python script.py`` fails the same way); a parse failure, never the run's
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return ParseCheck(ok=False, error=f"{type(exc).__name__}: {exc}"[:_MAX_ERROR])
        return ParseCheck(ok=True)

    limits = Limits(wall_seconds=60.0, cpu_seconds=30.0, memory_mb=1024, max_output_bytes=100_000)
    source = code.encode("utf-8", "replace")  # a lone surrogate cannot be UTF-8
    # bare: parsing needs only base R, and the check is the harness's program, not a fit
    result = sandbox.run(_R_PARSE_CHECK, "r", {"code.R": source}, limits=limits, bare=True)
    out = result.stdout
    if "CAUSALVERIFY_PARSE_OK" in out:
        return ParseCheck(ok=True)
    marker = "CAUSALVERIFY_PARSE_ERROR "
    if marker in out:
        return ParseCheck(ok=False, error=out.split(marker, 1)[1].strip()[:_MAX_ERROR])
    detail = (result.stderr or result.detail).strip()[-500:]
    return ParseCheck(ok=False, error=f"R parse check did not complete ({result.status}): {detail}")

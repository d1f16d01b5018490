"""Paper records of Experiment A: the JSONL schema and a loader that validates it.

One line of ``papers.jsonl`` is one :class:`PaperRecord`::

    {"id": "p001",
     "title": "...", "authors": ["..."], "year": 1994, "journal": "...", "doi": "10.…",
     "research_question": "...", "data_description": "...", "institutional_context": "...",
     "reference": {"method": "DID", "direction": "positive", "basis": "..."}}

``doi`` and ``reference`` are optional. The three text fields are written in our own words from
public facts about the paper: no abstract sentences and no name of the design or estimator (the
shared check :func:`causalverify.scenarios.checks.find_design_names` must find nothing in them,
nor in the title). ``reference`` is the hand-assigned method family and effect direction with a
one-line basis; it is a fallback label and a sanity check of the model-consensus labels.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from causalverify.errors import SuiteError
from causalverify.scenarios.checks import find_design_names

MethodLabel = Literal["DID", "EVENT_STUDY", "IV", "RDD", "OTHER"]
Direction = Literal["positive", "negative", "mixed", "unclear"]
METHODS: Final[tuple[MethodLabel, ...]] = get_args(MethodLabel)
DIRECTIONS: Final[tuple[Direction, ...]] = get_args(Direction)
#: the four design families every corpus must cover
CORE_METHODS: Final[tuple[MethodLabel, ...]] = ("DID", "EVENT_STUDY", "IV", "RDD")

TEXT_FIELDS: Final[tuple[str, ...]] = (
    "research_question",
    "data_description",
    "institutional_context",
)
MIN_TEXT: Final[int] = 40
MAX_TEXT: Final[int] = 500
MIN_PAPERS: Final[int] = 60
MIN_PER_FAMILY: Final[int] = 10
_ID = re.compile(r"^p\d{3}$")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")


class ReferenceLabel(BaseModel):
    """A hand-assigned label: method family, effect direction and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: MethodLabel
    direction: Direction
    basis: str = Field(min_length=10, max_length=300)


class PaperRecord(BaseModel):
    """One published empirical paper, described in our own words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=_ID.pattern)
    title: str = Field(min_length=5, max_length=250)
    authors: tuple[str, ...] = Field(min_length=1)
    year: int = Field(ge=1900, le=2030)
    journal: str = Field(min_length=3, max_length=120)
    doi: str | None = Field(default=None, pattern=_DOI.pattern)
    research_question: str = Field(min_length=MIN_TEXT, max_length=MAX_TEXT)
    data_description: str = Field(min_length=MIN_TEXT, max_length=MAX_TEXT)
    institutional_context: str = Field(min_length=MIN_TEXT, max_length=MAX_TEXT)
    reference: ReferenceLabel | None = None

    def citation(self) -> str:
        """``Authors (year), "Title", Journal.``"""
        names = self.authors
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f'{who} ({self.year}), "{self.title}", {self.journal}.'


def default_corpus_path() -> Path:
    """The corpus shipped with the package (``causalverify/papers/data/papers.jsonl``)."""
    return Path(str(resources.files("causalverify.papers") / "data" / "papers.jsonl"))


def record_problems(record: PaperRecord) -> list[str]:
    """Problems of one record beyond its schema: design names in the text fields or title."""
    problems = []
    for name in ("title", *TEXT_FIELDS):
        hits = find_design_names(getattr(record, name), modern=False)
        if hits:
            problems.append(f"{record.id}: {name} names the design ({', '.join(hits)})")
    return problems


def corpus_problems(
    records: Sequence[PaperRecord],
    *,
    min_papers: int = MIN_PAPERS,
    min_per_family: int = MIN_PER_FAMILY,
) -> list[str]:
    """Every problem of a corpus: per-record problems, duplicate ids or titles, coverage.

    Parameters
    ----------
    records
        The parsed records.
    min_papers, min_per_family
        Coverage requirements (at least ``min_per_family`` reference labels of each of the four
        design families).

    Returns
    -------
    list of str
        Empty when the corpus is valid.
    """
    problems = [p for r in records for p in record_problems(r)]
    for what, values in (("id", [r.id for r in records]), ("title", [r.title for r in records])):
        dup = sorted(v for v, n in Counter(values).items() if n > 1)
        problems.extend(f"duplicate {what}: {v}" for v in dup)
    if len(records) < min_papers:
        problems.append(f"the corpus has {len(records)} papers; at least {min_papers} needed")
    counts = Counter(r.reference.method for r in records if r.reference is not None)
    for method in CORE_METHODS:
        if counts[method] < min_per_family:
            problems.append(
                f"{counts[method]} papers labelled {method}; at least {min_per_family} needed"
            )
    return problems


def parse_lines(lines: Iterable[str], *, source: str = "<corpus>") -> list[PaperRecord]:
    """Parse JSONL lines into records (blank lines are skipped).

    Raises
    ------
    SuiteError
        On the first line that is not JSON or does not match the schema.
    """
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(PaperRecord.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[:3]
            raise SuiteError(f"{source} line {number}: {' '.join(first)}") from exc
    return records


def load_papers(
    path: Path | None = None,
    *,
    min_papers: int = MIN_PAPERS,
    min_per_family: int = MIN_PER_FAMILY,
) -> tuple[PaperRecord, ...]:
    """Load and validate a paper corpus.

    Parameters
    ----------
    path
        A JSONL file; ``None`` loads the corpus shipped with the package.
    min_papers, min_per_family
        Coverage requirements (lower them for a small custom corpus).

    Returns
    -------
    tuple of PaperRecord
        In file order.

    Raises
    ------
    SuiteError
        If the file is missing, a line is malformed, or :func:`corpus_problems` finds anything.
    """
    source = path if path is not None else default_corpus_path()
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise SuiteError(f"cannot read the paper corpus {source}: {exc}") from exc
    records = parse_lines(text.splitlines(), source=str(source))
    problems = corpus_problems(records, min_papers=min_papers, min_per_family=min_per_family)
    if problems:
        shown = "; ".join(problems[:5]) + (" …" if len(problems) > 5 else "")
        raise SuiteError(f"the paper corpus {source} is invalid: {shown}")
    return tuple(records)

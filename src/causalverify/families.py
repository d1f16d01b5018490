"""Design families and execution languages, with the published release's spellings."""

from __future__ import annotations

from typing import Final, Literal, get_args

Family = Literal[
    "did", "event_study", "iv", "rdd", "staggered_did", "fuzzy_rdd", "synthetic_control"
]
Language = Literal["r", "python"]
Difficulty = Literal["easy", "medium", "hard"]

FAMILIES: Final[tuple[Family, ...]] = get_args(Family)
#: the four textbook designs of the published benchmark (the default suite)
CORE_FAMILIES: Final[tuple[Family, ...]] = ("did", "event_study", "iv", "rdd")
#: the designs of the modern suite, where the textbook regression is wrong
MODERN_FAMILIES: Final[tuple[Family, ...]] = ("staggered_did", "fuzzy_rdd", "synthetic_control")
LANGUAGES: Final[tuple[Language, ...]] = get_args(Language)
DIFFICULTIES: Final[tuple[Difficulty, ...]] = get_args(Difficulty)

#: ``method_family`` values used by the published release.
PUBLISHED_NAME: Final[dict[Family, str]] = {
    "did": "DID",
    "event_study": "EVENT_STUDY",
    "iv": "IV",
    "rdd": "RDD",
    "staggered_did": "STAGGERED_DID",
    "fuzzy_rdd": "FUZZY_RDD",
    "synthetic_control": "SYNTHETIC_CONTROL",
}
FROM_PUBLISHED: Final[dict[str, Family]] = {v: k for k, v in PUBLISHED_NAME.items()}


def parse_family(value: str) -> Family:
    """Accept ``did`` / ``DID`` / ``event-study`` / ``EVENT_STUDY`` ... and return the canonical name."""
    key = value.strip().lower().replace("-", "_")
    if key in FAMILIES:
        return key
    upper = value.strip().upper().replace("-", "_")
    if upper in FROM_PUBLISHED:
        return FROM_PUBLISHED[upper]
    raise ValueError(f"unknown design family {value!r}; expected one of {', '.join(FAMILIES)}")

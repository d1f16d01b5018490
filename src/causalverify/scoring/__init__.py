"""Scoring a cell: layers L1, L2a, L2b, L2b+ under the ``paper`` or ``default`` profile.

``rescore`` is the one entry point the runner and ``causalverify score`` use; it is pure, so
rescoring a stored run needs no model call and no execution and is byte-for-byte repeatable.
"""

from __future__ import annotations

from causalverify.records import pre_scoring_status
from causalverify.scoring._layers import (
    UNSCOREABLE_BELOW,
    Extractor,
    Match,
    Profile,
    conversions_for,
    is_unscoreable,
    match_estimate,
)
from causalverify.scoring._rescore import (
    MAX_FIT_TERMS,
    SCORING_STAGE,
    capped_fits,
    corroborated_fits,
    rescore,
    score_unread,
)

__all__ = [
    "MAX_FIT_TERMS",
    "SCORING_STAGE",
    "UNSCOREABLE_BELOW",
    "Extractor",
    "Match",
    "Profile",
    "capped_fits",
    "conversions_for",
    "corroborated_fits",
    "is_unscoreable",
    "match_estimate",
    "pre_scoring_status",
    "rescore",
    "score_unread",
]

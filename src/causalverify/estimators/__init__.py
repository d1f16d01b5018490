"""Canonical estimators: the reference every model's estimate is scored against.

``canonical(df, family)`` (profile ``paper``, BENCHMARK §2.2) is built on pyfixest, statsmodels and
linearmodels. :mod:`causalverify.estimators.closed_form` is an independent numpy implementation of
the same estimators, used to cross-check them. ``canonical_inference(df, family)`` gives the
canonical SE under each variance estimator a competent analysis may use.
"""

from __future__ import annotations

from causalverify.designs import CanonicalResult
from causalverify.estimators._canonical import PROFILES, Profile, canonical
from causalverify.estimators._inference import canonical_inference, vcov_kind
from causalverify.estimators.layout import PUBLISHED_LAYOUT, REQUIRED_COLUMNS, validate_columns

__all__ = [
    "PROFILES",
    "PUBLISHED_LAYOUT",
    "REQUIRED_COLUMNS",
    "CanonicalResult",
    "Profile",
    "canonical",
    "canonical_inference",
    "validate_columns",
    "vcov_kind",
]

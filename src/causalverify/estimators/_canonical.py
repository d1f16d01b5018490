"""The public entry point :func:`canonical`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal

import pandas as pd

from causalverify.estimators import _modern, _paper
from causalverify.estimators._result import CanonicalResult
from causalverify.estimators.layout import validate_columns
from causalverify.families import Family

Profile = Literal["paper"]
PROFILES: Final[tuple[Profile, ...]] = ("paper",)

_PAPER: Final[dict[Family, Callable[[pd.DataFrame], CanonicalResult]]] = {
    "did": _paper.did,
    "event_study": _paper.event_study,
    "iv": _paper.iv,
    "rdd": _paper.rdd,
    "staggered_did": _modern.staggered_did,
    "fuzzy_rdd": _modern.fuzzy_rdd,
    "synthetic_control": _modern.synthetic_control,
}


def canonical(data: pd.DataFrame, family: Family, *, profile: Profile = "paper") -> CanonicalResult:
    """Compute the canonical estimate of one realised data set.

    Parameters
    ----------
    data : pandas.DataFrame
        The data in the family's published CSV layout (see
        :data:`causalverify.estimators.layout.PUBLISHED_LAYOUT`), ideally as read back from disk.
    family : {"did", "event_study", "iv", "rdd"}
        The design family.
    profile : {"paper"}, optional
        The estimator profile; ``"paper"`` reproduces the published release (BENCHMARK §2.2).

    Returns
    -------
    CanonicalResult
        Estimate, standard error, number of observations, method, profile and package versions.

    Raises
    ------
    SuiteError
        If a required column is missing or malformed, or the data do not identify the effect.
    ValueError
        If ``family`` or ``profile`` is unknown.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown estimator profile {profile!r}; expected one of {PROFILES}")
    validate_columns(data, family)
    return _PAPER[family](data)

"""The public entry point :func:`canonical`."""

from __future__ import annotations

from typing import Final, Literal

import pandas as pd

from causalverify.designs import DESIGNS, CanonicalResult
from causalverify.estimators.layout import validate_columns
from causalverify.families import Family

Profile = Literal["paper"]
PROFILES: Final[tuple[Profile, ...]] = ("paper",)


def canonical(data: pd.DataFrame, family: Family, *, profile: Profile = "paper") -> CanonicalResult:
    """Compute the canonical estimate of one realised data set.

    Parameters
    ----------
    data : pandas.DataFrame
        The data in the family's published CSV layout (see
        :data:`causalverify.estimators.layout.PUBLISHED_LAYOUT`), ideally as read back from disk.
    family : Family
        The design family (its design's canonical estimator is used).
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
    return DESIGNS[family].canonical(data)

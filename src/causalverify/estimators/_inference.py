"""Canonical inference: the canonical estimate's standard error under each variance estimator a
competent analysis of the design may use, on the realised data.

Variants (``n`` observations, ``G`` clusters, ``e`` the residuals; every SE is of the canonical
estimate of profile ``paper``):

- DID (two-way fixed effects; clusters: units) and event study (pooled market model; clusters:
  stocks):

  - ``cr1``: cluster-robust, ``G/(G-1) * (n-1)/(n-K)`` as fixest and Stata's ``reghdfe`` compute
    it: fixed effects nested in the clusters (the unit effects) are not counted in ``K``
    (pyfixest's default). The reference variant.
  - ``cr1_dummies`` (DID): the same with every fixed-effect dummy counted in ``K`` (R's
    ``lm(... + factor(unit))`` with ``sandwich::vcovCL(type = "HC1")``, ``estimatr``'s
    ``se_type = "stata"``, Stata's ``areg``).
  - ``hc1``: heteroskedasticity-robust, ``n/(n-K)``, ``K`` the full rank with the dummies.
  - ``classical``: ``e'e/(n-K)``, ``K`` the full rank (``lm`` with dummies, fixest ``iid``).
  - ``classical_within`` (DID): ``e'e/(n-2)``, the regression on the within-transformed data
    with an intercept (the published canonical's SE).

- IV (just-identified 2SLS, residuals from the structural equation): ``hc1`` (``n/(n-K)``, the
  reference), ``hc0`` (the published canonical's) and ``classical`` (``e'e/(n-K)``).
- RDD (local linear inside ``near_cutoff``): ``hc1`` (the reference) and ``hc3`` (the published
  canonical's).

The modern families have no variants here (None). Each family's variants are computed in its
design module (``se_variants``, :mod:`causalverify.designs`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import pandas as pd

from causalverify.designs import DESIGNS
from causalverify.errors import SuiteError
from causalverify.estimators.layout import validate_columns
from causalverify.families import Family
from causalverify.records import CanonicalInference

#: the variant the plausible band and the significance call use, by family (from its design)
REFERENCE: Final[Mapping[str, str]] = MappingProxyType(
    {f: d.inference.reference for f, d in DESIGNS.items() if d.inference is not None}
)


def canonical_inference(data: pd.DataFrame, family: Family) -> CanonicalInference | None:
    """The canonical SE of ``data`` under each variant of the family (module docstring).

    Returns None for the families without variants (the modern designs).

    Raises
    ------
    SuiteError
        If a required column is missing or the data do not identify the effect.
    """
    variants = DESIGNS[family].inference
    if variants is None:
        return None
    validate_columns(data, family)
    ses = variants.compute(data)
    if not all(math.isfinite(v) and v > 0 for v in ses.values()):
        raise SuiteError(f"the {family} canonical standard errors are not finite: {ses}")
    return CanonicalInference(ses=ses, reference=variants.reference)


#: how a variance estimator is written (fit log, ``VCOV:`` lines), first match wins
_KINDS: Final = (
    ("cluster", ("cluster", "crv", "cr0", "cr1", "cr2", "cr3", "vcovcl", " by ")),
    ("classical", ("classical", "nonrobust", "iid", "unadjusted", "homoskedastic", "spherical")),
    ("hc0", ("hc0", "debiased=false")),
    ("hc1", ("hc1", "hetero", "stata", "debiased=true")),
    ("hc2", ("hc2",)),
    ("hc3", ("hc3",)),
)


def vcov_kind(text: str | None) -> str | None:
    """The kind of variance estimator a description names: ``cluster``, ``hc0``..``hc3``,
    ``classical``, or None (unknown).

    Reads the fit log's ``vcov`` (:class:`~causalverify.records.FitEntry`) and a script's
    ``VCOV:`` line alike: ``CRV1 by unit_id``, ``vcovCL, cluster = ~id``, ``stata by id`` are
    ``cluster``; linearmodels' ``robust; debiased=False`` is ``hc0``, ``... True`` ``hc1``;
    ``stata`` without clusters and pyfixest's ``hetero`` are ``hc1``.
    """
    if not text:
        return None
    low = f" {text.lower()} "
    for kind, needles in _KINDS:
        if any(needle in low for needle in needles):
            return kind
    return None

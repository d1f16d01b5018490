"""The immutable result of a canonical estimator (generic machinery every design's estimator uses)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version

from causalverify.errors import SuiteError


@dataclass(frozen=True, kw_only=True)
class CanonicalResult:
    """A canonical estimate computed on one realised data set.

    Attributes
    ----------
    estimate : float
        The coefficient of interest (the treatment effect the scenario asks for).
    se : float
        Its standard error under the profile's variance estimator.
    n : int
        Number of observations used by the estimator (for RDD: rows inside the bandwidth).
    method : str
        Short description of the estimator and variance estimator.
    profile : str
        The estimator profile (``"paper"``).
    versions : tuple of (str, str)
        ``(package, version)`` pairs of the numerical packages the estimate depends on.
    """

    estimate: float
    se: float
    n: int
    method: str
    profile: str
    versions: tuple[tuple[str, str], ...]


def finished(
    family: str, estimate: float, se: float, n: int, *, method: str, packages: tuple[str, ...]
) -> CanonicalResult:
    """The result of profile ``paper``; a non-finite estimate or SE means the data do not
    identify the effect (:class:`~causalverify.errors.SuiteError`)."""
    if not (math.isfinite(estimate) and math.isfinite(se)):
        raise SuiteError(
            f"the {family} canonical estimate is not finite (estimate={estimate}, se={se}); "
            "the data do not identify the effect"
        )
    return CanonicalResult(
        estimate=float(estimate),
        se=float(se),
        n=int(n),
        method=method,
        profile="paper",
        versions=package_versions(*packages),
    )


@cache
def package_versions(*packages: str) -> tuple[tuple[str, str], ...]:
    """Return ``(name, version)`` for each installed package, in the order given."""
    out: list[tuple[str, str]] = []
    for name in packages:
        try:
            out.append((name, version(name)))
        except PackageNotFoundError:  # pragma: no cover - all are hard dependencies
            out.append((name, "unknown"))
    return tuple(out)

"""Drawing a scenario's data: the seeded generator of a draw, and the published CSV bytes.

Each family's generator lives in its design module (:mod:`causalverify.designs`); it takes its
size parameters, the true effect ``beta`` and a :class:`numpy.random.Generator`, never touches
global random state, and draws in a fixed order (documented per generator), so the same generator
state always gives the same data. Values are rounded as in the published CSVs: 4 decimals for
``y``, ``x``, ``controls``, ``running_var`` and ``beta``; 6 decimals for ``ret`` and ``mkt_ret``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs import DESIGNS
from causalverify.designs.did import did_treat_start
from causalverify.designs.rdd import rdd_flags
from causalverify.families import FAMILIES, Family

__all__ = [
    "COLUMNS",
    "did_treat_start",
    "generate",
    "rdd_flags",
    "read_csv_bytes",
    "scenario_rng",
    "to_csv_bytes",
]

#: Column layout of each family's CSV, in the published order (from its design).
COLUMNS: Final[Mapping[Family, tuple[str, ...]]] = MappingProxyType(
    {family: DESIGNS[family].columns for family in FAMILIES}
)


def generate(
    family: Family, params: Mapping[str, float | int], beta: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Draw one data set with the family's generator.

    Parameters
    ----------
    family : Family
        The design family.
    params : Mapping
        Size and noise parameters: did ``n_units, n_periods, sigma``; event_study
        ``n_stocks, sigma``; iv and rdd ``n, sigma``; the modern designs' in their modules.
    beta : float
        The true effect.
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    pandas.DataFrame
        The realised data in the family's published layout.

    Raises
    ------
    KeyError
        For an unknown family.
    """
    return DESIGNS[family].generate(params, beta, rng)


def scenario_rng(suite_seed: int, index: int, attempt: int) -> np.random.Generator:
    """The generator of one draw: ``PCG64(SeedSequence([suite_seed, index, attempt]))``."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence([suite_seed, index, attempt]))
    )


def to_csv_bytes(data: pd.DataFrame) -> bytes:
    """Serialise data as published: header, no index, LF line ends, shortest float repr.

    Produces the same bytes as ``data.to_csv(index=False, lineterminator="\\n")`` for integer and
    float columns (Python's shortest round-trip ``repr``), several times faster.
    """
    columns = [data[name].tolist() for name in data.columns]
    lines = [",".join(map(str, data.columns))]
    lines.extend(",".join(map(repr, row)) for row in zip(*columns, strict=True))
    lines.append("")
    return "\n".join(lines).encode("utf-8")


def read_csv_bytes(raw: bytes) -> pd.DataFrame:
    """Read CSV bytes back exactly as a model's script would read the file."""
    return pd.read_csv(io.BytesIO(raw))

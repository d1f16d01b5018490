"""Column layouts the canonical estimators expect (the published CSV layouts).

A CSV missing a required column, or with missing / non-numeric values in one, raises
:class:`~causalverify.errors.SuiteError` naming the column and the family's layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs import DESIGNS
from causalverify.errors import SuiteError
from causalverify.families import FAMILIES, PUBLISHED_NAME, Family

#: Columns each family's canonical estimator reads, in the published order (from its design).
REQUIRED_COLUMNS: Final[Mapping[Family, tuple[str, ...]]] = MappingProxyType(
    {family: DESIGNS[family].required_columns for family in FAMILIES}
)

#: The full published layout of each family (for error messages; from its design).
PUBLISHED_LAYOUT: Final[Mapping[Family, tuple[str, ...]]] = MappingProxyType(
    {family: DESIGNS[family].columns for family in FAMILIES}
)


#: Grouping columns, which may hold identifiers of any type.
ID_COLUMNS: Final[frozenset[str]] = frozenset({"unit_id", "period", "stock_id"})


def _layout_text(family: Family) -> str:
    cols = ", ".join(PUBLISHED_LAYOUT[family])
    return f"the {PUBLISHED_NAME[family]} layout is: {cols}"


def _check_values(series: pd.Series, col: str, family: Family) -> None:
    if col in ID_COLUMNS:
        # Identifiers only group rows: any dtype will do, but every row needs one.
        if series.isna().any():
            raise SuiteError(f"column {col!r} has missing values; {_layout_text(family)}")
        return
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        raise SuiteError(
            f"column {col!r} must be numeric (found dtype {series.dtype}); {_layout_text(family)}"
        )
    if not np.isfinite(series.to_numpy(dtype=float)).all():
        raise SuiteError(f"column {col!r} has missing or non-finite values; {_layout_text(family)}")


def validate_columns(data: pd.DataFrame, family: Family) -> None:
    """Check that ``data`` has every column ``family`` needs, numeric and complete.

    Parameters
    ----------
    data : pandas.DataFrame
        The realised data set.
    family : Family
        The design family.

    Raises
    ------
    SuiteError
        If a required column is missing, non-numeric or has missing values, or the data are empty.
    ValueError
        If ``family`` is not a known design family.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown design family {family!r}; expected one of {', '.join(FAMILIES)}")
    for col in REQUIRED_COLUMNS[family]:
        if col not in data.columns:
            raise SuiteError(
                f"data has no column {col!r} needed by the canonical estimator; "
                f"{_layout_text(family)}"
            )
        _check_values(data[col], col, family)
    if len(data) == 0:
        raise SuiteError(f"data has no rows; {_layout_text(family)}")

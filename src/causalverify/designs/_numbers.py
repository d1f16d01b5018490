"""Number formatting shared by the generators: published rounding, exact cutoff comparisons."""

from __future__ import annotations

from typing import Final

import numpy as np

#: Scale of 4-decimal values as integers (used for exact comparisons with a cutoff and band).
SCALE4: Final[int] = 10_000


def rounded(values: np.ndarray, decimals: int) -> np.ndarray:
    """Round and turn negative zeros into zeros (so the CSV never prints ``-0.0``)."""
    out: np.ndarray = np.round(values, decimals) + 0.0
    return out


def cutoff_flags(
    running_var: np.ndarray, cutoff: float, half_width: float
) -> tuple[np.ndarray, np.ndarray]:
    """``running_var >= cutoff`` and ``|running_var - cutoff| <= half_width`` of 4-decimal values,
    compared on integers (ten-thousandths), so a value printed as ``0.8`` is inside ``[0.2, 0.8]``
    exactly as a scenario's text says, free of binary rounding."""
    scaled = np.rint(np.asarray(running_var, dtype=float) * SCALE4).astype(np.int64)
    cut = round(cutoff * SCALE4)
    half = round(half_width * SCALE4)
    return (scaled >= cut).astype(np.int64), (np.abs(scaled - cut) <= half).astype(np.int64)

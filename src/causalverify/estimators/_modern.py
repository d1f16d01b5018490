"""Names of the modern designs' estimation pieces, which live in their design modules
(:mod:`causalverify.designs.staggered_did`, :mod:`~causalverify.designs.fuzzy_rdd`,
:mod:`~causalverify.designs.synthetic_control`) and the shared panel machinery
(:mod:`causalverify.designs._panel`)."""

from __future__ import annotations

from causalverify.designs._panel import simplex_weights
from causalverify.designs._panel import wide_panel as _wide
from causalverify.designs.fuzzy_rdd import canonical as fuzzy_rdd
from causalverify.designs.fuzzy_rdd import sharp_jump
from causalverify.designs.staggered_did import canonical as staggered_did
from causalverify.designs.staggered_did import group_time_effects, twfe
from causalverify.designs.synthetic_control import canonical as synthetic_control
from causalverify.designs.synthetic_control import donor_average
from causalverify.designs.synthetic_control import synth_arrays as _synth_arrays

__all__ = [
    "_synth_arrays",
    "_wide",
    "donor_average",
    "fuzzy_rdd",
    "group_time_effects",
    "sharp_jump",
    "simplex_weights",
    "staggered_did",
    "synthetic_control",
    "twfe",
]

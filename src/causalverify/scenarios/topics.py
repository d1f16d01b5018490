"""The topics of the four textbook designs' texts (each design's topics live in its module).

A topic supplies only nouns and phrases; the sentences that carry the checked facts (timing,
cutoff, coding, columns) are written by the design's ``render_text``. Outcomes are described as
standardised indices because the generated values are on an arbitrary scale.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from causalverify.designs import DESIGNS
from causalverify.families import CORE_FAMILIES

#: the topics of each textbook design (at least 15 per family)
TOPICS_BY_FAMILY: Final[Mapping[str, tuple[object, ...]]] = MappingProxyType(
    {family: DESIGNS[family].topics for family in CORE_FAMILIES}
)

"""The records that cross a boundary (process, disk, database), at the bottom of the layers.

Every other package may import these; they import nothing of CausalVerify but ``families``.
``cells`` is the per-cell record of a run (prompt, response, code, execution, extraction,
scores) with the one prompt hash; ``execution`` is what running a script produced (status,
output, limits, fit log); ``manifest`` is what the execution environment has installed.
"""

from __future__ import annotations

from causalverify.records._text import Text, storable
from causalverify.records.brief import ScenarioBrief, ScenarioFacts
from causalverify.records.cells import (
    HARNESS_STATUSES,
    CanonicalInference,
    CellKey,
    CellRecord,
    CellStatus,
    CodeRecord,
    Declaration,
    ExtractionCandidate,
    ExtractionMethod,
    ExtractionRecord,
    Message,
    ModelResponse,
    ScoreRecord,
    SeTier,
    TurnRecord,
    messages_sha256,
)
from causalverify.records.execution import (
    ExecResult,
    ExecStatus,
    FitEntry,
    FitTerm,
    Limits,
    OutputOrigin,
)
from causalverify.records.manifest import Manifest

__all__ = [
    "HARNESS_STATUSES",
    "CanonicalInference",
    "CellKey",
    "CellRecord",
    "CellStatus",
    "CodeRecord",
    "Declaration",
    "ExecResult",
    "ExecStatus",
    "ExtractionCandidate",
    "ExtractionMethod",
    "ExtractionRecord",
    "FitEntry",
    "FitTerm",
    "Limits",
    "Manifest",
    "Message",
    "ModelResponse",
    "OutputOrigin",
    "ScenarioBrief",
    "ScenarioFacts",
    "ScoreRecord",
    "SeTier",
    "Text",
    "TurnRecord",
    "messages_sha256",
    "storable",
]

"""The records that cross a boundary (process, disk, database), at the bottom of the layers.

Every other package may import these; they import nothing of CausalVerify but ``families``.
``cells`` is the per-cell record of a run (prompt, response, code, execution, extraction,
scores) with the one prompt hash; ``execution`` is what running a script produced (status,
output, limits, fit log); ``manifest`` is what the execution environment has installed;
``status`` is the one derivation of a cell's status (and of the layers it counts in); ``run``
is the run metadata (:class:`RunMeta`) and ``summary`` the report's summary (:class:`Summary`).
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
from causalverify.records.run import (
    DEFAULT_TOLERANCE,
    RUN_META_SCHEMA,
    ImportSource,
    RunMeta,
    RunMode,
)
from causalverify.records.status import (
    AnswerStatus,
    answer_status,
    counted_layers,
    execution_status,
    pre_scoring_status,
    scored_status,
    status_from_layers,
)
from causalverify.records.summary import SUMMARY_SCHEMA, Summary

__all__ = [
    "DEFAULT_TOLERANCE",
    "HARNESS_STATUSES",
    "RUN_META_SCHEMA",
    "SUMMARY_SCHEMA",
    "AnswerStatus",
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
    "ImportSource",
    "Limits",
    "Manifest",
    "Message",
    "ModelResponse",
    "OutputOrigin",
    "RunMeta",
    "RunMode",
    "ScenarioBrief",
    "ScenarioFacts",
    "ScoreRecord",
    "SeTier",
    "Summary",
    "Text",
    "TurnRecord",
    "answer_status",
    "counted_layers",
    "execution_status",
    "messages_sha256",
    "pre_scoring_status",
    "scored_status",
    "status_from_layers",
    "storable",
]

"""The declared estimate a cell's extraction may use."""

from __future__ import annotations

from causalverify.records import CellRecord


def declared_token(record: CellRecord) -> str | None:
    """The number token the model declared as its estimate, when the declaration was accepted
    (stdout prints it), else None. It belongs to the cell's last turn."""
    declaration = record.declaration
    if declaration is None or not declaration.accepted:
        return None
    return declaration.token


def is_undecided(record: CellRecord) -> bool:
    """Whether the cell's deterministic extraction left it undecided."""
    return record.extraction is not None and record.extraction.undecided

"""Comparing cell records across runs, ignoring what legitimately differs between two runs."""

from __future__ import annotations

from typing import Any, Final

from causalverify.records import CellRecord

#: fields that measure how a run went rather than what it computed
VOLATILE_FIELDS: Final[dict[str, frozenset[str]]] = {
    "response": frozenset({"cached", "latency_seconds"}),
    "execution": frozenset({"wall_seconds", "cpu_seconds", "peak_memory_mb"}),
}


def stable_view(record: CellRecord) -> dict[str, Any]:
    """Return the record as a plain dict without timings, cache flags, latencies and CPU usage.

    Two runs of the same configuration on the same suite produce equal stable views for every
    cell; a resumed run must therefore equal an uninterrupted one under this view.
    """
    data = record.model_dump(mode="json", exclude={"timings"})
    for field, volatile in VOLATILE_FIELDS.items():
        part = data.get(field)
        if isinstance(part, dict):
            for name in volatile:
                part.pop(name, None)
    declaration = data.get("declaration")
    if isinstance(declaration, dict) and isinstance(declaration.get("response"), dict):
        for name in VOLATILE_FIELDS["response"]:
            declaration["response"].pop(name, None)
    return data

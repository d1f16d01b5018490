"""The offline reference panel: deterministic agents that write real R and Python code."""

from causalverify.reference._agents import (
    AGENT_SUMMARIES,
    AGENTS,
    agent_variant,
    fragile_fault,
    repaired_agent,
    require_agent,
    write_response,
)
from causalverify.reference._confidence import write_confidence
from causalverify.reference._declare import write_declaration

__all__ = [
    "AGENTS",
    "AGENT_SUMMARIES",
    "agent_variant",
    "fragile_fault",
    "repaired_agent",
    "require_agent",
    "write_confidence",
    "write_declaration",
    "write_response",
]

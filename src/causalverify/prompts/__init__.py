"""Experiment B prompts under the ``paper`` and ``default`` protocols."""

from causalverify.prompts._experiment_b import (
    CODE_SECTION,
    DESIGN_PACKAGES,
    Protocol,
    RenderedPrompt,
    messages_sha256,
    render_experiment_b,
)

__all__ = [
    "CODE_SECTION",
    "DESIGN_PACKAGES",
    "Protocol",
    "RenderedPrompt",
    "messages_sha256",
    "render_experiment_b",
]

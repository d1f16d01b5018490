"""The environment manifest: what the execution environment really has installed."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Manifest(BaseModel):
    """R and Python versions and the analysis packages importable inside the sandbox."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    r_version: str | None
    r_packages: dict[str, str]
    python_version: str
    python_packages: dict[str, str]

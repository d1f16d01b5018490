"""``ENVIRONMENT.json``: the environment that produced the results, and the one that froze them."""

from __future__ import annotations

import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from causalverify import __version__
from causalverify.runner.meta import git_commit, package_versions
from causalverify.sandbox import environment_manifest

ENVIRONMENT_SCHEMA: Final = "causalverify-environment/1"

#: run metadata keys that describe the environment of the run
RUN_KEYS: Final[tuple[str, ...]] = (
    "environment",
    "git_commit",
    "limits",
    "package_versions",
    "python",
    "sandbox_policy",
    "unsafe",
)


def build_environment(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The content of ``ENVIRONMENT.json``.

    ``run`` is what the run store recorded when the run started (Python and package versions,
    R version and R packages seen by the sandbox, sandbox policy, limits, commit); ``freeze`` is
    the machine that wrote the release (Python, package versions, R via the environment
    manifest, operating system, commit). No timestamps, so freezing twice gives the same bytes.
    """
    manifest = environment_manifest()
    return {
        "schema": ENVIRONMENT_SCHEMA,
        "run": {key: meta.get(key) for key in RUN_KEYS},
        "freeze": {
            "causalverify": __version__,
            "python": platform.python_version(),
            "python_implementation": platform.python_implementation(),
            "package_versions": package_versions(),
            "r_version": manifest.r_version,
            "r_packages": dict(sorted(manifest.r_packages.items())),
            "sandbox_python_packages": dict(sorted(manifest.python_packages.items())),
            "os": {
                "system": platform.system(),
                "release": platform.release(),
                "machine": platform.machine(),
                "platform": platform.platform(),
            },
            "git_commit": git_commit(Path(__file__).resolve().parent),
        },
    }

"""``ENVIRONMENT.json``: the environment that produced the results, and the one that froze them."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any, Final

from causalverify import __version__
from causalverify.records import RunMeta
from causalverify.runner.meta import git_commit, package_versions
from causalverify.sandbox import environment_manifest

ENVIRONMENT_SCHEMA: Final = "causalverify-environment/1"


def build_environment(meta: RunMeta) -> dict[str, Any]:
    """The content of ``ENVIRONMENT.json``.

    ``run`` is what the run store recorded when the run started (Python and package versions,
    R version and R packages seen by the sandbox, sandbox policy, limits, commit); ``freeze`` is
    the machine that wrote the release (Python, package versions, R via the environment
    manifest, operating system, commit). No timestamps, so freezing twice gives the same bytes.
    A key the run did not record is null.
    """
    manifest = environment_manifest()
    return {
        "schema": ENVIRONMENT_SCHEMA,
        "run": {
            "environment": meta.environment,
            "git_commit": meta.git_commit,
            "limits": meta.limits,
            "package_versions": meta.package_versions,
            "python": meta.python,
            "sandbox_policy": meta.sandbox_policy,
            "unsafe": meta.unsafe if meta.has("unsafe") else None,
        },
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

"""Which add-on packages a script uses, and which of them the execution environment lacks.

The scan lives with the sandbox (:mod:`causalverify.sandbox.packages`), which also uses it to
name the package of a failed run-time install; this module keeps the published API.
"""

from __future__ import annotations

from causalverify.sandbox.packages import (
    R_BASE,
    missing_packages,
    python_packages,
    python_runtime_installs,
    r_packages,
    r_runtime_installs,
)

__all__ = [
    "R_BASE",
    "missing_packages",
    "python_packages",
    "python_runtime_installs",
    "r_packages",
    "r_runtime_installs",
]

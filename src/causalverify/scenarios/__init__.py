"""Scenario suites: generators, the parameter grid, text templates, checks, build and load.

::

    build_suite(out, suite="default", seed=DEFAULT_SEED, n_scenarios=None) -> BuildReport
    load_suite(path) -> Suite   (.root, .scenarios, .get(id), .data_path(s), .read_data(s))
"""

from __future__ import annotations

from causalverify.scenarios.build import GENERATOR_VERSION, BuildReport, build_suite
from causalverify.scenarios.checks import (
    FORBIDDEN,
    check_scenario,
    find_design_names,
    usable_canonical,
)
from causalverify.scenarios.grid import DEFAULT_GRID, DEFAULT_SEED, SUITES, GridEntry
from causalverify.scenarios.model import Canonical, Scenario
from causalverify.scenarios.suite import Suite, load_suite

__all__ = [
    "DEFAULT_GRID",
    "DEFAULT_SEED",
    "FORBIDDEN",
    "GENERATOR_VERSION",
    "SUITES",
    "BuildReport",
    "Canonical",
    "GridEntry",
    "Scenario",
    "Suite",
    "build_suite",
    "check_scenario",
    "find_design_names",
    "load_suite",
    "usable_canonical",
]

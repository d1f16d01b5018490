"""Suite-wide guards.

Tests that need R, bubblewrap or the published reference data beside the checkout
(``../shared``) skip, with the reason, only where those are truly absent. In CI (``CI`` set) they are
installed by ``make setup``, so their absence there is a failure of the setup, not a reason to skip:
the session stops with a clear message instead of reporting a green run that checked nothing.

What is expensive to make and only read by the tests (a built suite, a finished run of the
reference panel) is made once per session by the fixtures below; a test that wants to change one
works on its own copy.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from run_e2e_helpers import PanelRun


def pytest_sessionstart(session: pytest.Session) -> None:
    if not os.environ.get("CI"):
        return
    missing = [tool for tool in ("Rscript", "bwrap", "chromium") if shutil.which(tool) is None]
    if missing:
        raise pytest.UsageError(
            f"CI run without {', '.join(missing)}: `make test` should have installed them "
            "(scripts/install-system.sh); refusing to skip the R, sandbox and browser tests"
        )
    from estimators_reference import HAVE_REFERENCE, REFERENCE_DIR

    if not HAVE_REFERENCE:
        raise pytest.UsageError(
            f"CI run without the published reference data at {REFERENCE_DIR.name} in "
            "../shared/reference: refusing to skip the conformance tests"
        )


# -- the sandbox, warm and cold ----------------------------------------------------------------
#
# Python cells run warm by default (forked from a preloaded interpreter) and cold on request;
# every sandbox test takes the ``sandbox`` fixture below, so it runs against both paths. R cells
# always run cold, so the warm copies of tests that run only R cells would repeat the cold ones
# exactly and are left out (``_r_only`` below; test_outputs_golden's ``arms`` fixture pairs the
# same way).
# ``make test-fast`` runs the paths a run takes by default (warm Python, cold R); the cold Python
# copies, each paying a fresh import of the analysis packages, are marked slow.

SANDBOX_MODES = ("warm", "cold")


@pytest.fixture(scope="module", params=SANDBOX_MODES)
def sandbox(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    from causalverify.sandbox import get_sandbox

    box = get_sandbox(warm=request.param == "warm")
    if request.param == "warm":
        warm = getattr(box, "warm", None)
        assert warm is not None and warm.start().running, warm and warm.status()
    return box


# -- one worker per CPU -------------------------------------------------------------------------
#
# ``make test`` spreads the tests over one pytest-xdist worker per CPU. A module's tests stay on
# one worker, so its module-scoped fixtures (a warm interpreter, a built suite, a replayed
# development set, the unprivileged reruns) are made once. (pytest-xdist's ``loadgroup`` marks
# have no effect under pytest 9, so the unit of distribution is chosen here, from the test's id.)

#: the longest modules, longest first (``pytest --durations``): the workers take them first, so
#: that neither ends the run alone with a long one. The first builds the reference panel's run,
#: which the later ones that read it then find made.
LONG_MODULES = (
    "tests/test_dask.py",
    "tests/test_ruler_devset.py",
    "tests/test_fitlog_golden.py",
    "tests/test_reference_gold.py",
    "tests/test_sandbox_unprivileged.py",
    "tests/test_fitlog.py",
    "tests/test_release.py",
    "tests/test_sandbox_warm.py",
    "tests/test_reference_exec.py",
    "tests/test_outputs_golden.py",
    "tests/test_repair.py",
    "tests/test_modern.py",
    "tests/test_resume.py",
    "tests/test_sandbox_adversarial.py",
    "tests/test_inspect_cli.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # keep the order below, not the number of tests

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid.split("::", 1)[0]

    return ByModule(config, log)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects: the marks below must count
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = [m for m in LONG_MODULES if not (config.rootpath / m).is_file()]
    if missing:
        raise pytest.UsageError(f"LONG_MODULES in tests/conftest.py names no file: {missing}")
    rank = {module: n for n, module in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        shared = SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if shared:
            item.add_marker(pytest.mark.slow)
        if params.get("sandbox") == "cold" and params.get("language") != "r":
            item.add_marker(pytest.mark.slow)  # cold Python: see SANDBOX_MODES
        if "warm" in (params.get("sandbox"), params.get("arms")) and _r_only(item, params):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _r_only(item: pytest.Item, params: dict[str, Any]) -> bool:
    """Whether a sandbox test runs R cells only (R always runs cold: see SANDBOX_MODES): its
    ``language`` is R, it runs an R script named in its parameters, or it is marked ``r_only``."""
    script = params.get("name")
    return (
        params.get("language") == "r"
        or (isinstance(script, str) and script.endswith(".R"))
        or item.get_closest_marker("r_only") is not None
    )


# -- built once per session, read by many ------------------------------------------------------
#
# A test that takes the reference panel's run is marked ``slow`` (see the hook above), so
# ``make test-fast`` (``pytest -m "not slow"``) never pays for it; a suite takes seconds to build.

SLOW_FIXTURES = frozenset({"reference_panel"})


@pytest.fixture(scope="session")
def default_suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default suite (100 scenarios), as ``causalverify build`` writes it."""
    from causalverify.scenarios import build_suite

    out = tmp_path_factory.getbasetemp() / "default-suite"
    report = build_suite(out)
    assert report.n_scenarios == 100 and report.violations == 0, report
    return out


@pytest.fixture(scope="session")
def smoke_suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke suite (one scenario per family)."""
    from run_e2e_helpers import shared_root, smoke_suite

    return smoke_suite(shared_root(tmp_path_factory))


@pytest.fixture(scope="session")
def reference_panel(tmp_path_factory: pytest.TempPathFactory) -> PanelRun:
    """The offline reference panel (eight agents, R and Python) on the smoke suite: 64 cells in
    the real sandbox. Needs R and bubblewrap; a test that takes it carries their marks."""
    from run_e2e_helpers import reference_panel, shared_root

    return reference_panel(shared_root(tmp_path_factory))

"""Suite-wide guards.

Tests that need R, bubblewrap or the published reference data beside the checkout
(``../shared``) skip, with the reason, only where those are truly absent. In CI (``CI`` set) they are
installed by ``make setup``, so their absence there is a failure of the setup, not a reason to skip:
the session stops with a clear message instead of reporting a green run that checked nothing.
"""

from __future__ import annotations

import os
import shutil

import pytest


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
# always run cold, so their warm copies would repeat the cold ones exactly and are left out.

SANDBOX_MODES = ("warm", "cold")


@pytest.fixture(scope="module", params=SANDBOX_MODES)
def sandbox(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    from causalverify.sandbox import get_sandbox

    box = get_sandbox(warm=request.param == "warm")
    if request.param == "warm":
        warm = getattr(box, "warm", None)
        assert warm is not None and warm.start().running, warm and warm.status()
    return box


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if params.get("sandbox") == "warm" and params.get("language") == "r":
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

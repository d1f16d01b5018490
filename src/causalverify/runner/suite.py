"""Finding the suite a run uses: a built folder, or the default suite built inside the run folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from causalverify.errors import SuiteError

#: the ``--suite`` value that means "the default suite, built into RUN_DIR/suite if absent"
DEFAULT_SUITE = "default"


def ensure_suite(
    spec: str | Path, run_dir: Path, *, progress: Callable[[int, int], None] | None = None
) -> Path:
    """Return the folder of the suite named by ``spec``, building the default suite if needed.

    Parameters
    ----------
    spec
        ``"default"`` or the folder of a built suite.
    run_dir
        The run folder; the default suite lives in ``run_dir/suite``.
    progress
        Passed to ``build_suite`` when the default suite is built.

    Raises
    ------
    SuiteError
        If ``spec`` is a folder that does not hold a built suite.
    """
    if str(spec) != DEFAULT_SUITE:
        folder = Path(spec)
        if not (folder / "suite.json").is_file():
            raise SuiteError(
                f"{folder} is not a built suite (no suite.json); "
                f"build one with `causalverify build --out {folder}`"
            )
        return folder
    folder = Path(run_dir) / "suite"
    if not (folder / "suite.json").is_file():
        from causalverify.scenarios import build_suite

        build_suite(folder, suite=DEFAULT_SUITE, progress=progress)
    return folder

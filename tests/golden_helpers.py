"""What the tests that run scripts in the real sandbox share: their skip marks, the golden
corpus's regenerate module (its seed, scenario picks and date normaliser) and the comparison of
a script's output with a recorded fixture, and the data the fit-log tests start from."""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import numpy as np
import pytest

from causalverify.scenarios.build import build_suite
from causalverify.scenarios.model import Scenario

GOLDEN: Final = Path(__file__).resolve().parent / "golden"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed")
#: the marks of a module whose tests run R and Python scripts in the real sandbox
SANDBOX_MARKS: Final = [pytest.mark.sandbox, pytest.mark.slow, needs_bwrap, needs_r]

_LONG_FLOAT: Final = re.compile(r"-?\d+\.\d{13,}(?:e[+-]?\d+)?")


def load_script(path: Path, name: str) -> ModuleType:
    """Import a script that is not in a package (``tests/golden/regenerate.py``) as a module."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass of the module looks its module up there
    spec.loader.exec_module(module)
    return module


@functools.cache
def golden_regenerate() -> ModuleType:
    """``tests/golden/regenerate.py``, loaded once."""
    return load_script(GOLDEN / "regenerate.py", "golden_regenerate")


def digits12(text: str) -> str:
    """``text`` with every float of 13+ decimals written at 12 significant digits (a float printed
    at full precision may differ in its last digits between machines, BLAS kernels differ by CPU,
    and some estimators are not bit-reproducible run to run)."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.12g}", text)


def comparable(text: str) -> str:
    """What the golden tests compare: dates and times masked, long floats at 12 digits."""
    return digits12(golden_regenerate()._untimed(text))


def golden_scenarios(
    factory: pytest.TempPathFactory, name: str = "golden"
) -> tuple[Path, dict[str, Scenario]]:
    """The golden corpus's suite, built in a temporary folder, and its picked scenarios by id."""
    regen = golden_regenerate()
    root = factory.mktemp(name) / "suite"
    build_suite(root, seed=regen.SEED)
    picked: dict[str, list[Scenario]] = regen.pick_scenarios(root)
    return root, {sc.id: sc for scs in picked.values() for sc in scs}


def fit_panel(rng: np.random.Generator, n: int = 400) -> dict[str, Any]:
    """The columns every fit-log test's data starts with: a panel of 40 units over 10 periods
    (``id``, ``t``), an instrument ``z``, a control ``w`` and an endogenous ``x``; the caller
    draws the outcome and the rest from the same generator, after these."""
    z = rng.normal(size=n)
    w = rng.normal(size=n)
    x = 0.8 * z + 0.3 * w + rng.normal(size=n)
    return {
        "id": np.repeat(np.arange(40), 10),
        "t": np.tile(np.arange(10), 40),
        "z": z,
        "w": w,
        "x": x,
    }

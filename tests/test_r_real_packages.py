"""The fit-log hooks against the real CRAN packages (fixest, rdrobust, lfe, ivreg), run whenever
one is installed (the managed library or the system's; skipped, naming the package, otherwise):
the logged coefficients and standard errors equal the package's own, the output is identical with
the hooks on and off, IV and fuzzy fits are marked, and the hooked function keeps its byte-code.
The stand-in tests of the same defects are in test_r_fidelity.py."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from causalverify.sandbox import Limits
from causalverify.sandbox._toolchain import discover
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.fitlog import hook_selfcheck
from r_standins import FIT_DATA as DATA

pytestmark = [
    pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript not installed"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]
LIMITS = Limits(wall_seconds=120, cpu_seconds=120)


REAL = {
    "fixest": (
        "library(fixest)\nf <- feols(y ~ w | 0 | x ~ z, data = d)\nprint(summary(f))\n"
        "b <- coef(f); s <- se(f)",
        "fixest::feols",
    ),
    "rdrobust": (
        "library(rdrobust)\nf <- rdrobust(d$yr, d$run, fuzzy = d$treat)\nsummary(f)\n"
        "b <- setNames(f$coef[, 1], rownames(f$coef)); s <- setNames(f$se[, 1], rownames(f$coef))",
        "rdrobust::rdrobust",
    ),
    "lfe": (
        "library(lfe)\nf <- felm(y ~ w | 0 | (x ~ z), data = d)\nprint(summary(f))\n"
        "b <- coef(f); s <- sqrt(diag(vcov(f)))",
        "lfe::felm",
    ),
    "ivreg": (
        "library(ivreg)\nf <- ivreg(y ~ x + w | z + w, data = d)\nprint(summary(f))\n"
        "b <- coef(f); s <- sqrt(diag(vcov(f)))",
        "ivreg::ivreg",
    ),
}


def _real_installed(name: str) -> bool:
    probe = subprocess.run(
        ["Rscript", "--vanilla", "-e", f'cat(nzchar(system.file(package = "{name}")))'],
        capture_output=True,
        text=True,
        env={**os.environ, **({"R_LIBS": discover().r_library} if discover().r_library else {})},
        check=False,
    )
    return probe.stdout.strip() == "TRUE"


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_package_fits_equal_its_own_and_print_as_unhooked(name: str) -> None:
    if not _real_installed(name):
        pytest.skip(f"the real {name} package is not installed (causalverify r-packages install)")
    code, function = REAL[name]
    script = (
        DATA + code + '\ncat("TRUTH", names(b), "\\n"); cat("TRUTH", sprintf("%.17g", b), "\\n")'
    )
    script += '\ncat("TRUTH", sprintf("%.17g", s), "\\n")\n'
    hooked = BwrapSandbox(warm=False).run(script, "r", {}, LIMITS)
    plain = BwrapSandbox(warm=False, fit_log=False).run(script, "r", {}, LIMITS)
    assert hooked.ok, hooked.stderr[-2000:]
    assert hooked.stdout == plain.stdout and hooked.stderr == plain.stderr
    lines = [ln.split()[1:] for ln in hooked.stdout.splitlines() if ln.startswith("TRUTH")]
    names, estimates, errors = (
        lines[-3],
        [float(v) for v in lines[-2]],
        [float(v) for v in lines[-1]],
    )
    [fit] = [f for f in hooked.fits if f.function == function]
    logged = {t.term: (t.estimate, t.std_error) for t in fit.terms}
    for term, b, s in zip(names, estimates, errors, strict=True):
        assert logged[term][0] == pytest.approx(b, rel=1e-12)
        assert logged[term][1] == pytest.approx(s, rel=1e-9)
    if name in ("fixest", "lfe", "ivreg"):
        assert fit.iv and fit.endogenous == ["x"]
    if name == "rdrobust":
        assert fit.rd and fit.fuzzy
    checks = {c.name: c for c in hook_selfcheck(BwrapSandbox(warm=False))}
    assert checks[f"fit log: {function}"].ok

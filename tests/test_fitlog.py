"""The fit log: every hooked estimation function logs what a direct fit gives, inside the real
sandbox; hostile logs are dropped with a note; the log never changes what a script prints."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from causalverify.extraction import extract_estimate
from causalverify.families import Language
from causalverify.sandbox import ExecResult, Limits, Sandbox
from causalverify.sandbox.bwrap import BwrapSandbox
from causalverify.sandbox.fitlog import MAX_BYTES, MAX_ENTRIES, parse_fit_log
from golden_helpers import fit_panel, needs_bwrap, needs_r

LIMITS = Limits(wall_seconds=60, cpu_seconds=60)


def _data() -> bytes:
    rng = np.random.default_rng(7)
    n = 400
    panel = fit_panel(rng, n)
    run = rng.uniform(-1, 1, size=n)
    frame = pd.DataFrame(
        {
            **panel,
            "y": 1.5 * panel["x"] + 0.5 * panel["w"] + rng.normal(size=n),
            "cnt": rng.poisson(3, size=n),
            "run": run,
            "yr": run + 0.7 * (run >= 0) + 0.2 * rng.normal(size=n),
        }
    )
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def plain(sandbox: Sandbox) -> Iterator[BwrapSandbox]:
    """The same sandbox without the hooks, on the same path (warm or cold) as ``sandbox``: one per
    module, so a warm one preloads its interpreter once and the cold one starts none."""
    box = BwrapSandbox(fit_log=False, warm=getattr(sandbox, "warm", None) is not None)
    try:
        yield box
    finally:
        box.close()


def _run(sandbox: Sandbox, language: Language, code: str) -> ExecResult:
    return sandbox.run(code, language, {"data/d.csv": _data()}, LIMITS)


def _truth(stdout: str) -> list[tuple[str, dict[str, float]]]:
    """``TRUTH <function> <json of term -> estimate>`` lines printed by the test scripts."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("TRUTH "):
            _, name, payload = line.split(" ", 2)
            out.append((name, {k: float(v) for k, v in json.loads(payload).items()}))
    return out


def _assert_fits_equal_direct(result: ExecResult) -> None:
    assert result.ok, result.stderr[-3000:]
    truth = _truth(result.stdout)
    assert len(truth) == len(result.fits), [f.function for f in result.fits]
    for (name, coefs), fit in zip(truth, result.fits, strict=True):
        assert fit.function == name
        logged = {t.term: t.estimate for t in fit.terms}
        assert logged.keys() == coefs.keys(), (name, logged, coefs)
        for term, value in coefs.items():
            assert logged[term] == pytest.approx(value, rel=1e-12, abs=1e-14), (name, term)
        assert fit.nobs is not None and fit.nobs > 0
        assert all(t.std_error is not None and t.std_error > 0 for t in fit.terms), fit


R_FITS = r"""
suppressPackageStartupMessages({library(AER); library(estimatr); library(plm); library(lmtest);
  library(sandwich)})
d <- read.csv("data/d.csv")
truth <- function(name, b) cat("TRUTH", name,
  paste0("{", paste(sprintf('"%s":%.17g', names(b), b), collapse = ","), "}"), "\n")
f1 <- lm(y ~ x + w, data = d); truth("stats::lm", coef(f1))
f2 <- glm(cnt ~ w, family = poisson, data = d); truth("stats::glm", coef(f2))
f3 <- ivreg(y ~ x + w | z + w, data = d); truth("AER::ivreg", coef(f3))
f4 <- lm_robust(y ~ x + w, data = d, se_type = "HC1"); truth("estimatr::lm_robust", coef(f4))
f5 <- iv_robust(y ~ x + w | z + w, data = d); truth("estimatr::iv_robust", coef(f5))
f6 <- plm(y ~ x + w, data = d, index = c("id", "t"), model = "within"); truth("plm::plm", coef(f6))
f7 <- coeftest(f1, vcov. = vcovHC(f1, type = "HC1")); truth("lmtest::coeftest", f7[, 1])
"""


@needs_bwrap
@needs_r
def test_r_fits_equal_direct_fits(sandbox: Sandbox) -> None:
    result = _run(sandbox, "r", R_FITS)
    _assert_fits_equal_direct(result)
    iv = [f for f in result.fits if f.function in ("AER::ivreg", "estimatr::iv_robust")]
    assert all(f.iv and f.endogenous == ["x"] for f in iv)
    assert not any(f.iv for f in result.fits if f not in iv)


PY_FITS = r"""
import json
import numpy as np, pandas as pd
import statsmodels.api as sm, statsmodels.formula.api as smf
from linearmodels.iv import IV2SLS, IVLIML, IVGMM
from linearmodels.iv.absorbing import AbsorbingLS
from linearmodels.panel import PanelOLS
import pyfixest as pf
import rdrobust

d = pd.read_csv("data/d.csv")
def truth(name, params):
    print("TRUTH", name, json.dumps({str(k): float(v) for k, v in params.items()}))
r = smf.ols("y ~ x + w", data=d).fit(cov_type="HC1"); truth("statsmodels.OLS", r.params)
X = sm.add_constant(d[["x", "w"]].to_numpy())
r = sm.OLS(d["y"].to_numpy(), X).fit()
truth("statsmodels.OLS", dict(zip(["const", "x1", "x2"], r.params)))
r = smf.glm("cnt ~ w", data=d, family=sm.families.Poisson()).fit(); truth("statsmodels.GLM", r.params)
r = smf.wls("y ~ x", data=d, weights=np.ones(len(d))).fit(); truth("statsmodels.WLS", r.params)
for cls in (IV2SLS, IVLIML, IVGMM):
    r = cls.from_formula("y ~ 1 + w + [x ~ z]", d).fit(); truth("linearmodels." + cls.__name__, r.params)
r = PanelOLS.from_formula("y ~ x + w + EntityEffects", d.set_index(["id", "t"])).fit()
truth("linearmodels.PanelOLS", r.params)
r = AbsorbingLS(d["y"], d[["x", "w"]], absorb=pd.DataFrame({"id": d["id"].astype("category")})).fit()
truth("linearmodels.AbsorbingLS", r.params)
r = pf.feols("y ~ x + w | id", d); truth("pyfixest.feols", r.coef())
r = pf.fepois("cnt ~ w | id", d); truth("pyfixest.fepois", r.coef())
r = pf.feols("y ~ w | id | x ~ z", d); truth("pyfixest.feols", r.coef())
r = rdrobust.rdrobust(d["yr"], d["run"])
truth("rdrobust.rdrobust", dict(zip(r.coef.index, r.coef.iloc[:, 0])))
"""


@needs_bwrap
def test_python_fits_equal_direct_fits(sandbox: Sandbox) -> None:
    result = _run(sandbox, "python", PY_FITS)
    _assert_fits_equal_direct(result)
    by_function = {}
    for fit in result.fits:
        by_function.setdefault(fit.function, []).append(fit)
    assert all(
        f.iv and f.endogenous == ["x"]
        for n in ("IV2SLS", "IVLIML", "IVGMM")
        for f in by_function[f"linearmodels.{n}"]
    )
    assert [f.iv for f in by_function["pyfixest.feols"]] == [False, True]
    assert by_function["pyfixest.feols"][1].endogenous == ["x"]
    assert by_function["rdrobust.rdrobust"][0].rd


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize(
    ("language", "code"),
    [
        pytest.param("r", R_FITS, marks=needs_r, id="r"),
        pytest.param("python", PY_FITS, id="python"),
    ],
)
def test_output_is_byte_identical_without_the_hooks(
    sandbox: Sandbox, plain: BwrapSandbox, language: Language, code: str
) -> None:
    hooked = _run(sandbox, language, code)
    unhooked = _run(plain, language, code)
    assert hooked.ok and unhooked.ok
    assert hooked.stdout == unhooked.stdout
    assert unhooked.fits == [] and hooked.fits


@needs_bwrap
@pytest.mark.parametrize(
    ("language", "code"),
    [
        pytest.param(
            "r",
            'print(Sys.getenv(c("R_PROFILE", "CAUSALVERIFY_FITLOG_FD")))\n'
            "print(search())\nprint(ls(baseenv(), pattern = 'fitlog|hook'))\n",
            marks=needs_r,
            id="r",
        ),
        pytest.param(
            "python",
            "import os, sys\nprint(sorted(k for k in os.environ if 'FITLOG' in k or k == 'PYTHONPATH'))\n"
            "print([p for p in sys.path if 'hooks' in p])\n",
            id="python",
        ),
    ],
)
def test_the_hooks_leave_no_trace_the_script_can_print(
    sandbox: Sandbox, plain: BwrapSandbox, language: Language, code: str
) -> None:
    hooked = _run(sandbox, language, code)
    unhooked = _run(plain, language, code)
    assert hooked.ok, hooked.stderr
    assert hooked.stdout == unhooked.stdout


FORGE = r"""
import os, stat
ends = []
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and fd > 2:
            ends.append(fd)
    except OSError:
        pass
assert ends, "no pipe found"
fake = '{"function":"stats::lm","terms":[{"term":"x","estimate":9.87654,"std_error":0.1}],"nobs":5}\n'
for fd in ends:
    os.write(fd, b"not json\n" + b'{"function": 1}\n' + b'[' * 100000 + b"\n")
    os.write(fd, b'{"function":"f","terms":[{"term":"x","estimate":1e999}],"nobs":1}\n')
    os.write(fd, fake.encode() * 3000)
print("The effect is 1.2345")
"""


@needs_bwrap
def test_forged_and_flooded_entries_are_capped_and_never_give_a_value(sandbox: Sandbox) -> None:
    result = _run(sandbox, "python", FORGE)
    assert result.ok, result.stderr
    assert len(result.fits) == MAX_ENTRIES
    assert "malformed" in result.fits_note and "dropped" in result.fits_note
    record = extract_estimate(code="", stdout=result.stdout, family="iv", fits=result.fits)
    assert record.value != pytest.approx(9.87654)  # a logged number that was never printed


@needs_bwrap
def test_a_byte_flood_is_drained_without_ending_the_run(sandbox: Sandbox) -> None:
    code = (
        "import os, stat\n"
        "def fifo(n):\n"
        "    try:\n        return stat.S_ISFIFO(os.fstat(n).st_mode)\n"
        "    except OSError:\n        return False\n"
        "fd = [int(n) for n in os.listdir('/proc/self/fd') if int(n) > 2 and fifo(int(n))][0]\n"
        "chunk = b'x' * 65536\n"
        "for _ in range(160):\n    os.write(fd, chunk)\n"
        "print('done')\n"
    )
    result = _run(sandbox, "python", code)
    assert result.ok and result.stdout == "done\n", result
    assert result.fits == [] and str(MAX_BYTES) in result.fits_note


@needs_bwrap
@pytest.mark.parametrize(
    ("language", "code"),
    [
        pytest.param(
            "python",
            "import os\nos.closerange(3, 1024)\nimport statsmodels.formula.api as smf\n"
            "import pandas as pd\nr = smf.ols('y ~ x', pd.read_csv('data/d.csv')).fit()\n"
            "print('ok', round(r.params['x'], 4))\n",
            id="python-closes-descriptors",
        ),
        pytest.param(
            "r",
            "closeAllConnections()\nd <- read.csv('data/d.csv')\nunlink('/proc/self/fd/3')\n"
            "f <- lm(y ~ x, d)\ncat('ok', round(coef(f)[2], 4), '\\n')\n",
            marks=needs_r,
            id="r-closes-connections",
        ),
    ],
)
def test_a_script_that_breaks_the_log_still_runs(
    sandbox: Sandbox, language: Language, code: str
) -> None:
    result = _run(sandbox, language, code)
    assert result.ok, result.stderr
    assert result.stdout.startswith("ok ")
    assert result.stderr == "" or "fitlog" not in result.stderr.lower()


@needs_bwrap
@pytest.mark.parametrize(
    ("language", "code", "status"),
    [
        pytest.param(
            "python",
            "import pandas as pd, statsmodels.formula.api as smf\n"
            "smf.ols('y ~ x', pd.read_csv('data/d.csv')).fit()\nraise SystemExit(3)\n",
            "error",
            id="python-crash",
        ),
        pytest.param(
            "python",
            "import time, pandas as pd, statsmodels.formula.api as smf\n"
            "smf.ols('y ~ x', pd.read_csv('data/d.csv')).fit()\nprint('fitted', flush=True)\n"
            "time.sleep(60)\n",
            "timeout",
            marks=pytest.mark.slow,  # waits out its wall-clock limit
            id="python-timeout",
        ),
        pytest.param(
            "r",
            "f <- lm(y ~ x, read.csv('data/d.csv'))\nstop('boom')\n",
            "error",
            marks=needs_r,
            id="r-crash",
        ),
    ],
)
def test_fits_written_before_a_crash_or_timeout_are_kept(
    sandbox: Sandbox, language: Language, code: str, status: str
) -> None:
    wall = 15.0
    if status == "timeout":
        # waited out, so only ample for what must happen before it, the import and the fit:
        # unloaded about 0.3 s warm (preloaded) and 1.5 s cold, cold 7 s on a machine running
        # five times as many processes as it has cores
        wall = 4.0 if getattr(sandbox, "warm", None) is not None else 10.0
    limits = Limits(wall_seconds=wall, cpu_seconds=15)
    result = sandbox.run(code, language, {"data/d.csv": _data()}, limits)
    assert result.status == status
    if status == "timeout":  # else the limit ran out before the fit, too short for this machine
        assert result.stdout == "fitted\n", (wall, result.wall_seconds, result.stderr[-2000:])
    assert [f.function for f in result.fits] in (["statsmodels.OLS"], ["stats::lm"])


@needs_bwrap
def test_nested_fits_are_logged_once(sandbox: Sandbox) -> None:
    # statsmodels' GLM and discrete models call other hooked fits internally
    code = (
        "import pandas as pd, statsmodels.formula.api as smf, statsmodels.api as sm\n"
        "d = pd.read_csv('data/d.csv')\n"
        "d['pos'] = (d['y'] > 0).astype(int)\n"
        "smf.logit('pos ~ x', d).fit(disp=0)\n"
        "smf.glm('cnt ~ w', d, family=sm.families.Poisson()).fit()\n"
    )
    result = _run(sandbox, "python", code)
    assert result.ok, result.stderr
    assert [f.function for f in result.fits] == ["statsmodels.Logit", "statsmodels.GLM"]


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\xff\xfe\n",
        b"null\n[]\n{}\n",
        b'{"function":"f","terms":"x"}\n',
        b'{"function":"f","terms":[{"term":"x","estimate":"1"}]}\n',
        b'{"function":"f","terms":[{"term":"x","estimate":true}]}\n',
        b'{"function":"f","terms":[{"term":"' + b"x" * 500 + b'","estimate":1}]}\n',
        b'{"function":"f","terms":[],"endogenous":"x"}\n',
        b"[" * 200000,
        b'{"function":"f","terms":[{"term":"x","estimate":NaN}],"nobs":-3}\n',
    ],
)
def test_parse_never_raises_and_keeps_only_valid_entries(payload: bytes) -> None:
    entries, note = parse_fit_log(payload)
    for entry in entries:
        assert entry.function and all(
            t.estimate is None or np.isfinite(t.estimate) for t in entry.terms
        )
        assert entry.nobs is None or entry.nobs >= 0
    if payload.strip() and not entries:
        assert "malformed" in note


def test_parse_keeps_a_truncated_log_up_to_its_last_whole_line() -> None:
    line = b'{"function":"stats::lm","terms":[{"term":"x","estimate":0.5}],"nobs":10}\n'
    entries, note = parse_fit_log(line * 3 + line[:20], truncated=True)
    assert len(entries) == 3 and "dropped" in note

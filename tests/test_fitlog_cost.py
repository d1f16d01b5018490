"""The fit log's R side, made cheaper: what it writes does not change.

``fitlog.R`` writes an entry's terms all at once when their names and numbers allow it, and term
by term otherwise. These tests run R (outside the sandbox, the hook as the sandbox loads it) with
the hook as shipped and with the all-at-once branch switched off, on fits whose terms cover what
the text depends on (names with a quote, backslashes and a non-ASCII letter, a factor's dummies,
an aliased term with no estimate, more terms than the cap, coeftest's table), and compare the two
logs byte for byte. The hooked functions are called many times in a loop, so the log also shows
that every call is logged once after R's JIT has compiled the wrappers (they are no longer
compiled when they are made) and that the JIT's level is what it was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from causalverify.sandbox import fitlog
from golden_helpers import needs_r

pytestmark = needs_r

#: the all-at-once branch's condition in fitlog.R
FAST_PATH = "if (is.numeric(est) && (is.null(se) || is.numeric(se)) &&"

SCRIPT = r"""
suppressPackageStartupMessages(library(lmtest))
set.seed(1)
n <- 240
d <- data.frame(x = rnorm(n), w = rnorm(n), g = factor(rep(c("a", "b", "c"), n / 3)))
d$y <- d$x + 0.5 * d$w + rnorm(n)
d$x2 <- 2 * d$x
odd <- c("we\"ird\\name", "tab\there", "caf\u00e9")
for (v in odd) d[[v]] <- rnorm(n)
terms <- c(quote(x), quote(w), quote(factor(g)), quote(x2), lapply(odd, as.name))
f1 <- lm(call("~", quote(y), Reduce(function(a, b) call("+", a, b), terms)), data = d)
print(coeftest(f1))
wide <- as.data.frame(matrix(rnorm(n * 210), n))
wide$y <- rnorm(n)
f2 <- lm(y ~ ., data = wide)
f3 <- glm(I(y > 0) ~ x + w, family = binomial, data = d)
r <- sapply(seq(-1, 1, length.out = 12), function(b) {
  d$yb <- d$y - b * d$x
  fit <- lm(yb ~ w, data = d)
  coeftest(fit)[1, 2]
})
cat(sprintf("%.6f", sum(r)), compiler::enableJIT(-1L), "\n")
"""


def _run(tmp_path: Path, name: str, hook: bytes) -> tuple[bytes, str]:
    """The raw fit log and the stdout of SCRIPT run with ``hook`` as the site profile."""
    profile = tmp_path / f"{name}.R"
    profile.write_bytes(hook)
    script = tmp_path / "script.R"
    script.write_text(SCRIPT, encoding="utf-8")
    log = tmp_path / f"{name}.jsonl"
    rscript = shutil.which("Rscript")
    assert rscript is not None
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "R_PROFILE": str(profile), "LOG": str(log)}
    env[fitlog.FD_VAR] = "3"
    result = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" 3>"$LOG"', rscript, *fitlog.R_FLAGS, str(script)],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return log.read_bytes(), result.stdout.decode()


def test_terms_written_at_once_are_the_bytes_written_term_by_term(tmp_path: Path) -> None:
    shipped = fitlog.hook_files()["fitlog.R"]
    assert shipped.count(FAST_PATH.encode()) == 1
    switched_off = FAST_PATH.replace("if (", "if (FALSE && ", 1)
    term_by_term = shipped.replace(FAST_PATH.encode(), switched_off.encode())
    fast_log, fast_out = _run(tmp_path, "fast", shipped)
    slow_log, slow_out = _run(tmp_path, "slow", term_by_term)
    assert fast_out == slow_out
    assert fast_log == slow_log
    fits = [e for e in map(json.loads, fast_log.decode().splitlines()) if "kind" not in e]
    # f1, its coeftest, f2, f3, and the loop's 12 lm and 12 coeftest calls, each once
    assert len(fits) == 28
    assert [f["function"] for f in fits[:4]] == [
        "stats::lm",
        "lmtest::coeftest",
        "stats::lm",
        "stats::glm",
    ]
    assert [f["function"] for f in fits[4:]] == ["stats::lm", "lmtest::coeftest"] * 12
    terms = [t["term"] for t in fits[0]["terms"]]  # R's names, backslashes and all
    assert terms == ["(Intercept)", "x", "w", "x2", '`we"ird\\\\name`', "`tab\\there`", "café"]
    assert fits[0]["terms"][3]["estimate"] is None  # aliased
    assert len(fits[2]["terms"]) == 200  # the cap
    # the JIT's level after the hooked calls is R's default, as unhooked
    assert fast_out.split()[-1] == "3"

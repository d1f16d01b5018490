"""The fit log is a claim of the script's own process: the R hook keeps no state the script can
reach, and entries the script writes itself set no diagnosis for code that fits nothing."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from causalverify.analysis._taxonomy import classify_cell
from causalverify.records import CellKey, CellRecord, CodeRecord, Message, ModelResponse
from causalverify.sandbox.base import Limits, Sandbox
from causalverify.scoring import rescore
from causalverify.store import cells_frame

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

LIMITS = Limits(wall_seconds=60, cpu_seconds=30)

#: fits lm, then looks for closures in the hooked lm's body and in the load hooks, and, where it
#: finds the hook's helpers or state, replaces the writer and resets the counters
R_TAMPER = """
set.seed(1)
d <- data.frame(x = rnorm(200))
d$y <- 2 * d$x + rnorm(200, sd = 0.1)
fit0 <- lm(y ~ x, d)
walk <- function(e, acc = list()) {
  if (is.function(e)) return(c(acc, list(e)))
  if (is.call(e) || is.expression(e) || is.list(e)) for (i in seq_along(e)) {
    acc <- tryCatch(walk(e[[i]], acc), error = function(err) acc)  # empty arguments
  }
  acc
}
fns <- walk(body(stats::lm))
for (p in c("stats", "AER", "fixest", "estimatr")) {
  fns <- c(fns, getHook(packageEvent(p, "onLoad")))
}
found <- 0L
forged <- function(...) '{"function":"stats::lm","terms":[{"term":"x","estimate":42}],"nobs":1}'
for (f in fns) {
  e <- environment(f)
  while (!identical(e, emptyenv()) && !identical(e, baseenv()) && !identical(e, globalenv())) {
    for (name in c("entry_json", "entries")) if (exists(name, envir = e, inherits = FALSE)) {
      found <- found + 1L
      if (bindingIsLocked(name, e)) unlockBinding(name, e)
      assign(name, forged, envir = e)
    }
    if (exists("state", envir = e, inherits = FALSE)) {
      found <- found + 1L
      e$state$depth <- 5L  # every later fit looks nested: nothing more is logged
    }
    e <- parent.env(e)
  }
}
fit1 <- lm(y ~ x, d)
cat("hook state found:", found, "\\n")
"""


@pytest.mark.parametrize("language", ["r"])  # R runs cold only
def test_the_r_hook_state_is_out_of_the_scripts_reach(sandbox: Sandbox, language: str) -> None:
    result = sandbox.run(R_TAMPER, "r", {}, LIMITS)
    assert result.ok, result.stderr[-2000:]
    assert "hook state found: 0" in result.stdout
    assert [e.function for e in result.fits] == ["stats::lm", "stats::lm"]
    for entry in result.fits:
        slope = {t.term: t.estimate for t in entry.terms}["x"]
        assert slope == pytest.approx(2.0, abs=0.05)  # the real fits, not the forged 42


#: code that fits nothing, writes a fit-log line claiming the canonical, prints a wrong number
FORGE = {
    "r": """
for (fd in setdiff(list.files("/proc/self/fd"), c("0", "1", "2"))) {
  if (isTRUE(startsWith(Sys.readlink(file.path("/proc/self/fd", fd)), "pipe:"))) {
    con <- file(file.path("/proc/self/fd", fd), open = "a", raw = TRUE)
    writeLines(LINE, con); close(con)
  }
}
cat("ESTIMATE: 9.0\\n")
""",
    "python": """
import os
for fd in os.listdir("/proc/self/fd"):
    if fd not in ("0", "1", "2"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                os.write(int(fd), (LINE + "\\n").encode())
        except OSError:
            pass
print("ESTIMATE: 9.0")
""",
}
LINE = '{"function":"stats::lm","terms":[{"term":"treated:post","estimate":2.0}],"nobs":100}'


@pytest.mark.parametrize("language", ["r", "python"])
def test_forged_entries_set_no_diagnosis_for_code_that_fits_nothing(
    sandbox: Sandbox, language: str
) -> None:
    code = FORGE[language].replace("LINE", _literal(LINE, language))
    result = sandbox.run(code, language, {}, LIMITS)  # type: ignore[arg-type]
    assert result.ok, result.stderr[-2000:]
    assert [e.function for e in result.fits] == ["stats::lm"]  # the forged line did arrive
    record = rescore(
        CellRecord(
            key=CellKey(scenario_id="s001", model="m", language=language),  # type: ignore[arg-type]
            family="did",
            difficulty="easy",
            beta=2.0,
            canonical=2.0,
            protocol="default",
            prompt=[Message(role="user", content="q")],
            prompt_sha256="0" * 64,
            response=ModelResponse(content="..."),
            code=CodeRecord(language=language, code=code, parses=True),  # type: ignore[arg-type]
            execution=result,
            status="no_estimate",
        )
    )
    assert record.status == "wrong" and record.scores is not None
    assert record.scores.fitted_right is None and record.scores.fitted_effect is None
    row = cells_frame([record]).iloc[0]
    assert classify_cell(pd.Series({**row.to_dict(), "unit": "m"})) == "other_wrong"


def _literal(text: str, language: str) -> str:
    """``text`` as a string literal of ``language`` (single quotes: the line has none)."""
    assert "'" not in text
    return f"'{text}'"

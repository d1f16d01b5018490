"""The fit log: every model a script fitted, recorded inside the sandbox, read by the harness.

Both interpreters load a hook before the script (Python: ``sitecustomize`` through
``PYTHONPATH``; R: the site profile through ``R_PROFILE``), both placed read-only in
``/code/hooks``. The hooks write one JSON line per fitted model to a pipe whose write end the
script's process inherits (its number is in ``CAUSALVERIFY_FITLOG_FD``, which the hook unsets);
the harness drains the pipe while the script runs, so what was written survives a crash, a
timeout or a kill. See :mod:`causalverify.sandbox._fitlog_py` and ``fitlog.R`` for what is hooked.
The same pipe carries the output records of :mod:`causalverify.sandbox.outputs` (which line of
the script wrote each piece of stdout); :func:`parse_fit_log` leaves them to that module.

The log is untrusted data written by untrusted code. :func:`parse_fit_log` keeps at most
:data:`MAX_BYTES` bytes and :data:`MAX_ENTRIES` entries, drops every malformed, oversized or
non-finite item with a note, and never raises. Extraction only uses it to recognise which
*printed* number is the estimate, so a forged entry cannot score better than an ``ESTIMATE:``
line would.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from causalverify.families import Language
from causalverify.sandbox.base import FitEntry, FitTerm

HOOK_DIR: Final = "/code/hooks"
#: how the output records that share the pipe start (see causalverify.sandbox.outputs)
OUTPUT_PREFIX: Final = b'{"kind":"output"'
#: how the R hook's records of install.packages() calls start (see :func:`parse_installs`)
INSTALL_PREFIX: Final = b'{"kind":"install"'
FD_VAR: Final = "CAUSALVERIFY_FITLOG_FD"
MAX_BYTES: Final = 4 * 1024 * 1024
MAX_ENTRIES: Final = 2000
MAX_TERMS: Final = 200
_MAX_NAME: Final = 200
_R_PACKAGE: Final = re.compile(r"[A-Za-z][A-Za-z0-9.]{0,99}")

#: R is started as ``--vanilla`` minus ``--no-site-file``, so that R_PROFILE names the hook
R_FLAGS: Final = ("--no-save", "--no-restore", "--no-environ", "--no-init-file")
R_FLAGS_NO_HOOK: Final = ("--vanilla",)


@functools.cache
def hook_files() -> dict[str, bytes]:
    """The hook scripts by file name (placed in :data:`HOOK_DIR`)."""
    pkg = resources.files("causalverify.sandbox")
    return {
        "sitecustomize.py": pkg.joinpath("_fitlog_py.py").read_bytes(),
        # loaded by sitecustomize: output provenance (causalverify.sandbox.outputs)
        "causalverify_output.py": pkg.joinpath("_output_py.py").read_bytes(),
        # the output hook's block comes first: it reads the variable the fit log's block unsets
        "fitlog.R": pkg.joinpath("output.R").read_bytes()
        + b"\n"
        + pkg.joinpath("fitlog.R").read_bytes(),
    }


def hook_env(language: Language, fd: int, hook_dir: str = HOOK_DIR) -> dict[str, str]:
    """The variables that load the hook of ``language`` and name the log's descriptor."""
    if language == "r":
        return {FD_VAR: str(fd), "R_PROFILE": f"{hook_dir}/fitlog.R"}
    return {FD_VAR: str(fd), "PYTHONPATH": hook_dir}


def _name(value: Any) -> str | None:
    if not isinstance(value, str) or not value or len(value) > _MAX_NAME:
        return None
    return value


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def _term(raw: Any) -> FitTerm | None:
    if not isinstance(raw, dict):
        return None
    term = _name(raw.get("term"))
    if term is None:
        return None
    se = _finite(raw.get("std_error"))
    return FitTerm(
        term=term,
        estimate=_finite(raw.get("estimate")),
        std_error=se if se is not None and se >= 0 else None,
    )


def _entry(raw: Any) -> FitEntry | None:
    if not isinstance(raw, dict):
        return None
    function = _name(raw.get("function"))
    terms_raw = raw.get("terms")
    if function is None or not isinstance(terms_raw, list) or len(terms_raw) > MAX_TERMS:
        return None
    terms = [t for t in (_term(r) for r in terms_raw) if t is not None]
    if len(terms) != len(terms_raw):
        return None
    nobs = _finite(raw.get("nobs"))
    endog_raw = raw.get("endogenous", [])
    if not isinstance(endog_raw, list) or len(endog_raw) > MAX_TERMS:
        return None
    endog = [_name(v) for v in endog_raw]
    if any(e is None for e in endog):
        return None
    return FitEntry(
        function=function,
        terms=terms,
        nobs=nobs if nobs is not None and nobs >= 0 else None,
        iv=raw.get("iv") is True,
        rd=raw.get("rd") is True,
        fuzzy=raw.get("fuzzy") is True,
        endogenous=[e for e in endog if e is not None],
        vcov=_name(raw.get("vcov")),
    )


def parse_fit_log(data: bytes, *, truncated: bool = False) -> tuple[list[FitEntry], str]:
    """Read the fit log's JSON lines; return the valid entries and a note on what was dropped.

    Never raises: a line that is not valid UTF-8 JSON of the entry shape is dropped and counted.
    """
    notes: list[str] = []
    if len(data) > MAX_BYTES:
        data, truncated = data[:MAX_BYTES], True
    lines = data.split(b"\n")
    if truncated:
        lines = lines[:-1]  # the last line was cut
        notes.append(f"fit log over {MAX_BYTES} bytes: the rest was dropped")
    entries: list[FitEntry] = []
    bad = 0
    over = 0
    for line in lines:
        if not line.strip() or line.startswith((OUTPUT_PREFIX, INSTALL_PREFIX)):
            continue  # output records: causalverify.sandbox.outputs; installs: parse_installs
        if len(entries) >= MAX_ENTRIES:
            over += 1
            continue
        try:
            entry = _entry(json.loads(line.decode("utf-8")))
        except (ValueError, RecursionError):
            entry = None
        if entry is None:
            bad += 1
        else:
            entries.append(entry)
    if bad:
        notes.append(f"{bad} malformed fit-log line(s) dropped")
    if over:
        notes.append(f"{over} fit-log entries past the first {MAX_ENTRIES} dropped")
    return entries, "; ".join(notes)


def parse_installs(data: bytes, *, limit: int = 50) -> list[str]:
    """The packages the script asked ``install.packages()`` for that were not installed, in order.

    The R hook records them because R's own error in the sandbox ("unable to install packages",
    the library being read-only) does not name them when the script passes a variable. Like the
    rest of the log, a claim of the script's process; never raises.
    """
    names: list[str] = []
    for line in data[:MAX_BYTES].split(b"\n"):
        if not line.startswith(INSTALL_PREFIX):
            continue
        try:
            raw = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            continue
        packages = raw.get("packages") if isinstance(raw, dict) else None
        if not isinstance(packages, list):
            continue
        for name in packages:
            if isinstance(name, str) and _R_PACKAGE.fullmatch(name) and name not in names:
                names.append(name)
        if len(names) >= limit:
            break
    return names[:limit]


#: the hooked functions (as in fitlog.R), for the self-check
R_TARGETS: Final[dict[str, tuple[str, ...]]] = {
    "stats": ("lm", "glm"),
    "estimatr": ("lm_robust", "iv_robust"),
    "AER": ("ivreg",),
    "ivreg": ("ivreg",),
    "plm": ("plm",),
    "lmtest": ("coeftest",),
    "fixest": ("feols", "feglm", "fepois"),
    "lfe": ("felm",),
    "rdrobust": ("rdrobust",),
}

_HOOK_CHECK_R: Final = """
targets <- TARGETS
d <- data.frame(x = c(1, 2, 3, 4, 5, 6), y = c(1.1, 2.3, 2.9, 4.2, 5.1, 5.8))
cat("COEF", sprintf("%.17g", coef(lm(y ~ x, d))[["x"]]), "\\n")
original_of <- function(e) {  # the closure of the package the wrapper calls
  if (is.function(e) && !identical(environment(e), baseenv())) return(e)
  if (is.call(e)) for (i in seq_along(e)) {
    found <- tryCatch(original_of(e[[i]]), error = function(err) NULL)
    if (!is.null(found)) return(found)
  }
  NULL
}
for (pkg in names(targets)) {
  if (!nzchar(system.file(package = pkg))) next
  if (!isTRUE(tryCatch({ loadNamespace(pkg); TRUE }, error = function(e) FALSE))) next
  for (fn in targets[[pkg]]) {
    if (!exists(fn, envir = asNamespace(pkg), inherits = FALSE)) next
    w <- get(fn, envir = asNamespace(pkg))
    hooked <- isTRUE(attr(w, "causalverify_fitlog", exact = TRUE))
    f <- if (hooked) original_of(body(w)) else w
    code <- if (is.null(f)) "none" else typeof(.Internal(bodyCode(f)))
    cat("HOOK", paste0(pkg, "::", fn), hooked, code, "\\n")
  }
}
"""


@dataclass(frozen=True)
class HookCheck:
    """One fit-log self-check: ``name`` holds (``ok``), with a ``detail``."""

    name: str
    ok: bool
    detail: str


def hook_selfcheck(sandbox: Any) -> list[HookCheck]:
    """Run the R hook inside ``sandbox``: a fit of ``lm`` is logged as ``coef()`` gives it, and
    every hooked function of an installed package is wrapped with its original's byte-code kept
    (a hook that rewrote the body would leave R's JIT to recompile it on each run)."""
    vector = ", ".join(
        f"{pkg} = c({', '.join(repr(f).replace(chr(39), chr(34)) for f in fns)})"
        for pkg, fns in R_TARGETS.items()
    )
    code = _HOOK_CHECK_R.replace("TARGETS", f"list({vector})")
    result = sandbox.run(code, "r", {})
    if not result.ok:
        return [HookCheck("fit log (R)", False, f"{result.status}: {result.stderr[-300:]}")]
    checks: list[HookCheck] = []
    for line in result.stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["COEF"] and len(parts) == 2:
            logged = [t.estimate for f in result.fits for t in f.terms if t.term == "x"]
            ok = bool(logged) and logged[0] == float(parts[1])
            checks.append(HookCheck("fit log: stats::lm logged as coef()", ok, str(logged[:1])))
        elif parts[:1] == ["HOOK"] and len(parts) == 4:
            hooked, kind = parts[2] == "TRUE", parts[3]
            detail = f"{'wrapped' if hooked else 'NOT hooked'}; original's body: {kind}"
            checks.append(HookCheck(f"fit log: {parts[1]}", hooked and kind == "bytecode", detail))
    return checks

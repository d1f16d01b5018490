"""Minimal stand-ins for CRAN packages the test machines cannot install (rdrobust, lfe, fixest,
pacman): tiny R source packages with the same names and the shape the fit log reads, built here
and installed with ``R CMD INSTALL`` (byte-compiled, as CRAN packages are)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

_DESCRIPTION = (
    "Package: {name}\nVersion: {version}\nTitle: Test Stand-In\n"
    "Description: A stand-in of the same shape, for CausalVerify's tests.\n"
    "License: MIT\nAuthor: CausalVerify tests\nMaintainer: Tests <tests@example.org>\n"
    "Encoding: UTF-8\nByteCompile: yes\n"
)

#: R code making the data frame ``d`` that the fit-log tests fit, with stand-ins and real packages
FIT_DATA = """
set.seed(11)
n <- 400
d <- data.frame(z = rnorm(n), w = rnorm(n))
d$x <- 0.8 * d$z + 0.3 * d$w + rnorm(n)
d$y <- 1.5 * d$x + 0.5 * d$w + rnorm(n)
d$run <- runif(n, -1, 1)
d$treat <- as.numeric(d$run >= 0 & runif(n) < 0.8 | d$run < 0 & runif(n) < 0.2)
d$yr <- d$run + 1.2 * d$treat + 0.2 * rnorm(n)
"""

#: a heavy body, so that compiling it costs what compiling a real estimation function does
_HEAVY = "\n".join(
    f"  s{i} <- sum(vapply(seq_len(3L), function(k) k * {i}, 0)); if (s{i} < 0) stop('no')"
    for i in range(400)
)

RDROBUST = f"""
rdrobust <- function(y, x, c = 0, fuzzy = NULL, h = NULL, vce = "nn", ...) {{
{_HEAVY}
  h <- if (is.null(h)) 0.5 else h
  left <- x < c & x >= c - h
  right <- x >= c & x <= c + h
  jump <- function(v) mean(v[right]) - mean(v[left])
  tau <- jump(y)
  if (!is.null(fuzzy)) tau <- tau / jump(fuzzy)
  se <- sd(y[left | right]) / sqrt(sum(left | right))
  coef <- matrix(c(tau, tau * 1.01, tau * 1.01), 3, 1,
                 dimnames = list(c("Conventional", "Bias-Corrected", "Robust"), "Coeff"))
  out <- list(coef = coef, se = matrix(c(se, se, se * 1.2), 3, 1), N = c(sum(x < c), sum(x >= c)),
              vce = toupper(vce),
              rdmodel = paste(if (is.null(fuzzy)) "Sharp" else "Fuzzy",
                              "RD estimates using local polynomial regression."),
              call = match.call())
  class(out) <- "rdrobust"
  out
}}
print.rdrobust <- function(x, ...) {{
  cat("Call: rdrobust\\n")
  cat(sprintf("Coef %.6f SE %.6f\\n", x$coef[1, 1], x$se[1, 1]))
  invisible(x)
}}
"""

LFE = """
felm <- function(formula, data, ...) {
  y <- data$y
  xhat <- fitted(lm(x ~ z + w, data = data))
  X <- cbind(1, xhat, data$w)
  b <- drop(solve(crossprod(X), crossprod(X, y)))
  names(b) <- c("(Intercept)", "`x(fit)`", "w")
  res <- y - drop(cbind(1, data$x, data$w) %*% b)
  V <- sum(res^2) / (length(y) - 3) * solve(crossprod(X))
  dimnames(V) <- list(names(b), names(b))
  out <- list(coefficients = matrix(b, ncol = 1, dimnames = list(names(b), "y")),
              vcv = V, residuals = res, iv.residuals = res, endovars = "x",
              stage1 = list(), N = length(y), call = match.call())
  class(out) <- "felm"
  out
}
coef.felm <- function(object, ...) {
  b <- object[["coefficients"]]
  stats::setNames(b[, 1], rownames(b))
}
vcov.felm <- function(object, ...) object[["vcv"]]
nobs.felm <- function(object, ...) object[["N"]]
"""

FIXEST = f"""
feols <- function(fml, data, ...) {{
{_HEAVY}
  fit <- stats::lm.fit(stats::model.matrix(fml, data), data[[all.vars(fml)[1L]]])
  out <- list(coefficients = fit$coefficients, call = match.call())
  class(out) <- "cvfixest"
  out
}}
"""

PACMAN = """
p_load <- function(..., char = NULL) {
  pkgs <- if (is.null(char)) vapply(as.list(substitute(list(...)))[-1L], deparse, "") else char
  for (p in pkgs) {
    if (!requireNamespace(p, quietly = TRUE)) utils::install.packages(p)
    suppressPackageStartupMessages(library(p, character.only = TRUE))
  }
  invisible(TRUE)
}
"""

PACKAGES: dict[str, tuple[str, str]] = {
    "rdrobust": (RDROBUST, "export(rdrobust)\nS3method(print, rdrobust)\n"),
    "lfe": (
        LFE,
        "export(felm)\nimportFrom(stats, coef, vcov, nobs, fitted, lm)\n"
        "S3method(coef, felm)\nS3method(vcov, felm)\nS3method(nobs, felm)\n",
    ),
    "fixest": (FIXEST, "export(feols)\n"),
    "pacman": (PACMAN, "export(p_load)\n"),
}


def write_source(root: Path, name: str, code: str, namespace: str, version: str = "0.1.0") -> Path:
    """A source package folder ``root/name``."""
    pkg = root / name
    if pkg.exists():
        shutil.rmtree(pkg)
    (pkg / "R").mkdir(parents=True)
    (pkg / "DESCRIPTION").write_text(_DESCRIPTION.format(name=name, version=version))
    (pkg / "NAMESPACE").write_text(namespace)
    (pkg / "R" / f"{name}.R").write_text(code)
    return pkg


def build_tarball(root: Path, name: str, code: str, namespace: str, version: str) -> Path:
    """``R CMD build`` of a source package: ``root/<name>_<version>.tar.gz``."""
    src = write_source(root / f"src-{version}", name, code, namespace, version)
    subprocess.run(
        ["R", "CMD", "build", "--no-manual", str(src)], cwd=root, check=True, capture_output=True
    )
    return root / f"{name}_{version}.tar.gz"


def install_standins(library: Path, names: list[str] | None = None) -> None:
    """Install the stand-ins (byte-compiled) into ``library``."""
    library.mkdir(parents=True, exist_ok=True)
    src = library.parent / "standin-sources"
    folders = [
        str(write_source(src, name, code, ns))
        for name, (code, ns) in PACKAGES.items()
        if names is None or name in names
    ]
    subprocess.run(
        ["R", "CMD", "INSTALL", "--byte-compile", f"--library={library}", *folders],
        check=True,
        capture_output=True,
    )

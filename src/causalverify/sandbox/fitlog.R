# The fit log's R side: sourced inside the sandbox as the site profile (R_PROFILE) before the
# script. It records every model the script fits with the common estimation functions as one JSON
# line {"function", "terms": [{"term", "estimate", "std_error"}], "nobs"} written to the pipe named
# by CAUSALVERIFY_FITLOG_FD, without changing what the script computes or prints:
#  - a function is hooked when its package's namespace loads (packageEvent hooks), so packages
#    the script never loads are never touched;
#  - the hook adds an on.exit() handler to a copy of the function's body (on.exit() calls of the
#    original body get add = TRUE so they cannot remove it); the function keeps its environment,
#    formals and call, so match.call(), printed calls and results are unchanged;
#  - only the outermost hooked call is logged (lm() called inside another hooked fit is not);
#  - every failure of the hook is swallowed; the environment variables that point here are unset;
#  - nothing is defined in any environment the script can see.
local({
  fd <- Sys.getenv("CAUSALVERIFY_FITLOG_FD")
  Sys.unsetenv(c("CAUSALVERIFY_FITLOG_FD", "R_PROFILE"))
  if (!grepl("^[0-9]+$", fd)) return(invisible())
  path <- paste0("/proc/self/fd/", fd)
  state <- new.env(parent = emptyenv())
  state$depth <- 0L
  state$written <- 0L
  max_entries <- 2000L
  max_terms <- 200L

  jstr <- function(s) {
    s <- enc2utf8(as.character(s))
    s <- gsub("\\", "\\\\", s, fixed = TRUE)
    s <- gsub("\"", "\\\"", s, fixed = TRUE)
    s <- gsub("[[:cntrl:]]", " ", s)
    paste0("\"", s, "\"")
  }
  jnum <- function(x) {
    x <- suppressWarnings(as.numeric(x))
    if (length(x) != 1L || !is.finite(x)) "null" else sprintf("%.17g", x)
  }
  is_dummy <- function(term) grepl("^(as\\.)?factor\\(.*\\).+$", term)

  entry_json <- function(fname, est, se, nobs, extra = "") {
    terms <- names(est)
    if (is.null(terms)) terms <- paste0("x", seq_along(est))
    keep <- which(!is_dummy(terms))
    if (length(keep) > max_terms) keep <- keep[seq_len(max_terms)]
    parts <- vapply(keep, function(i) {
      s <- if (!is.null(se) && !is.null(names(se)) && terms[i] %in% names(se)) se[[terms[i]]]
           else if (!is.null(se) && length(se) == length(est)) se[[i]] else NA
      paste0("{\"term\":", jstr(terms[i]), ",\"estimate\":", jnum(est[[i]]),
             ",\"std_error\":", jnum(s), "}")
    }, "")
    paste0("{\"function\":", jstr(fname), ",\"terms\":[", paste(parts, collapse = ","),
           "],\"nobs\":", jnum(nobs), extra, "}")
  }

  endogenous <- function(fit) {
    nm <- tryCatch({
      if (!is.null(fit$iv_endo_names)) fit$iv_endo_names           # fixest
      else if (!is.null(fit$endogenous)) names(fit$endogenous)      # ivreg::ivreg
      else {
        f <- formula(fit)                                          # AER::ivreg, iv_robust
        rhs <- deparse(f[[3L]], width.cutoff = 500L)
        if (!grepl("|", paste(rhs, collapse = " "), fixed = TRUE)) NULL
        else {
          sides <- strsplit(paste(rhs, collapse = " "), "|", fixed = TRUE)[[1L]]
          setdiff(all.vars(str2lang(sides[1L])), all.vars(str2lang(sides[2L])))
        }
      }
    }, error = function(e) NULL)
    if (length(nm) == 0L) "" else
      paste0(",\"iv\":true,\"endogenous\":[", paste(vapply(nm, jstr, ""), collapse = ","), "]")
  }

  entries <- function(fname, fit) {
    if (inherits(fit, "fixest_multi")) {
      return(unlist(lapply(as.list(fit), function(f) entries(fname, f)), use.names = FALSE))
    }
    if (inherits(fit, "coeftest")) {
      m <- unclass(fit)
      est <- stats::setNames(m[, 1L], rownames(m))
      se <- stats::setNames(m[, 2L], rownames(m))
      return(entry_json(fname, est, se, attr(fit, "nobs")))
    }
    if (inherits(fit, "rdrobust")) {
      est <- stats::setNames(as.numeric(fit$coef), rownames(fit$coef))
      se <- stats::setNames(as.numeric(fit$se), rownames(fit$coef))
      return(entry_json(fname, est, se, sum(fit$N), ",\"rd\":true"))
    }
    est <- stats::coef(fit)
    if (is.matrix(est)) {
      est <- stats::setNames(as.vector(est),
                             as.vector(outer(rownames(est), colnames(est), paste, sep = ":")))
    }
    if (!is.numeric(est) || length(est) == 0L) return(character())
    se <- tryCatch({
      v <- stats::vcov(fit)
      stats::setNames(sqrt(pmax(diag(v), 0)), rownames(v))
    }, error = function(e) NULL)
    nobs <- tryCatch(stats::nobs(fit), error = function(e) NA)
    iv <- if (inherits(fit, c("ivreg", "iv_robust")) || isTRUE(fit$iv)) endogenous(fit) else ""
    entry_json(fname, est, se, nobs, iv)
  }

  write_entries <- function(fname, fit) {
    if (is.null(fit) || state$written >= max_entries) return(invisible())
    lines <- tryCatch(suppressWarnings(entries(fname, fit)), error = function(e) character())
    if (length(lines) == 0L) return(invisible())
    lines <- lines[seq_len(min(length(lines), max_entries - state$written))]
    state$written <- state$written + length(lines)
    tryCatch(suppressWarnings({
      con <- file(path, open = "a", raw = TRUE)
      on.exit(close(con))
      writeLines(enc2utf8(lines), con, useBytes = TRUE)
    }), error = function(e) NULL)
    invisible()
  }

  # The hook's own closures run interpreted: the JIT would compile each of them on first use,
  # which costs far more (up to 0.1 s) than running them once. The JIT level is restored.
  quietly <- function(expr) {
    old <- compiler::enableJIT(0L)
    on.exit(compiler::enableJIT(old))
    expr
  }
  enter <- function() state$depth <- state$depth + 1L
  leave <- function(fname, value) {
    state$depth <- state$depth - 1L
    if (state$depth == 0L) quietly(write_entries(fname, value))
  }

  # on.exit() calls of the original body get add = TRUE, so they cannot drop the hook's handler
  keep_exits <- function(e) {
    if (is.call(e)) {
      if (identical(e[[1L]], as.name("on.exit")) && is.null(e$add)) e$add <- TRUE
      for (i in seq_along(e)[-1L]) if (!is.null(e[[i]])) e[[i]] <- keep_exits(e[[i]])
    }
    e
  }

  hook <- function(pkg, name) {
    ns <- asNamespace(pkg)
    if (!exists(name, envir = ns, inherits = FALSE)) return(invisible())
    f <- get(name, envir = ns, inherits = FALSE)
    if (!is.function(f) || is.primitive(f) || isTRUE(attr(f, "causalverify_fitlog"))) return()
    fname <- paste0(pkg, "::", name)
    original <- body(f)
    if ("on.exit" %in% all.names(original)) original <- keep_exits(original)
    body(f) <- bquote({
      .(enter)()
      on.exit(.(leave)(.(fname), returnValue(NULL)), add = TRUE)
      .(original)
    })
    attr(f, "causalverify_fitlog") <- TRUE
    locked <- bindingIsLocked(name, ns)
    if (locked) unlockBinding(name, ns)
    assign(name, f, envir = ns)
    if (locked) lockBinding(name, ns)
    exports <- tryCatch(as.environment(paste0("package:", pkg)), error = function(e) NULL)
    if (!is.null(exports) && exists(name, envir = exports, inherits = FALSE)) {
      locked <- bindingIsLocked(name, exports)
      if (locked) unlockBinding(name, exports)
      assign(name, f, envir = exports)
      if (locked) lockBinding(name, exports)
    }
    invisible()
  }

  targets <- list(
    stats = c("lm", "glm"),
    estimatr = c("lm_robust", "iv_robust"),
    AER = "ivreg",
    ivreg = "ivreg",
    plm = "plm",
    lmtest = "coeftest",
    fixest = c("feols", "feglm", "fepois"),
    lfe = "felm",
    rdrobust = "rdrobust"
  )
  for (pkg in names(targets)) {
    local({
      p <- pkg
      fns <- targets[[p]]
      setHook(packageEvent(p, "onLoad"), function(...) {
        quietly(for (fn in fns) tryCatch(hook(p, fn), error = function(e) NULL))
      })
    })
  }
  invisible()
})

# The fit log's R side: sourced inside the sandbox as the site profile (R_PROFILE) before the
# script. It records every model the script fits with the common estimation functions as one JSON
# line {"function", "terms": [{"term", "estimate", "std_error"}], "nobs", "vcov"} written to the
# pipe named by CAUSALVERIFY_FITLOG_FD, without changing what the script computes or prints
# ("vcov": how the standard errors were computed, in the package's words: lm_robust's se_type,
# fixest's vcov, coeftest's vcov. argument as written; "classical" where vcov() always is):
#  - a function is hooked when its package's namespace loads (packageEvent hooks), so packages
#    the script never loads are never touched;
#  - the hook adds an on.exit() handler to a copy of the function's body (on.exit() calls of the
#    original body get add = TRUE so they cannot remove it); the function keeps its environment,
#    formals and call, so match.call(), printed calls and results are unchanged;
#  - only the outermost hooked call is logged (lm() called inside another hooked fit is not);
#  - every failure of the hook is swallowed; the environment variables that point here are unset;
#  - nothing is defined in any environment the script can see, and the hook keeps no state the
#    script could reach and change: what runs when a hooked function returns is an expression
#    (the descriptor's path and the caps written into it as constants) evaluated afresh in a new
#    environment each time, "outermost" is read from the call stack, and the load hooks'
#    closures live in the base environment. (The script can still write to the descriptor or
#    replace a function: the harness treats every entry as a claim, see fitlog.py.)
local({
  fd <- Sys.getenv("CAUSALVERIFY_FITLOG_FD")
  Sys.unsetenv(c("CAUSALVERIFY_FITLOG_FD", "R_PROFILE"))
  if (!grepl("^[0-9]+$", fd)) return(invisible())

  # What a hooked function runs when it returns, as an expression: FNAME_ is replaced by the
  # function's name when it is hooked. It defines its helpers anew each time, in a fresh
  # environment whose parent is the returning call's frame, and keeps nothing afterwards.
  logger <- bquote(base::local({
    jit <- compiler::enableJIT(0L)  # the JIT would compile these helpers on every call
    base::tryCatch(base::suppressWarnings({
      call_env <- parent.env(environment())  # the returning call's frame
      here <- Position(function(e) identical(e, call_env), sys.frames(), nomatch = 0L)
      # only the outermost hooked call is logged: none of the returning call's callers is hooked
      outer <- here > 0L && !any(vapply(seq_len(here - 1L), function(i)
        isTRUE(attr(sys.function(i), "causalverify_fitlog")), NA))
      value <- if (outer) returnValue(NULL) else NULL
      if (!is.null(value)) {
        max_terms <- .(200L)
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
        text_of <- function(e) paste(deparse(e, width.cutoff = 500L), collapse = " ")
        vcov_json <- function(v) {
          if (!is.character(v) || length(v) != 1L || is.na(v) || !nzchar(v)) return("")
          paste0(",\"vcov\":", jstr(substr(gsub("[[:space:]]+", " ", v), 1L, .(200L))))
        }
        # how vcov() of a fit computes its standard errors, where the class says so
        vcov_of <- function(fit) {
          if (inherits(fit, "fixest")) return(attr(fit$cov.scaled, "type"))
          if (inherits(fit, c("lm_robust", "iv_robust"))) {
            if (!isTRUE(fit$clustered)) return(fit$se_type)
            return(paste(fit$se_type, "by", text_of(fit$call$clusters)))
          }
          if (inherits(fit, "rdrobust")) return(if (is.null(fit$vce)) NULL else paste0("vce=", fit$vce))
          if (inherits(fit, "felm")) {
            cl <- names(fit$clustervar)
            return(if (length(cl)) paste("cluster by", paste(cl, collapse = "+")) else "classical")
          }
          if (inherits(fit, c("lm", "glm", "ivreg", "plm"))) return("classical")
          NULL
        }
        # coeftest: its vcov. argument as written (with the named arguments it passes on), or
        # the model's own vcov when none was given (the expressions of the call's promises, so an
        # argument passed on through a wrapper's ... reads as the wrapper's caller wrote it)
        coeftest_vcov <- function() {
          if (eval(quote(missing(vcov.)), call_env)) return(vcov_of(get("x", envir = call_env)))
          given <- eval(quote(substitute(vcov.)), call_env)
          rest <- if (eval(quote(missing(...)), call_env)) list()
                  else as.list(eval(quote(substitute(list(...))), call_env))[-1L]
          named <- if (is.null(names(rest))) logical(length(rest)) else nzchar(names(rest))
          rest <- rest[named]
          paste(c(text_of(given),
                  if (length(rest)) paste(names(rest), vapply(rest, text_of, ""), sep = " = ")),
                collapse = ", ")
        }
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
            vc <- tryCatch(coeftest_vcov(), error = function(e) NULL)
            return(entry_json(fname, est, se, attr(fit, "nobs"), vcov_json(vc)))
          }
          if (inherits(fit, "rdrobust")) {
            est <- stats::setNames(as.numeric(fit$coef), rownames(fit$coef))
            se <- stats::setNames(as.numeric(fit$se), rownames(fit$coef))
            vc <- tryCatch(vcov_of(fit), error = function(e) NULL)
            return(entry_json(fname, est, se, sum(fit$N), paste0(",\"rd\":true", vcov_json(vc))))
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
          vc <- tryCatch(vcov_of(fit), error = function(e) NULL)
          entry_json(fname, est, se, nobs, paste0(iv, vcov_json(vc)))
        }
        lines <- entries(FNAME_, value)
        lines <- lines[seq_len(min(length(lines), .(2000L)))]
        if (length(lines)) {
          con <- file(.(paste0("/proc/self/fd/", fd)), open = "a", raw = TRUE)
          on.exit(close(con))
          writeLines(enc2utf8(lines), con, useBytes = TRUE)
        }
      }
    }), error = function(e) NULL, finally = compiler::enableJIT(jit))
    invisible()
  }))

  # Hooks one function of a loaded namespace; a closure of the base environment whose body
  # holds the logger as a constant.
  hook <- eval(bquote(function(pkg, name) {
    # on.exit() calls of the original body get add = TRUE, so they cannot drop the logger
    keep_exits <- function(e) {
      if (is.call(e)) {
        if (identical(e[[1L]], as.name("on.exit")) && is.null(e$add)) e$add <- TRUE
        for (i in seq_along(e)[-1L]) if (!is.null(e[[i]])) e[[i]] <- keep_exits(e[[i]])
      }
      e
    }
    ns <- asNamespace(pkg)
    if (!exists(name, envir = ns, inherits = FALSE)) return(invisible())
    f <- get(name, envir = ns, inherits = FALSE)
    if (!is.function(f) || is.primitive(f) || isTRUE(attr(f, "causalverify_fitlog"))) return()
    fname <- paste0(pkg, "::", name)
    original <- body(f)
    if ("on.exit" %in% all.names(original)) original <- keep_exits(original)
    exit <- do.call(substitute, list(quote(.(logger)), list(FNAME_ = fname)))
    body(f) <- call("{", call("on.exit", exit, add = TRUE), original)
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
  }), baseenv())

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
    # the hook's JIT level is restored; the closure lives in the base environment
    on_load <- eval(bquote(function(...) {
      jit <- compiler::enableJIT(0L)
      on.exit(compiler::enableJIT(jit))
      for (fn in .(targets[[pkg]])) tryCatch(.(hook)(.(pkg), fn), error = function(e) NULL)
    }), baseenv())
    setHook(packageEvent(pkg, "onLoad"), on_load)
  }
  invisible()
})

# The fit log's R side: sourced inside the sandbox as the site profile (R_PROFILE) before the
# script. It records every model the script fits with the common estimation functions as one JSON
# line {"function", "terms": [{"term", "estimate", "std_error"}], "nobs", "vcov"} written to the
# pipe named by CAUSALVERIFY_FITLOG_FD, without changing what the script computes or prints
# ("vcov": how the standard errors were computed, in the package's words: lm_robust's se_type,
# fixest's vcov, coeftest's vcov. argument as written; "classical" where vcov() always is; "iv"
# and "endogenous" for instrumental-variables fits, "rd" for rdrobust and "fuzzy" for a fuzzy
# rdrobust), and the packages the script asked install.packages() for that are not installed, as
# {"kind":"install","packages": [...]} (the sandbox has no network: R's own error does not name
# them when the name is a variable):
#  - a function is hooked when its package's namespace loads (packageEvent hooks), so packages
#    the script never loads are never touched;
#  - the hook wraps, it does not rewrite: the namespace's binding (and the attached package's)
#    becomes a small wrapper that evaluates the script's own call with the call's function name
#    bound to the original function, in a new environment whose parent is the caller's frame
#    (the wrapper is not compiled when it is made, which would cost every run at startup; R's
#    JIT compiles it, as any function, once it is called again). The original keeps its
#    byte-code (R's JIT has nothing to recompile), and sees the same call: match.call(),
#    sys.call(), printed calls, error messages and results are unchanged. (A call whose
#    function is neither a name nor pkg::name, e.g. fits[[1]](...), is evaluated with the
#    original function in its place.) The wrapper's logger runs on exit, with the JIT off while
#    it runs and the JIT's level restored after;
#  - only the outermost hooked call is logged (lm() called inside another hooked fit is not), and
#    a coeftest() made by an S3 method (AER's summary.ivreg) is that method's display of a fit
#    already logged, not a fit;
#  - lists are read with [[ ]] (exact), attributes with exact = TRUE: no partial matching (felm's
#    iv.residuals is not an iv flag);
#  - every failure of the hook is swallowed; the environment variables that point here are unset;
#  - nothing is defined in any environment the script can see, and the hook keeps no state the
#    script could reach and change: what runs when a hooked function returns is an expression
#    (the descriptor's path and the caps written into it as constants) evaluated afresh in a new
#    environment each time (by a function of the base environment that holds it as a constant),
#    "outermost" is read from the call stack, and the load hooks' closures live in the base
#    environment. (The script can still write to the descriptor or replace a function: the
#    harness treats every entry as a claim, see fitlog.py.)
local({
  fd <- Sys.getenv("CAUSALVERIFY_FITLOG_FD")
  Sys.unsetenv(c("CAUSALVERIFY_FITLOG_FD", "R_PROFILE"))
  if (!grepl("^[0-9]+$", fd)) return(invisible())

  # What a hooked function runs when it returns: a small function of the base environment
  # (made by `runner`, below) evaluates this expression in its own new frame, where
  # call_env is the returning call's frame, FNAME_ the function's name and ORIGINAL_ the original
  # function. The expression defines its helpers anew each time and keeps nothing afterwards; it
  # is not byte-compiled (that would cost more at startup than it saves on a few fits) and runs
  # with the JIT off (the JIT would compile these helpers on every call).
  logger <- bquote({
      frames <- sys.frames()
      here <- 0L
      for (i in seq_along(frames)) if (identical(frames[[i]], call_env)) {
        here <- i
        break
      }
      # only the outermost hooked call is logged: none of the returning call's callers is hooked
      outer <- here > 0L
      for (i in seq_len(here - 1L)) {
        if (isTRUE(attr(sys.function(i), "causalverify_fitlog", exact = TRUE))) {
          outer <- FALSE
          break
        }
      }
      # a coeftest() made by an S3 method (summary.ivreg) displays a fit, it is not one
      caller <- get("caller", envir = call_env, inherits = FALSE)
      by_method <- FNAME_ == "lmtest::coeftest" &&
        exists(".Generic", envir = caller, inherits = FALSE)
      value <- if (outer && !by_method) returnValue(NULL) else NULL
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
        # jnum of each element of a vector
        jnums <- function(x) {
          x <- as.numeric(x)
          out <- rep("null", length(x))
          ok <- is.finite(x)
          out[ok] <- sprintf("%.17g", x[ok])
          out
        }
        is_dummy <- function(term) grepl("^(as\\.)?factor\\(.*\\).+$", term)
        text_of <- function(e) paste(deparse(e, width.cutoff = 500L), collapse = " ")
        vcov_json <- function(v) {
          if (!is.character(v) || length(v) != 1L || is.na(v) || !nzchar(v)) return("")
          paste0(",\"vcov\":", jstr(substr(gsub("[[:space:]]+", " ", v), 1L, .(200L))))
        }
        # how vcov() of a fit computes its standard errors, where the class says so
        vcov_of <- function(fit) {
          if (inherits(fit, "fixest")) return(attr(fit[["cov.scaled"]], "type", exact = TRUE))
          if (inherits(fit, c("lm_robust", "iv_robust"))) {
            if (!isTRUE(fit[["clustered"]])) return(fit[["se_type"]])
            return(paste(fit[["se_type"]], "by", text_of(fit[["call"]][["clusters"]])))
          }
          if (inherits(fit, "rdrobust")) {
            vce <- fit[["vce"]]
            return(if (is.null(vce)) NULL else paste0("vce=", vce))
          }
          if (inherits(fit, "felm")) {
            cl <- names(fit[["clustervar"]])
            return(if (length(cl)) paste("cluster by", paste(cl, collapse = "+")) else "classical")
          }
          if (inherits(fit, c("lm", "glm", "ivreg", "plm"))) return("classical")
          NULL
        }
        # coeftest's arguments as the script wrote them (an argument passed on through a
        # wrapper's ... reads as the wrapper's caller wrote it), and the model when it was named
        coeftest_args <- function() {
          call <- as.list(get("call", envir = call_env, inherits = FALSE))
          dots <- vapply(call, identical, NA, quote(...))
          if (any(dots)) {  # the caller's ... as its own caller wrote them
            given <- as.list(eval(quote(substitute(list(...))), caller))[-1L]
            at <- which(dots)[1L]
            call <- c(call[seq_len(at - 1L)], given, call[-seq_len(at)])
          }
          matched <- match.call(ORIGINAL_, as.call(call), expand.dots = FALSE)
          x <- matched[["x"]]
          model <- if (is.name(x)) get(as.character(x), envir = caller) else NULL
          list(model = model, vcov = matched[["vcov."]], rest = matched[["..."]])
        }
        # coeftest: its vcov. argument as written (with the named arguments it passes on), or
        # the model's own vcov when none was given
        coeftest_vcov <- function(args) {
          if (is.null(args[["vcov"]])) return(vcov_of(args[["model"]]))
          rest <- as.list(args[["rest"]])
          named <- if (is.null(names(rest))) logical(length(rest)) else nzchar(names(rest))
          rest <- rest[named]
          paste(c(text_of(args[["vcov"]]),
                  if (length(rest)) paste(names(rest), vapply(rest, text_of, ""), sep = " = ")),
                collapse = ", ")
        }
        entry_json <- function(fname, est, se, nobs, extra = "") {
          terms <- names(est)
          if (is.null(terms)) terms <- paste0("x", seq_along(est))
          keep <- which(!is_dummy(terms))
          if (length(keep) > max_terms) keep <- keep[seq_len(max_terms)]
          kept <- terms[keep]
          if (is.numeric(est) && (is.null(se) || is.numeric(se)) &&
              !anyNA(kept) && all(nzchar(kept))) {
            # all terms at once: the same text as the term-by-term loop below gives here
            pos <- if (is.null(se) || is.null(names(se))) rep(NA_integer_, length(keep))
                   else match(kept, names(se))
            if (!is.null(se) && length(se) == length(est)) pos[is.na(pos)] <- keep[is.na(pos)]
            texts <- jstr(c(fname, kept))
            parts <- paste0("{\"term\":", texts[-1L], ",\"estimate\":", jnums(est[keep]),
                            ",\"std_error\":", if (is.null(se)) "null" else jnums(se[pos]), "}")
            if (!length(keep)) parts <- character()
            return(paste0("{\"function\":", texts[1L], ",\"terms\":[",
                          paste(parts, collapse = ","), "],\"nobs\":", jnum(nobs), extra, "}"))
          }
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
            if (!is.null(fit[["iv_endo_names"]])) fit[["iv_endo_names"]]       # fixest
            else if (!is.null(fit[["endovars"]])) fit[["endovars"]]         # lfe::felm
            else if (!is.null(fit[["endogenous"]])) names(fit[["endogenous"]]) # ivreg::ivreg
            else {
              f <- stats::formula(fit)                                      # AER::ivreg, iv_robust
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
        # an IV fit: ivreg (AER, ivreg), iv_robust, fixest with an IV part, felm with endogenous
        # regressors (felm's list has iv.residuals, not iv: no partial matching)
        iv_of <- function(fit) {
          is_iv <- inherits(fit, c("ivreg", "iv_robust")) || isTRUE(fit[["iv"]]) ||
            (inherits(fit, "felm") && length(fit[["endovars"]]) > 0L)
          if (is_iv) endogenous(fit) else ""
        }
        # a fuzzy rdrobust: its rdmodel says so (rdrobust >= 2), else its call has fuzzy =
        is_fuzzy <- function(fit) {
          model <- fit[["rdmodel"]]
          if (is.character(model) && length(model) == 1L && !is.na(model)) {
            return(grepl("fuzzy", model, ignore.case = TRUE))
          }
          cl <- fit[["call"]]
          is.call(cl) && !is.null(cl[["fuzzy"]])
        }
        entries <- function(fname, fit) {
          if (inherits(fit, "fixest_multi")) {
            return(unlist(lapply(as.list(fit), function(f) entries(fname, f)), use.names = FALSE))
          }
          if (inherits(fit, "coeftest")) {
            m <- unclass(fit)
            est <- stats::setNames(m[, 1L], rownames(m))
            se <- stats::setNames(m[, 2L], rownames(m))
            args <- tryCatch(coeftest_args(), error = function(e) list())
            vc <- tryCatch(coeftest_vcov(args), error = function(e) NULL)
            iv <- tryCatch(iv_of(args[["model"]]), error = function(e) "")
            return(entry_json(fname, est, se, attr(fit, "nobs", exact = TRUE),
                              paste0(iv, vcov_json(vc))))
          }
          if (inherits(fit, "rdrobust")) {
            coefs <- fit[["coef"]]
            est <- stats::setNames(as.numeric(coefs), rownames(coefs))
            se <- stats::setNames(as.numeric(fit[["se"]]), rownames(coefs))
            vc <- tryCatch(vcov_of(fit), error = function(e) NULL)
            fuzzy <- if (isTRUE(tryCatch(is_fuzzy(fit), error = function(e) FALSE))) {
              ",\"fuzzy\":true"
            } else ""
            return(entry_json(fname, est, se, sum(fit[["N"]]),
                              paste0(",\"rd\":true", fuzzy, vcov_json(vc))))
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
          iv <- tryCatch(iv_of(fit), error = function(e) "")
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
  })

  # What a hooked install.packages() runs when it returns (or fails): the packages it was asked
  # for that are not installed, read from its arguments as the script wrote them (evaluated again
  # in the caller's frame: a name, a vector, need[!have]).
  install_logger <- bquote({
      caller <- get("caller", envir = call_env, inherits = FALSE)
      matched <- match.call(ORIGINAL_, get("call", envir = call_env, inherits = FALSE),
                            envir = caller)
      given <- matched[["pkgs"]]
      pkgs <- if (is.character(given)) given else eval(given, caller)
      pkgs <- unique(pkgs[is.character(pkgs) & !is.na(pkgs)])
      pkgs <- pkgs[grepl("^[A-Za-z][A-Za-z0-9.]*$", pkgs)]
      pkgs <- pkgs[!nzchar(vapply(pkgs, function(p) system.file(package = p), ""))]
      pkgs <- pkgs[seq_len(min(length(pkgs), .(50L)))]
      if (length(pkgs)) {
        line <- paste0("{\"kind\":\"install\",\"packages\":[",
                       paste0("\"", pkgs, "\"", collapse = ","), "]}")
        con <- file(.(paste0("/proc/self/fd/", fd)), open = "a", raw = TRUE)
        on.exit(close(con))
        writeLines(line, con, useBytes = TRUE)
      }
  })

  # The function that runs a logger: a function of the base environment that evaluates the
  # logger (a constant) with the JIT off while it runs and its level restored after, and every
  # failure and warning of the logger swallowed.
  runner <- function(body) {
    eval(bquote(function(call_env, FNAME_, ORIGINAL_) {
      jit <- compiler::enableJIT(0L)
      base::tryCatch(base::suppressWarnings(eval(quote(.(body)))), error = function(e) NULL,
                     finally = compiler::enableJIT(jit))
      invisible()
    }), baseenv())
  }
  logger <- runner(logger)
  install_logger <- runner(install_logger)

  # Hooks one function of a loaded namespace; a closure of the base environment whose body
  # holds the loggers as constants. The wrapper it puts in the function's place evaluates the
  # script's own call (sys.call()) with the function's name bound to the original in a new
  # environment whose parent is the caller's frame (for pkg::name, `::` is bound there to a
  # function that gives the original for this name and defers to base R otherwise).
  hook <- eval(bquote(function(pkg, name, install = FALSE) {
    ns <- asNamespace(pkg)
    if (!exists(name, envir = ns, inherits = FALSE)) return(invisible())
    f <- get(name, envir = ns, inherits = FALSE)
    if (!is.function(f) || is.primitive(f) ||
        isTRUE(attr(f, "causalverify_fitlog", exact = TRUE))) return(invisible())
    fname <- paste0(pkg, "::", name)
    exit <- as.call(list(if (install) .(install_logger) else .(logger),
                         quote(environment()), fname, f))
    template <- function(expr, values) eval(do.call(substitute, list(expr, values)), baseenv())
    # binds the name, in the namespace and the attached package, to a function
    bind <- template(quote(function(value) {
      attached <- match(ATTACHED_, search())  # as.environment(ATTACHED_) when it is attached
      envs <- list(asNamespace(PKG_), if (!is.na(attached)) as.environment(attached))
      for (env in envs) if (!is.null(env) && exists(NAME_, envir = env, inherits = FALSE)) {
        locked <- bindingIsLocked(NAME_, env)
        if (locked) unlockBinding(NAME_, env)
        assign(NAME_, value, envir = env)
        if (locked) lockBinding(NAME_, env)
      }
    }), list(PKG_ = pkg, NAME_ = name, ATTACHED_ = paste0("package:", pkg)))
    # While a call runs, the name is bound to the original, so that the script's call, evaluated
    # in the caller's frame, reaches it exactly as it would unhooked (same call, same parent
    # frame, same promises); a call by another route (FUN in lapply) gets a frame that binds
    # the name, and one whose function is not named gets the original in its place.
    wrapper <- template(quote(function() {
      on.exit(EXIT_)
      call <- sys.call()
      caller <- parent.frame()
      head <- call[[1L]]
      if (is.name(head) || (is.call(head) && length(head) == 3L &&
          (identical(head[[1L]], quote(`::`)) || identical(head[[1L]], quote(`:::`))))) {
        me <- sys.function()
        BIND_(ORIGINAL_)
        on.exit(BIND_(me), add = TRUE)
        if (identical(tryCatch(eval(head, caller), error = function(e) NULL), ORIGINAL_)) {
          return(eval(call, caller))
        }
      }
      if (is.name(head)) {
        where <- new.env(parent = caller)
        assign(as.character(head), ORIGINAL_, envir = where)
        return(eval(call, where))
      }
      call[[1L]] <- ORIGINAL_
      eval(call, caller)
    }), list(EXIT_ = exit, ORIGINAL_ = f, BIND_ = bind))
    formals(wrapper) <- formals(f)
    attr(wrapper, "causalverify_fitlog") <- TRUE
    bind(wrapper)
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
    rdrobust = "rdrobust",
    utils = "install.packages"
  )
  for (pkg in names(targets)) {
    # the hook's JIT level is restored; the closure lives in the base environment
    on_load <- eval(bquote(function(...) {
      jit <- compiler::enableJIT(0L)
      on.exit(compiler::enableJIT(jit))
      for (fn in .(targets[[pkg]])) {
        tryCatch(.(hook)(.(pkg), fn, install = fn == "install.packages"), error = function(e) NULL)
      }
    }), baseenv())
    setHook(packageEvent(pkg, "onLoad"), on_load)
  }
  invisible()
})

# Output provenance, R side: which line of the script printed each piece of stdout. Placed before
# the fit log's hook in the site profile (R_PROFILE; it reads CAUSALVERIFY_FITLOG_FD, which the
# fit log's block then unsets) and writes to the same pipe, one JSON line per run of output:
# {"kind":"output","function","line","code","call","top_line","chars","head","tail","object"}.
#  - base::cat, print, print.default and writeLines get a first statement (as the fit log hooks
#    do: formals, environment and the rest of the body unchanged; on.exit() calls of the body get
#    add = TRUE). When such a call writes to stdout, is not inside another hooked call and no
#    sink is active, the hook pushes a split sink to a raw connection: stdout receives exactly
#    the same bytes at the same moment, and the hook gets a copy. The sink is popped when the
#    call ends (also on error); if the call left the sink stack otherwise, the hook lets it be.
#  - a task callback counts the top-level expressions, so the hook knows which one is running;
#    on the first record it parses the script (utils::getParseData) and finds the innermost call
#    on the stack that is written in the script (same language object), preferring the running
#    top-level expression. Auto-printing at top level is recorded with that expression.
#  - consecutive output of the same call (a loop's iterations) makes one record; records are
#    written when the place changes and at exit (an exit finalizer), at most 4000 and 2 MiB.
#  - every failure of the hook is swallowed; nothing is defined where the script can see it.
# What it changes that a script could notice: sink.number() and stdout() inside a hooked call,
# the bodies of the four functions, and one entry in getTaskCallbackNames().
local({
  fd <- Sys.getenv("CAUSALVERIFY_FITLOG_FD")
  if (!grepl("^[0-9]+$", fd)) return(invisible())
  path <- paste0("/proc/self/fd/", fd)
  args <- commandArgs(FALSE)
  script <- sub("^--file=", "", args[startsWith(args, "--file=")])
  if (length(script) != 1L) return(invisible())
  state <- new.env(parent = emptyenv())
  state$busy <- FALSE
  state$records <- 0L
  state$bytes <- 0
  state$toplevel <- 0L
  state$index <- NULL
  state$pending <- NULL
  state$last_line <- 0L
  max_records <- 4000L
  max_bytes <- 2 * 1024^2
  head_chars <- 64L
  tail_chars <- 32L
  code_chars <- 300L

  jtext <- function(s) {
    s <- gsub("\\", "\\\\", s, fixed = TRUE)
    s <- gsub("\"", "\\\"", s, fixed = TRUE)
    s <- gsub("\n", "\\n", s, fixed = TRUE)
    s <- gsub("\t", "\\t", s, fixed = TRUE)
    s <- gsub("\r", "\\r", s, fixed = TRUE)
    if (grepl("[\001-\037\177]", s, useBytes = TRUE)) {
      cp <- utf8ToInt(s)
      if (anyNA(cp)) return("\"\"")
      bad <- cp < 32L | cp == 127L
      parts <- vapply(cp, intToUtf8, "")
      parts[bad] <- sprintf("\\u%04x", cp[bad])
      s <- paste(parts, collapse = "")
    }
    paste0("\"", s, "\"")
  }
  jint <- function(x) if (is.null(x) || is.na(x)) "null" else as.character(as.integer(x))
  one_line <- function(s) {
    s <- gsub("[ \t]*\n[ \t]*", " ", s)
    if (nchar(s, allowNA = TRUE) > code_chars) substr(s, 1L, code_chars) else s
  }

  # the script's calls by function name, and the lines of its top-level expressions
  build_index <- function() {
    idx <- new.env(parent = emptyenv())
    exprs <- tryCatch(suppressWarnings(parse(script, keep.source = TRUE, encoding = "UTF-8")),
                      error = function(e) NULL)
    if (is.null(exprs)) return(list(calls = idx, top = NULL))
    refs <- attr(exprs, "srcref")
    top <- if (length(refs) == length(exprs)) {
      list(first = vapply(refs, function(r) r[[1L]], 0L),
           last = vapply(refs, function(r) r[[3L]], 0L),
           text = vapply(refs, function(r) one_line(paste(as.character(r), collapse = "\n")), ""))
    }
    pd <- utils::getParseData(exprs, includeText = NA)
    if (is.null(pd) || nrow(pd) == 0L) return(list(calls = idx, top = top))
    parent <- stats::setNames(pd$parent, pd$id)
    fn <- which(pd$token == "SYMBOL_FUNCTION_CALL")
    ids <- unname(parent[as.character(parent[as.character(pd$id[fn])])])
    keep <- !is.na(ids) & ids > 0L
    fn <- fn[keep]
    ids <- ids[keep]
    text <- utils::getParseText(pd, ids)
    line <- pd$line1[match(ids, pd$id)]
    for (i in seq_along(ids)) {
      call <- tryCatch(str2lang(text[i]), error = function(e) NULL)
      if (!is.call(call)) next
      name <- pd$text[fn[i]]
      entry <- list(call = call, line = line[i], text = one_line(text[i]))
      idx[[name]] <- c(get0(name, envir = idx, inherits = FALSE), list(entry))
    }
    list(calls = idx, top = top)
  }

  call_name <- function(call) {
    f <- call[[1L]]
    if (is.symbol(f)) return(as.character(f))
    if (is.call(f) && length(f) == 3L && is.symbol(f[[3L]]) &&
        (identical(f[[1L]], quote(`::`)) || identical(f[[1L]], quote(`:::`)))) {
      return(as.character(f[[3L]]))
    }
    ""
  }

  # the script's own text of `call`, preferring the running top-level expression's lines
  find_call <- function(call, first, last) {
    if (!is.call(call)) return(NULL)
    name <- call_name(call)
    if (!nzchar(name)) return(NULL)
    found <- NULL
    within <- NULL
    for (e in get0(name, envir = state$index$calls, inherits = FALSE)) {
      if (!identical(e$call, call)) next
      if (is.null(found)) found <- e
      if (e$line >= first && e$line <= last) {
        if (e$line >= state$last_line) return(e)
        if (is.null(within)) within <- e
      }
    }
    if (!is.null(within)) within else found
  }

  locate <- function(calls) {
    if (is.null(state$index)) state$index <- build_index()
    top <- state$index$top
    k <- state$toplevel + 1L
    first <- 0L
    last <- 0L
    top_text <- ""
    if (!is.null(top) && k <= length(top$first)) {
      first <- top$first[[k]]
      last <- top$last[[k]]
      top_text <- top$text[[k]]
    }
    for (i in rev(seq_along(calls))) {
      e <- find_call(calls[[i]], first, last)
      if (!is.null(e)) {
        if (e$line >= first && e$line <= last) state$last_line <- e$line
        return(list(line = e$line, code = e$text, top_line = if (first > 0L) first))
      }
    }
    if (first > 0L) list(line = first, code = top_text, top_line = first) else NULL
  }

  flush_pending <- function() {
    p <- state$pending
    state$pending <- NULL
    if (is.null(p) || state$records >= max_records) return(invisible())
    line <- paste0(
      "{\"kind\":\"output\",\"function\":", jtext(p$fname),
      ",\"line\":", jint(p$where$line), ",\"code\":", jtext(p$where$code),
      ",\"call\":", jtext(p$call), ",\"top_line\":", jint(p$where$top_line),
      ",\"chars\":", jint(p$chars), ",\"head\":", jtext(p$head), ",\"tail\":", jtext(p$tail),
      ",\"object\":", jtext(p$object), "}")
    size <- nchar(line, type = "bytes") + 1
    if (state$bytes + size > max_bytes) {
      state$records <- max_records
      return(invisible())
    }
    state$records <- state$records + 1L
    state$bytes <- state$bytes + size
    con <- file(path, open = "a", raw = TRUE)
    on.exit(close(con))
    writeLines(enc2utf8(line), con, useBytes = TRUE)
    invisible()
  }

  note <- function(fname, bytes, calls, value) {
    text <- rawToChar(bytes)
    n <- nchar(text, type = "chars", allowNA = TRUE)
    if (is.na(n)) return(flush_pending())  # not valid UTF-8: cannot be placed in stdout
    hooked <- calls[[length(calls)]]
    p <- state$pending
    if (!is.null(p) && identical(p$hooked, hooked) && p$toplevel == state$toplevel) {
      p$chars <- p$chars + n
      if (nchar(p$head) < head_chars) p$head <- substr(paste0(p$head, text), 1L, head_chars)
      tail <- paste0(p$tail, text)
      p$tail <- substring(tail, max(1L, nchar(tail) - tail_chars + 1L))
      state$pending <- p
      return(invisible())
    }
    flush_pending()
    where <- locate(calls)
    if (is.null(where)) where <- list(line = NULL, code = "", top_line = NULL)
    call <- if (is.function(hooked[[1L]])) "" else
      one_line(paste(deparse(hooked, width.cutoff = 500L, nlines = 3L), collapse = " "))
    object <- if (fname %in% c("print", "print.default")) class(value)[1L] else ""
    state$pending <- list(
      fname = fname, hooked = hooked, toplevel = state$toplevel, where = where,
      call = call, object = if (length(object) == 1L && !is.na(object)) object else "",
      chars = n, head = substr(text, 1L, head_chars),
      tail = substring(text, max(1L, n - tail_chars + 1L))
    )
    invisible()
  }

  # TRUE when this call is recorded: its output goes to stdout, no sink is active, no hooked
  # call is running; then the split sink is in place
  begin <- function(fname, env) {
    if (state$busy || state$records >= max_records) return(FALSE)
    tryCatch({
      if (.Internal(sink.number(TRUE)) != 0L) return(FALSE)
      target <- if (fname == "cat") substitute(file, env) else if (fname == "writeLines")
        substitute(con, env)
      if (!is.null(target) && !identical(target, "") && !identical(target, quote(stdout()))) {
        return(FALSE)
      }
      con <- rawConnection(raw(0L), "w")
      .Internal(sink(con, FALSE, FALSE, TRUE))
      state$con <- con
      state$level <- .Internal(sink.number(TRUE))
      state$busy <- TRUE
      TRUE
    }, error = function(e) FALSE)
  }

  finish <- function(fname, value) {
    state$busy <- FALSE
    tryCatch({
      con <- state$con
      state$con <- NULL
      if (.Internal(sink.number(TRUE)) != state$level) {
        # the call changed the sink stack; ours is not on top, so it stays
        state$pending <- NULL
        return(invisible())
      }
      .Internal(sink(-1L, FALSE, FALSE, FALSE))
      bytes <- rawConnectionValue(con)
      close(con)
      if (length(bytes) == 0L) return(invisible())
      calls <- sys.calls()
      note(fname, bytes, calls[-length(calls)], value)
    }, error = function(e) NULL)
    invisible()
  }

  # on.exit() calls of the original body get add = TRUE, so they cannot drop the hook's handler
  keep_exits <- function(e) {
    if (is.call(e)) {
      if (identical(e[[1L]], as.name("on.exit")) && is.null(e$add)) e$add <- TRUE
      for (i in seq_along(e)[-1L]) if (!is.null(e[[i]])) e[[i]] <- keep_exits(e[[i]])
    }
    e
  }

  hook <- function(name) {
    f <- get(name, envir = baseenv(), inherits = FALSE)
    if (!is.function(f) || is.primitive(f) || isTRUE(attr(f, "causalverify_output"))) return()
    original <- body(f)
    if ("on.exit" %in% all.names(original)) original <- keep_exits(original)
    body(f) <- bquote({
      if (.(begin)(.(name), environment())) on.exit(.(finish)(.(name), returnValue(NULL)),
                                                    add = TRUE)
      .(original)
    })
    attr(f, "causalverify_output") <- TRUE
    locked <- bindingIsLocked(name, baseenv())
    if (locked) unlockBinding(name, baseenv())
    assign(name, f, envir = baseenv())
    if (locked) lockBinding(name, baseenv())
  }

  ok <- tryCatch({
    for (name in c("cat", "print", "print.default", "writeLines")) hook(name)
    addTaskCallback(function(...) {
      state$toplevel <- state$toplevel + 1L
      TRUE
    }, name = "causalverify")
    reg.finalizer(state, function(e) tryCatch(flush_pending(), error = function(e) NULL),
                  onexit = TRUE)
    TRUE
  }, error = function(e) FALSE)
  invisible(ok)
})

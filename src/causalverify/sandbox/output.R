# Output provenance, R side: which line of the script printed each piece of stdout. Placed before
# the fit log's hook in the site profile (R_PROFILE; it reads CAUSALVERIFY_FITLOG_FD, which the
# fit log's block then unsets) and writes to the same pipe, one JSON line per run of output:
# {"kind":"output","function","line","code","call","top_line","chars","head","tail","object"}.
#  - base::cat, print, print.default and writeLines get a first statement (as the fit log hooks
#    do: formals, environment and the rest of the body unchanged; on.exit() calls of the body get
#    add = TRUE). When such a call writes to stdout, is not inside another hooked call and no
#    sink is active, the hook evaluates the arguments the function evaluates first anyway (cat's
#    ..., print's x, writeLines' text) and pushes a split sink to a raw connection: stdout
#    receives exactly the same bytes at the same moment, and the hook gets a copy. The sink is
#    popped when the call ends (also on error); if the call left the sink stack otherwise, the
#    hook lets it be.
#  - a task callback counts the top-level expressions, so the hook knows which one is running;
#    on the first record it parses the script (with source references) and finds the innermost call
#    on the stack that is written in the script (same language object), preferring the running
#    top-level expression. Auto-printing at top level is recorded with that expression.
#  - consecutive output of the same call (a loop's iterations) makes one record; records are
#    written 64 at a time and at exit (an exit finalizer), at most 4000 and 2 MiB; a run that is
#    killed loses the last ones.
#  - every failure of the hook is swallowed; nothing is defined in an environment the script
#    searches. (Its state can be reached through the hooked bodies; like writing to the pipe,
#    changing it only changes the script's own records, which the harness treats as claims.)
# What it changes that a script could notice: sink.number() and stdout() inside a print method
# or a lazily evaluated argument (sep, digits, ...) of a hooked call, the bodies of the four
# functions, and one entry in getTaskCallbackNames().
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
  state$out <- character()
  batch <- 64L
  max_records <- 4000L
  max_bytes <- 2 * 1024^2
  head_chars <- 64L
  tail_chars <- 32L
  code_chars <- 300L

  # a JSON string: R's own escaping when it gives only JSON's escapes, else escaped here
  jtext <- function(s) {
    out <- .Internal(encodeString(s, 0L, "\"", 0L, TRUE))
    if (!grepl("\\\\[^\"\\\\nrt]", out)) return(out)
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

  # The script's calls by function name, each with the first line (and, for a whole statement,
  # the text) of the innermost statement holding it; and the lines of its top-level expressions.
  # Parsed twice: with source references (no parse data: that table alone is half a megabyte)
  # for the lines, and without, for calls identical() to the ones the script evaluates.
  build_index <- function() {
    idx <- new.env(parent = emptyenv())
    lines <- tryCatch(readLines(script, warn = FALSE, encoding = "UTF-8"),
                      error = function(e) NULL)
    op <- options(keep.parse.data = FALSE)
    on.exit(options(op))
    src <- tryCatch(parse(text = lines, keep.source = TRUE, srcfile = srcfilecopy(
      script, lines, timestamp = 0, isFile = FALSE)), error = function(e) NULL)
    plain <- tryCatch(parse(text = lines, keep.source = FALSE), error = function(e) NULL)
    refs <- attr(src, "srcref")
    if (is.null(src) || length(plain) != length(src) || length(refs) != length(src)) {
      return(list(calls = idx, top = NULL))
    }
    text_of <- function(ref) one_line(paste(as.character(ref), collapse = "\n"))
    for (k in seq_along(plain)) walk(plain[[k]], src[[k]], refs[[k]], TRUE, idx, text_of)
    list(calls = idx, top = list(
      first = vapply(refs, function(r) r[[1L]], 0L),
      last = vapply(refs, function(r) r[[3L]], 0L),
      text = vapply(refs, text_of, "")))
  }

  walk <- function(e, s, ref, whole, idx, text_of) {
    if (!is.call(e) || !is.call(s) || length(e) != length(s)) return(invisible())
    head <- e[[1L]]
    if (identical(head, quote(`{`))) {
      refs <- attr(s, "srcref")
      for (i in seq_along(e)[-1L]) {
        inner <- if (length(refs) >= i) refs[[i]] else NULL
        walk(e[[i]], s[[i]], if (is.null(inner)) ref else inner, !is.null(inner), idx, text_of)
      }
      return(invisible())
    }
    name <- call_name(e)
    if (nzchar(name)) {
      entry <- list(call = e, line = ref[[1L]], text = if (whole) text_of(ref) else "")
      idx[[name]] <- c(get0(name, envir = idx, inherits = FALSE), list(entry))
    }
    last <- if (identical(head, quote(`function`))) 3L else length(e)  # not the srcref
    for (i in seq_len(last)[-1L]) {
      if (!identical(e[[i]], quote(expr = ))) walk(e[[i]], s[[i]], ref, FALSE, idx, text_of)
    }
    invisible()
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
    n <- length(calls)
    for (i in rev(seq_len(n))) {
      e <- find_call(calls[[i]], first, last)
      if (!is.null(e)) {
        if (e$line >= first && e$line <= last) state$last_line <- e$line
        code <- if (nzchar(e$text)) e$text else
          one_line(paste(deparse(e$call, width.cutoff = 500L, nlines = 3L), collapse = " "))
        return(list(line = e$line, code = code, top_line = if (first > 0L) first,
                    direct = i == n))
      }
    }
    if (first > 0L) list(line = first, code = top_text, top_line = first, direct = FALSE)
  }

  # records are written in batches (and at exit): opening the pipe costs more than a record
  write_out <- function() {
    out <- state$out
    state$out <- character()
    if (length(out) == 0L) return(invisible())
    con <- file(path, open = "a", raw = TRUE)
    on.exit(close(con))
    writeLines(out, con, useBytes = TRUE)
    invisible()
  }

  flush_pending <- function() {
    p <- state$pending
    state$pending <- NULL
    if (is.null(p) || state$records >= max_records) return(invisible())
    line <- enc2utf8(paste0(
      "{\"kind\":\"output\",\"function\":", jtext(p$fname),
      ",\"line\":", jint(p$where$line), ",\"code\":", jtext(p$where$code),
      ",\"call\":", jtext(p$call), ",\"top_line\":", jint(p$where$top_line),
      ",\"chars\":", jint(p$chars), ",\"head\":", jtext(p$head), ",\"tail\":", jtext(p$tail),
      ",\"object\":", jtext(p$object), "}"))
    size <- nchar(line, type = "bytes") + 1
    if (state$bytes + size > max_bytes) {
      state$records <- max_records
      return(invisible())
    }
    state$records <- state$records + 1L
    state$bytes <- state$bytes + size
    state$out <- c(state$out, line)
    if (length(state$out) >= batch) write_out()
    invisible()
  }

  # a run of output from the call that wrote last: it joins that call's record
  extend <- function(hooked, text, n) {
    p <- state$pending
    if (is.null(p) || !identical(p$hooked, hooked) || p$toplevel != state$toplevel) {
      return(FALSE)
    }
    state$pending <- grow(p, text, n)
    TRUE
  }
  grow <- function(p, text, n) {
    p$chars <- p$chars + n
    if (nchar(p$head) < head_chars) p$head <- substr(paste0(p$head, text), 1L, head_chars)
    tail <- paste0(p$tail, text)
    p$tail <- substr(tail, max(1L, nchar(tail) - tail_chars + 1L), 1000000L)
    p
  }

  # a new record: where the call is in the script, what it printed
  start <- function(fname, text, n, calls, value) {
    flush_pending()
    hooked <- calls[[length(calls)]]
    where <- locate(calls)
    if (is.null(where)) where <- list(line = NULL, code = "", top_line = NULL, direct = FALSE)
    call <- if (where$direct) where$code else if (is.function(hooked[[1L]])) "" else
      one_line(paste(deparse(hooked, width.cutoff = 500L, nlines = 3L), collapse = " "))
    object <- if (fname == "print" || fname == "print.default") class(value)[1L] else ""
    state$pending <- list(
      fname = fname, hooked = hooked, toplevel = state$toplevel, where = where,
      call = call, object = if (length(object) == 1L && !is.na(object)) object else "",
      chars = n, head = substr(text, 1L, head_chars),
      tail = substr(text, max(1L, n - tail_chars + 1L), n)
    )
    invisible()
  }

  # TRUE when this call would be recorded: its output goes to stdout, no sink is active, no
  # hooked call is running. Looks at the call's arguments without evaluating any.
  ready <- function(fname, env) {
    if (state$busy || state$records >= max_records || .Internal(sink.number(TRUE)) != 0L) {
      return(FALSE)
    }
    target <- if (fname == "cat") substitute(file, env) else if (fname == "writeLines")
      substitute(con, env)
    is.null(target) || identical(target, "") || identical(target, quote(stdout()))
  }

  # put the split sink in place; TRUE when it is
  begin <- function() {
    if (length(.Internal(getAllConnections())) > 120L) return(FALSE)  # R allows 128
    con <- .Internal(rawConnection("output", raw(0L), "w"))
    .Internal(sink(con, FALSE, FALSE, TRUE))
    state$con <- con
    state$level <- .Internal(sink.number(TRUE))
    state$busy <- TRUE
    TRUE
  }

  # the sink's bytes, once it is popped; NULL when the call left the sink stack otherwise
  pop <- function() {
    con <- state$con
    state$con <- NULL
    if (.Internal(sink.number(TRUE)) != state$level) return(NULL)  # ours is not on top: stays
    .Internal(sink(-1L, FALSE, FALSE, FALSE))
    bytes <- .Internal(rawConnectionValue(con))
    .Internal(close(con, "rw"))
    bytes
  }

  settle <- function(fname, value, calls) {
    bytes <- pop()
    if (length(bytes) == 0L) return(invisible())
    text <- rawToChar(bytes)
    n <- nchar(text, type = "chars", allowNA = TRUE)
    calls <- calls[-length(calls)]  # finish() itself
    if (is.na(n)) return(flush_pending())  # not valid UTF-8: cannot be placed in stdout
    if (extend(calls[[length(calls)]], text, n)) return(invisible())
    # The JIT would compile the record-keeping closures on first use, which costs far more
    # (0.1 s) than running them interpreted: it is off while a record is started.
    jit <- .Internal(enableJIT(0L))
    on.exit(.Internal(enableJIT(jit)))
    start(fname, text, n, calls, value)
  }

  finish <- function(fname, value) {
    state$busy <- FALSE
    calls <- sys.calls()
    tryCatch(settle(fname, value, calls), error = function(e) state$pending <- NULL)
    invisible()
  }

  at_exit <- function(e) {
    jit <- .Internal(enableJIT(0L))
    on.exit(.Internal(enableJIT(jit)))
    tryCatch({
      flush_pending()
      write_out()
    }, error = function(e) NULL)
  }

  # on.exit() calls of the original body get add = TRUE, so they cannot drop the hook's handler
  keep_exits <- function(e) {
    if (is.call(e)) {
      if (identical(e[[1L]], as.name("on.exit")) && is.null(e$add)) e$add <- TRUE
      for (i in seq_along(e)[-1L]) if (!is.null(e[[i]])) e[[i]] <- keep_exits(e[[i]])
    }
    e
  }

  # `force`: the arguments the function evaluates first anyway, evaluated in its own frame
  # before the sink is in place (so that they see no sink, and fail exactly as they would)
  hook <- function(name, force) {
    f <- get(name, envir = baseenv(), inherits = FALSE)
    if (!is.function(f) || is.primitive(f) || isTRUE(attr(f, "causalverify_output"))) return()
    original <- body(f)
    if ("on.exit" %in% all.names(original)) original <- keep_exits(original)
    body(f) <- bquote({
      if (.(ready)(.(name), environment())) {
        .(force)
        if (.(begin)()) on.exit(.(finish)(.(name), returnValue(NULL)), add = TRUE)
      }
      .(original)
    })
    attr(f, "causalverify_output") <- TRUE
    locked <- bindingIsLocked(name, baseenv())
    if (locked) unlockBinding(name, baseenv())
    assign(name, f, envir = baseenv())
    if (locked) lockBinding(name, baseenv())
  }

  ok <- tryCatch({
    hook("cat", quote(list(...)))
    hook("print", quote(x))
    hook("print.default", NULL)
    hook("writeLines", quote(text))
    addTaskCallback(function(...) {
      state$toplevel <- state$toplevel + 1L
      TRUE
    }, name = "causalverify")
    reg.finalizer(state, at_exit, onexit = TRUE)
    TRUE
  }, error = function(e) FALSE)
  invisible(ok)
})

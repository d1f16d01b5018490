"""The cell explorer's markup and script, inlined in ``index.html`` (no network, no CDN).

The script reads ``explorer/cells.js`` (one row per cell), filters, sorts and pages the table,
follows ``#cells?<filters>`` links from the report's tables and opens ``#cell/<scenario>/<model>/
<language>/<sample>`` by loading that cell's chunk. Model output (responses, code, stdout) is
untrusted: it is only ever inserted as text, never as markup.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote


def cell_address(scenario: str, model: str, language: str, sample: int) -> str:
    """The explorer's address of one cell (``#cell/<scenario>/<model>/<language>/<sample>``,
    each part encoded as the page's script encodes it)."""
    parts = (scenario, model, language, str(sample))
    return "#cell/" + "/".join(quote(p, safe="!~*'()") for p in parts)


FILTERS: Final[tuple[tuple[str, str], ...]] = (
    ("unit", "unit"),
    ("model", "model"),
    ("language", "language"),
    ("family", "design"),
    ("difficulty", "difficulty"),
    ("status", "status"),
    ("se_tier", "SE tier"),
    ("category", "failure category"),
)

COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("scenario", "scenario"),
    ("model", "model"),
    ("language", "language"),
    ("sample", "sample"),
    ("family", "design"),
    ("difficulty", "difficulty"),
    ("status", "status"),
    ("estimate", "estimate"),
    ("canonical", "canonical"),
    ("rel_error", "rel. error"),
    ("reported_se", "SE"),
    ("canonical_se", "canonical SE"),
    ("se_tier", "SE tier"),
)

CSS: Final[str] = """
#explorer .filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; }
#explorer label { font-size: 0.85rem; }
#cv-table th { cursor: pointer; user-select: none; }
#cv-table td a { font-family: ui-monospace, monospace; }
#cv-pager { margin: 0.5rem 0; } #cv-pager button { margin: 0 0.4rem; }
#cv-cell { border: 2px solid #888; padding: 0.5rem 1rem; margin: 1rem 0; background: #fcfcfc; }
#cv-cell pre { background: #f6f6f6; border: 1px solid #ddd; padding: 0.5rem; overflow-x: auto;
               white-space: pre-wrap; word-break: break-word; font-size: 0.8rem; }
#cv-cell pre .ln { display: block; } #cv-cell mark { display: block; background: #ffe58a; }
details > summary { cursor: pointer; font-weight: 600; margin-top: 1rem; }
"""


def explorer_markup(available: bool) -> str:
    """The explorer section (empty when the report was made from a table, not a run)."""
    if not available:
        return (
            '<section id="explorer"><h2>Cells</h2><p class="note">No cell explorer: this report '
            "was made from a per-cell table, not a run folder.</p></section>"
        )
    selects = "".join(
        f'<label>{label} <select id="cv-f-{key}" data-key="{key}"><option value="">all'
        "</option></select></label>"
        for key, label in FILTERS
    )
    heads = "".join(f'<th data-key="{key}">{label}</th>' for key, label in COLUMNS)
    return (
        '<section id="cv-cell" hidden></section>\n'
        '<section id="explorer"><h2>Cells</h2>'
        '<p class="note">Every cell of the run: filter, sort (click a heading), open one to read '
        "its verdict and scores, stderr, its output with the line the estimate was read from "
        "marked, the code that ran, the answer and (folded, last) the prompt. Numbers in the "
        "tables above link here.</p>"
        f'<div class="filters">{selects}<label>scenario <input id="cv-f-scenario" size="8">'
        '</label><span id="cv-count"></span></div>'
        f'<table id="cv-table"><thead><tr>{heads}</tr></thead><tbody></tbody></table>'
        '<div id="cv-pager"><button id="cv-prev" type="button">previous</button>'
        '<span id="cv-page"></span><button id="cv-next" type="button">next</button></div>'
        "</section>\n"
        '<script src="explorer/cells.js"></script>\n'
        f"<script>{SCRIPT}</script>\n"
    )


SCRIPT: Final[str] = r"""
(function () {
  "use strict";
  var IDX = window.CV_INDEX;
  if (!IDX) { return; }
  var F = {};
  IDX.fields.forEach(function (f, i) { F[f] = i; });
  var ROWS = IDX.rows, PAGE = 100, chunks = {}, waiting = {}, prompts = null, promptWait = [];
  var state = { filters: {}, scenario: "", sort: null, desc: false, page: 0 };
  var KEYS = ["unit", "model", "language", "family", "difficulty", "status", "se_tier", "category"];
  var SHOWN = ["scenario", "model", "language", "sample", "family", "difficulty", "status",
               "estimate", "canonical", "rel_error", "reported_se", "canonical_se", "se_tier"];
  function $(id) { return document.getElementById(id); }
  function unitOf(r) {
    return IDX.unit === "model_language" ? r[F.model] + " (" + r[F.language] + ")" : r[F.model];
  }
  function val(r, k) { return k === "unit" ? unitOf(r) : r[F[k]]; }
  function address(r) {
    return "#cell/" + [r[F.scenario], r[F.model], r[F.language], String(r[F.sample])]
      .map(encodeURIComponent).join("/");
  }
  function fmt(v) {
    if (v === null || v === undefined) { return "–"; }
    if (typeof v === "boolean") { return v ? "yes" : "no"; }
    if (typeof v === "number" && !Number.isInteger(v)) { return String(Number(v.toPrecision(6))); }
    return String(v);
  }
  function el(tag, text, attrs) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (attrs) { Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); }); }
    return e;
  }
  KEYS.forEach(function (k) {
    var sel = $("cv-f-" + k), seen = {};
    ROWS.forEach(function (r) {
      var v = val(r, k);
      if (v !== null && v !== undefined) { seen[v] = true; }
    });
    Object.keys(seen).sort().forEach(function (v) { sel.appendChild(el("option", v, { value: v })); });
    sel.addEventListener("change", function () {
      state.filters[k] = sel.value; state.page = 0; render(); writeHash();
    });
  });
  $("cv-f-scenario").addEventListener("input", function (ev) {
    state.scenario = ev.target.value.trim(); state.page = 0; render(); writeHash();
  });
  Array.prototype.forEach.call(document.querySelectorAll("#cv-table th"), function (th) {
    th.addEventListener("click", function () {
      var k = th.getAttribute("data-key");
      state.desc = state.sort === k ? !state.desc : false; state.sort = k; render();
    });
  });
  $("cv-prev").addEventListener("click", function () { state.page -= 1; render(); });
  $("cv-next").addEventListener("click", function () { state.page += 1; render(); });
  function matches(r) {
    for (var i = 0; i < KEYS.length; i++) {
      var want = state.filters[KEYS[i]];
      if (want && String(val(r, KEYS[i])) !== want) { return false; }
    }
    return !state.scenario || r[F.scenario].indexOf(state.scenario) >= 0;
  }
  function compare(a, b) {
    var x = val(a, state.sort), y = val(b, state.sort);
    if (x === y) { return 0; }
    if (x === null || x === undefined) { return 1; }
    if (y === null || y === undefined) { return -1; }
    return (x < y ? -1 : 1) * (state.desc ? -1 : 1);
  }
  function render() {
    var list = ROWS.filter(matches);
    if (state.sort) { list = list.slice().sort(compare); }
    var pages = Math.max(1, Math.ceil(list.length / PAGE));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    var body = document.querySelector("#cv-table tbody"), frag = document.createDocumentFragment();
    list.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (r) {
      var tr = el("tr");
      tr.setAttribute("data-cell", address(r).slice(1));
      SHOWN.forEach(function (k, i) {
        var td = el("td");
        if (i === 0) { td.appendChild(el("a", r[F.scenario], { href: address(r) })); }
        else { td.textContent = fmt(r[F[k]]); }
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    $("cv-count").textContent = list.length + " of " + ROWS.length + " cells";
    $("cv-page").textContent = "page " + (state.page + 1) + " of " + pages;
  }
  function writeHash() {
    var q = [];
    KEYS.forEach(function (k) {
      if (state.filters[k]) { q.push(encodeURIComponent(k) + "=" + encodeURIComponent(state.filters[k])); }
    });
    if (state.scenario) { q.push("scenario=" + encodeURIComponent(state.scenario)); }
    history.replaceState(null, "", "#cells" + (q.length ? "?" + q.join("&") : ""));
  }
  function load(src, key, store, cb) {
    if (store[key]) { cb(store[key]); return; }
    (waiting[src] = waiting[src] || []).push(cb);
    if (waiting[src].length > 1) { return; }
    var s = document.createElement("script");
    s.src = src;
    document.head.appendChild(s);
  }
  window.CV_CHUNK = function (n, data) {
    chunks[n] = data;
    var src = "explorer/chunk-" + String(n).padStart(4, "0") + ".js";
    (waiting[src] || []).forEach(function (cb) { cb(data); });
    waiting[src] = [];
  };
  window.CV_PROMPTS = function (data) {
    prompts = data;
    promptWait.forEach(function (cb) { cb(data); });
    promptWait = [];
  };
  function withPrompts(cb) {
    if (prompts) { cb(prompts); return; }
    promptWait.push(cb);
    if (promptWait.length === 1) {
      var s = document.createElement("script"); s.src = "explorer/prompts.js"; document.head.appendChild(s);
    }
  }
  function block(box, title, text, markLine) {
    box.appendChild(el("h3", title));
    var pre = el("pre");
    if (text === null || text === undefined || text === "") { pre.textContent = "(none)"; }
    else if (markLine) {
      String(text).split("\n").forEach(function (line, i) {
        var span = el(i + 1 === markLine ? "mark" : "span", line, { "class": "ln" });
        if (i + 1 === markLine) { span.id = "cv-extracted"; }
        pre.appendChild(span);
      });
    } else { pre.textContent = text; }
    box.appendChild(pre);
    return pre;
  }
  function turnView(box, t, heading) {
    if (heading) { box.appendChild(el("h3", heading)); }
    if (t.status_reason) { block(box, "Why the harness could not finish this cell", t.status_reason); }
    if (t.feedback) { block(box, "Execution feedback shown to the model", t.feedback); }
    var conv = t.scores && t.scores.conversions ? t.scores.conversions : [];
    if (conv.length) {
      // every conversion between the printed figure and the compared one (and one refused)
      box.appendChild(el("h3", "Conversions before the comparison"));
      var list = el("ul", null, heading ? { "class": "cv-conversions" } : { id: "cv-conversions", "class": "cv-conversions" });
      conv.forEach(function (c) { list.appendChild(el("li", c)); });
      box.appendChild(list);
    }
    // why it failed first: stderr, then the output with the line the estimate was read from
    block(box, "stderr", t.stderr);
    var line = t.extraction && t.extraction.line ? t.extraction.line : null;
    block(box, "stdout" + (line ? " (the marked line is where the estimate was read)" : ""), t.stdout, line);
    var ran = "Code that ran";
    if (t.blocks) {
      ran += " (fenced block " + (t.block_index + 1) + " of the answer, " + (t.several_blocks ?
        "the first of its " + t.blocks + " blocks in the requested language: the prompt asks for exactly one; only this one ran)" :
        "its only block in the requested language)");
    }
    var pre = block(box, ran, t.code || t.parse_error);
    if (t.several_blocks && !heading) { pre.previousSibling.id = "cv-blocks"; }
    block(box, "Response", t.response || t.response_error);
    if (t.fits && t.fits.length) {
      box.appendChild(el("h3", "Fit log (written by the script's own process: self-reported)"));
      var table = el("table"), head = el("tr");
      ["function", "term", "estimate", "std. error"].forEach(function (h) { head.appendChild(el("th", h)); });
      table.appendChild(head);
      t.fits.forEach(function (fit) {
        fit.terms.forEach(function (term) {
          var tr = el("tr");
          [fit["function"], term.term, fmt(term.estimate), fmt(term.std_error)].forEach(function (v) { tr.appendChild(el("td", v)); });
          table.appendChild(tr);
        });
      });
      box.appendChild(table);
    }
    if (t.judge) { block(box, "Judge", JSON.stringify(t.judge, null, 1)); }
  }
  function inferenceView(box, row, d) {
    // layer L2c: the reported SE beside the canonical one, with the variant and their ratio
    if (!d.inference) { return; }
    var s = d.last.scores || {}, read = s.extractor === "judge" ? d.last.judge : d.last.extraction;
    var ci = read && read.ci ? "[" + fmt(read.ci[0]) + ", " + fmt(read.ci[1]) + "]" : null;
    var ref = d.inference.reference;
    box.appendChild(el("h3", "Inference (layer L2c, beside L2b+)"));
    var table = el("table", null, { id: "cv-inference" }), hr = el("tr"), vr = el("tr");
    ["reported SE", "canonical SE (" + ref + ")", "ratio", "SE tier", "variant", "reported CI",
     "CI covers β", "significance agrees", "L2c"].forEach(function (h) { hr.appendChild(el("th", h)); });
    [row[F.reported_se], row[F.canonical_se], row[F.se_ratio], row[F.se_tier], row[F.se_variant],
     ci, s.ci_covers, s.significance_agrees, row[F.L2c]].forEach(function (v) { vr.appendChild(el("td", fmt(v))); });
    table.appendChild(hr); table.appendChild(vr); box.appendChild(table);
    var variants = Object.keys(d.inference.ses).sort().map(function (k) {
      return k + (k === ref ? " (reference) " : " ") + fmt(d.inference.ses[k]);
    });
    box.appendChild(el("p", "Canonical SE by variant: " + variants.join("; ") +
      (read && read.se_source ? ". The reported SE was read from: " + read.se_source : "") + ".", { "class": "note" }));
  }
  function showCell(parts) {
    var box = $("cv-cell");
    var row = ROWS.filter(function (r) {
      return r[F.scenario] === parts[0] && r[F.model] === parts[1] && r[F.language] === parts[2] &&
        String(r[F.sample]) === parts[3];
    })[0];
    box.hidden = false;
    box.replaceChildren();
    if (!row) { box.appendChild(el("p", "No such cell in this run.")); return; }
    var key = address(row).slice(1);
    var src = "explorer/chunk-" + String(row[F.chunk]).padStart(4, "0") + ".js";
    load(src, row[F.chunk], chunks, function (data) {
      var d = data[key];
      box.replaceChildren();
      box.setAttribute("data-cell", key);
      box.appendChild(el("h2", parts.join(" · ")));
      var table = el("table"), hr = el("tr"), vr = el("tr");
      ["status", "design", "estimate", "canonical", "rel. error", "L1", "L2a", "L2b", "L2b+", "turns"].forEach(function (h) { hr.appendChild(el("th", h)); });
      [row[F.status], row[F.family], row[F.estimate], row[F.canonical], row[F.rel_error], row[F.L1],
       row[F.L2a], row[F.L2b], row[F.L2b_plus], row[F.turns]].forEach(function (v) { vr.appendChild(el("td", fmt(v))); });
      table.appendChild(hr); table.appendChild(vr); box.appendChild(table);
      inferenceView(box, row, d);
      if (d.last.extraction) {
        box.appendChild(el("p", "Extraction: " + fmt(d.last.extraction.value) + " by rule " + d.last.extraction.rule, { "class": "note" }));
      }
      if (d.turns.length) {
        d.turns.forEach(function (t) { turnView(box, t, "Turn " + t.turn + " (" + t.status + ")"); });
      } else { turnView(box, d.last, null); }
      // the prompt is the same for every cell of a scenario and language: last, collapsed
      var fold = el("details", null, { id: "cv-prompt" });
      fold.appendChild(el("summary", "Prompt"));
      var promptPre = el("pre", "loading…");
      fold.appendChild(promptPre);
      box.appendChild(fold);
      withPrompts(function (all) {
        promptPre.textContent = (all[d.prompt] || []).map(function (m) { return "[" + m.role + "]\n" + m.content; }).join("\n\n");
      });
      box.scrollIntoView();
    });
  }
  function route() {
    if (location.hash.indexOf("#cell/") === 0) {
      showCell(location.hash.slice(6).split("/").map(decodeURIComponent));
      return;
    }
    if (location.hash.indexOf("#cells") === 0) {
      $("cv-cell").hidden = true;
      var q = location.hash.split("?")[1] || "";
      state.filters = {}; state.page = 0;
      q.split("&").forEach(function (pair) {
        if (!pair) { return; }
        var kv = pair.split("=");
        state.filters[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1] || "");
      });
      state.scenario = state.filters.scenario || "";
      delete state.filters.scenario;
      KEYS.forEach(function (k) { $("cv-f-" + k).value = state.filters[k] || ""; });
      $("cv-f-scenario").value = state.scenario;
      render();
      $("explorer").scrollIntoView();
    }
  }
  window.addEventListener("hashchange", route);
  render();
  route();
})();
"""

/* tokenforge token page: plain ES2020, no dependencies, no build step.
 *
 * Two data sources share the rendering code below:
 *  - the server (the JSON API of tokenforge.web.app), and
 *  - a static page written by `tokenforge explain --html`, which embeds
 *    a JSON script element (type application/json, id "tf-static") and fetches nothing.
 *
 * Safety: every string that comes from the text, a tokenizer or a file reaches
 * the document through textContent / createTextNode / setAttribute only.
 * Offsets from the API count code points; JavaScript strings count UTF-16 units.
 */
"use strict";

(() => {
  const MAX_COLUMNS = 4;
  const MIN_COLUMNS = 1;
  const MAX_SPANS = 200000; // tokens drawn per column; the counts stay exact
  // Tokens are drawn in blocks (CSS content-visibility: auto, so only the blocks on screen
  // are laid out). A block ends after a newline token once it holds BLOCK_MIN tokens (so
  // the cut falls where the text breaks its line anyway), or at BLOCK_MAX tokens.
  const BLOCK_MIN = 300;
  const BLOCK_MAX = 1500;
  const FIRST_DRAW = 600; // tokens drawn at once (what fills a column); the rest in slices
  const SLICE_MS = 25; // drawing time per slice before the page gets the main thread back
  const DEBOUNCE_MS = 150;
  const HASH_TEXT_LIMIT = 100000;
  const COLOURS = 5;
  const VIEWS = ["tokens", "numbers", "indent", "stability", "glitch", "compare"];
  const EXAMPLE = "Tokenizers split text into pieces: héllo wörld, 日本語のテキスト, Привет! 🎉\n" +
    "def add(a, b):\n    return a + b  # 12345 + 678.9\n";

  // ---------------------------------------------------------------- small helpers

  const $ = (id) => document.getElementById(id);
  const own = (obj, key) => obj != null && Object.prototype.hasOwnProperty.call(obj, key);

  /** An element with a class and text (as a text node), and children appended. */
  function el(tag, cls, text, children) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const child of children || []) if (child) node.appendChild(child);
    return node;
  }

  const SVG_NS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function fmt(x, digits = 2) {
    if (x === null || x === undefined || Number.isNaN(x)) return "–";
    return typeof x === "number" && !Number.isInteger(x) ? x.toFixed(digits) : String(x);
  }

  /** Invisible and reordering characters of a text slice made visible (as text, never markup). */
  function visible(s) {
    return s.replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, (c) => {
      if (c === "\n") return "\\n";
      if (c === "\t") return "\\t";
      if (c === "\r") return "\\r";
      return "\\u" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    });
  }

  /** table[i] = UTF-16 index of code point i of text (table[length] = text.length). */
  function codePointTable(text) {
    const table = [];
    for (let i = 0; i < text.length;) {
      table.push(i);
      i += text.codePointAt(i) > 0xffff ? 2 : 1;
    }
    table.push(text.length);
    return table;
  }

  function hexBytes(hex) {
    return (hex || "").replace(/(..)(?!$)/g, "$1 ");
  }

  function hasNewline(hex) {
    for (let k = 0; k + 1 < (hex || "").length; k += 2) if (hex[k] === "0" && hex[k + 1] === "a") return true;
    return false;
  }

  // ---------------------------------------------------------------- data sources

  let inflight = 0;
  let debounceTimer = null;
  const drawing = new Set(); // columns with tokens still to draw
  function updateBusy() {
    const busy = inflight > 0 || debounceTimer !== null || drawing.size > 0 || hashPending ? "1" : "0";
    if (document.body.dataset.busy !== busy) document.body.dataset.busy = busy;
  }

  /** POST body as JSON (the server takes nothing else); GET without a body. Throws with the server's message. */
  async function api(path, body) {
    inflight++;
    updateBusy();
    try {
      const opts = {};
      if (body !== undefined) {
        opts.method = "POST";
        opts.body = JSON.stringify(body);
        opts.headers = { "Content-Type": "application/json" };
      }
      let res;
      try {
        res = await fetch(path, opts);
      } catch (exc) {
        throw new Error(`cannot reach the server (${exc.message})`);
      }
      const raw = await res.text();
      let data = null;
      try {
        data = raw ? JSON.parse(raw) : null;
      } catch (_) {
        data = null;
      }
      if (!res.ok) {
        let msg = data && typeof data.error === "string" ? data.error : raw.slice(0, 300) || res.statusText;
        if (data && typeof data.special_token === "string") {
          msg += ' On this page: choose "Special tokens: match" or "as text" above the text.';
        }
        throw new Error(`${path} answered ${res.status}: ${msg}`);
      }
      if (data === null || typeof data !== "object") throw new Error(`${path}: the answer is not JSON`);
      return data;
    } finally {
      inflight--;
      updateBusy();
    }
  }

  function serverSource() {
    const tokenCache = new Map();
    return {
      live: true,
      tokenizers: () => api("/api/tokenizers"),
      encode: (name, text) => api("/api/encode", { tokenizer: name, text, ...specialPolicy() }),
      token(name, id) {
        const key = name + "\u0000" + id;
        if (!tokenCache.has(key)) {
          const p = api("/api/token", { tokenizer: name, id });
          p.catch(() => tokenCache.delete(key));
          tokenCache.set(key, p);
        }
        return tokenCache.get(key);
      },
      stability: (name, text) => api("/api/stability", { tokenizer: name, text, ...specialPolicy() }),
      numbers: (names, text) => api("/api/numbers", /\d/.test(text) ? { tokenizers: names, text } : { tokenizers: names }),
      indent: (names) => api("/api/indent", { tokenizers: names, max_spaces: 16 }),
      glitch: (name) => api("/api/glitch", { tokenizer: name, top: 30 }),
      compare: (body) => api("/api/compare", body),
    };
  }

  function staticSource(d) {
    const pick = (table, name) => (own(table, name) ? table[name] : null);
    const offered = (d.tokenizers || []).filter((t) => own(d.encode, t.name));
    return {
      live: false,
      tokenizers: async () => ({ tokenizers: offered, default: d.columns || [], limits: {} }),
      async encode(name) {
        const enc = pick(d.encode, name);
        if (!enc) throw new Error(`this page holds no tokens for ${name}`);
        return enc;
      },
      token: async (name, id) => pick(pick(d.token, name), String(id)),
      stability: async (name) => pick(d.stability, name),
    };
  }

  // ---------------------------------------------------------------- state

  const state = {
    source: null,
    text: "",
    specials: "refuse", // special-token strings in the text: "refuse" (the library's default), "match", "text"
    columns: [], // {name, enc, encText, stab, stabText, req, sreq, spans, job, marked, overlap, roving, el}
    view: "tokens",
    ids: false,
    tokenizers: [],
    info: new Map(),
    defaults: [],
    limits: {},
    pinned: false,
    shown: null, // {col, index}
    lit: [], // spans marked active / overlap
    detailReq: 0,
    viewReq: 0,
    glitch: new Map(),
  };
  const colOf = new WeakMap();

  /** The special-token fields of an encode request, as Tokenizer.encode takes them. */
  function specialPolicy() {
    if (state.specials === "match") return { allowed_special: "all" };
    if (state.specials === "text") return { disallowed_special: [] };
    return {};
  }
  const SPECIALS = ["refuse", "match", "text"];

  // ---------------------------------------------------------------- errors

  function showError(message) {
    const box = $("errors");
    box.hidden = false;
    const close = el("button", "dismiss", "Dismiss");
    close.type = "button";
    const item = el("div", "error-item", null, [el("span", "error-text", message), close]);
    close.addEventListener("click", () => {
      item.remove();
      if (!box.querySelector(".error-item")) box.hidden = true;
    });
    box.appendChild(item);
    while (box.querySelectorAll(".error-item").length > 5) box.querySelector(".error-item").remove();
  }

  function clearErrors() {
    const box = $("errors");
    box.replaceChildren();
    box.hidden = true;
  }

  // ---------------------------------------------------------------- URL state

  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    return {
      text: p.has("t") ? p.get("t") : null,
      columns: p.getAll("c"),
      view: p.get("v"),
      ids: p.get("ids") === "1",
      specials: SPECIALS.includes(p.get("sp")) ? p.get("sp") : "refuse",
    };
  }

  /** Puts the state in the URL, in a later task: with 100 KB of text this takes tens of
   * milliseconds, better spent while the server answers than before the requests go out. */
  let hashPending = false;
  function writeHash() {
    if (!state.source || !state.source.live || hashPending) return;
    hashPending = true;
    updateBusy();
    nextTask(() => {
      hashPending = false;
      writeHashNow();
      updateBusy();
    });
  }

  function writeHashNow() {
    const p = new URLSearchParams();
    if (state.text.length <= HASH_TEXT_LIMIT) p.set("t", state.text);
    for (const col of state.columns) p.append("c", col.name);
    if (state.view !== "tokens") p.set("v", state.view);
    if (state.ids) p.set("ids", "1");
    if (state.specials !== "refuse") p.set("sp", state.specials);
    history.replaceState(null, "", "#" + p.toString());
  }

  // ---------------------------------------------------------------- columns

  function buildColumn(col) {
    const root = el("section", "column");
    root.setAttribute("aria-busy", "false");
    const select = el("select", "tok-select");
    select.id = "col-select-" + Math.random().toString(36).slice(2, 9);
    const label = el("label", "sr-only", "Tokenizer");
    label.setAttribute("for", select.id);
    for (const t of state.tokenizers) {
      const opt = el("option", null, t.name);
      opt.value = t.name;
      select.appendChild(opt);
    }
    select.value = col.name;
    const remove = el("button", "remove", "×");
    remove.type = "button";
    remove.setAttribute("aria-label", "Remove this column");
    remove.title = "Remove this column";
    const meta = el("div", "meta");
    const stats = el("dl", "stats");
    const stat = {};
    for (const [key, name] of [["tokens", "Tokens"], ["chars", "Characters"], ["bytes", "Bytes"], ["bpt", "Bytes/token"]]) {
      stat[key] = el("dd", null, "–");
      stat[key].dataset.stat = key;
      stats.append(el("div", "stat", null, [el("dt", null, name), stat[key]]));
    }
    const note = el("div", "stab-note");
    note.hidden = true;
    const tokens = el("div", "tokens");
    tokens.setAttribute("role", "group");
    tokens.setAttribute("aria-label", "Tokens (arrow keys move between them)");
    root.append(el("div", "col-head", null, [label, select, remove]), meta, stats, note, tokens);

    select.addEventListener("change", () => {
      col.name = select.value;
      col.enc = col.stab = null;
      updateColumnMeta(col);
      encodeColumn(col);
      writeHash();
      refreshView("columns");
    });
    remove.addEventListener("click", () => removeColumn(col));
    col.el = { root, select, remove, meta, stat, note, tokens };
    colOf.set(root, col);
    updateColumnMeta(col);
    return root;
  }

  function updateColumnMeta(col) {
    const info = state.info.get(col.name);
    col.el.root.dataset.tokenizer = col.name;
    const parts = [];
    if (info) {
      parts.push(info.family);
      if (info.vocab_size) parts.push(`${info.vocab_size.toLocaleString("en")} tokens in vocab`);
      if (info.source) parts.push(info.source);
    }
    col.el.meta.textContent = parts.join(" · ");
  }

  function newColumn(name) {
    const col = {
      name, enc: null, encText: "", stab: null, stabText: null, req: 0, sreq: 0,
      spans: [], job: null, marked: new Set(), overlap: null, roving: 0, el: null,
    };
    state.columns.push(col);
    $("columns").appendChild(buildColumn(col));
    updateColumnButtons();
    return col;
  }

  function removeColumn(col) {
    if (state.columns.length <= MIN_COLUMNS) return;
    state.columns = state.columns.filter((c) => c !== col);
    stopDrawing(col);
    col.el.root.remove();
    if (state.shown && state.shown.col === col) clearDetail();
    updateColumnButtons();
    writeHash();
    refreshView("columns");
  }

  function addColumn() {
    if (state.columns.length >= MAX_COLUMNS || !state.tokenizers.length) return;
    const used = new Set(state.columns.map((c) => c.name));
    const next = state.tokenizers.find((t) => !used.has(t.name)) || state.tokenizers[0];
    const col = newColumn(next.name);
    encodeColumn(col);
    writeHash();
    refreshView("columns");
  }

  function updateColumnButtons() {
    $("add-column").disabled = state.columns.length >= MAX_COLUMNS;
    for (const col of state.columns) col.el.remove.disabled = state.columns.length <= MIN_COLUMNS;
    $("columns").dataset.count = String(state.columns.length);
  }

  async function encodeColumn(col) {
    const text = state.text;
    const my = ++col.req;
    col.el.root.setAttribute("aria-busy", "true");
    try {
      const enc = await state.source.encode(col.name, text);
      if (my !== col.req || !state.columns.includes(col)) return; // a newer request superseded this one
      col.enc = enc;
      col.encText = text;
      col.table = codePointTable(text);
      if (state.shown && state.shown.col === col) clearDetail();
      renderColumn(col);
    } catch (exc) {
      if (my === col.req) showError(`${col.name}: ${exc.message}`);
    } finally {
      if (my === col.req) col.el.root.setAttribute("aria-busy", "false");
    }
  }

  const usesStability = () => state.view === "stability" || !state.source.live;

  async function stabilityColumn(col) {
    const text = state.text;
    const my = ++col.sreq;
    try {
      const stab = await state.source.stability(col.name, text);
      if (my !== col.sreq || !state.columns.includes(col)) return;
      col.stab = stab;
      col.stabText = text;
      applyMarks(col);
      renderStabilityPanel();
    } catch (exc) {
      if (my === col.sreq) showError(`${col.name}: ${exc.message}`);
    }
  }

  /** Indices of the trailing tokens a continuation could change (empty unless known for this
   * text); the stability answer gives them as indices into the encode answer's tokens. */
  function unstableSet(col) {
    if (!usesStability() || !col.stab || !col.enc || col.stabText !== col.encText) return new Set();
    return new Set(col.stab.unstable || []);
  }

  /** The counts at once; the tokens as blocks of spans: the first ones (what fills the
   * column) now, the others in slices of SLICE_MS (drawSlice), dropped if the column is
   * drawn again. A span carries its class, data-id and text only (its index follows from
   * its block's), and only one token per column is in the tab order (arrow keys move it). */
  function renderColumn(col) {
    const enc = col.enc;
    const st = col.el.stat;
    stopDrawing(col);
    col.spans = [];
    if (!enc) {
      for (const k of Object.keys(st)) st[k].textContent = "–";
      col.el.tokens.replaceChildren();
      applyMarks(col);
      return;
    }
    st.tokens.textContent = String(enc.count);
    st.chars.textContent = String(enc.chars);
    st.bytes.textContent = String(enc.bytes);
    st.bpt.textContent = fmt(enc.bytes_per_token);

    const n = Math.min(enc.count, MAX_SPANS);
    col.spans = new Array(n);
    if (col.roving >= n) col.roving = 0;
    col.marked = unstableSet(col);
    col.overlap = null;
    col.job = { enc, n, next: 0, ids: state.ids };
    col.el.tokens.replaceChildren();
    const frag = document.createDocumentFragment();
    while (col.job.next < n && col.job.next < FIRST_DRAW) frag.appendChild(drawBlock(col, col.job));
    col.el.tokens.appendChild(frag);
    if (col.job.next < n) {
      drawing.add(col);
      scheduleDrawing();
    } else {
      finishDrawing(col);
    }
    applyMarks(col);
  }

  /** The class of a token span by colour + 8 * (special) + 16 * (partial) + 32 * (empty). */
  const TOKEN_CLASS = Array.from({ length: 64 }, (_, k) => "tok c" + (k & 7) + (k & 8 ? " special" : "") +
    (k & 16 ? " partial" : "") + (k & 32 ? " empty" : ""));

  /** One block of spans from job.next on (job.next moves past it). */
  function drawBlock(col, job) {
    const { enc, n } = job;
    const ids = enc.ids, tokens = enc.tokens, hex = enc.hex, special = enc.special, partial = enc.partial;
    const spans = col.spans, marked = col.marked, overlap = col.overlap;
    const shown = state.shown && state.shown.col === col ? state.shown.index : -1;
    const block = document.createElement("span");
    block.className = "tok-block";
    const first = job.next;
    block.tfFirst = first; // the index of its first token (see tokenTarget)
    let i = first;
    while (i < n) {
      const span = document.createElement("span");
      const text = job.ids ? String(ids[i]) : tokens[i];
      let cls = TOKEN_CLASS[(i % COLOURS) + (special[i] ? 8 : 0) + (partial[i] ? 16 : 0) + (text === "" ? 32 : 0)];
      if (marked.size && marked.has(i)) cls += " unstable";
      if (i === shown || overlap && overlap.has(i)) {
        cls += i === shown ? " active" : " overlap";
        state.lit.push(span);
      }
      span.className = cls;
      span.setAttribute("data-id", ids[i]);
      span.textContent = text === "" ? "∅" : text;
      if (i === col.roving) span.tabIndex = 0;
      block.appendChild(span);
      spans[i] = span;
      i++;
      if (hasNewline(hex[i - 1])) {
        block.appendChild(document.createElement("br"));
        if (i - first >= BLOCK_MIN) break;
      } else if (i - first >= BLOCK_MAX) break;
    }
    job.next = i;
    return block;
  }

  function finishDrawing(col) {
    const job = col.job;
    if (job && job.enc.count > job.n) col.el.tokens.appendChild(el("p", "hint", `… ${job.enc.count - job.n} more tokens not drawn`));
    col.job = null;
    drawing.delete(col);
    updateBusy();
  }

  function stopDrawing(col) {
    col.job = null;
    if (drawing.delete(col)) updateBusy();
  }

  /** A task that runs once the browser has nothing more urgent to do (answers that arrived,
   * input, frames): scheduler.postTask at background priority where there is one, else a
   * message (no 4 ms clamp as with nested setTimeouts). */
  const nextTask = (() => {
    if (typeof scheduler !== "undefined" && scheduler && typeof scheduler.postTask === "function") {
      return (fn) => scheduler.postTask(fn, { priority: "background" });
    }
    if (typeof MessageChannel !== "function") return (fn) => setTimeout(fn, 0);
    const channel = new MessageChannel();
    const queue = [];
    channel.port1.onmessage = () => { const fn = queue.shift(); if (fn) fn(); };
    return (fn) => {
      queue.push(fn);
      channel.port2.postMessage(0);
    };
  })();

  let drawScheduled = false;
  function scheduleDrawing() {
    if (drawScheduled || !drawing.size) return;
    drawScheduled = true;
    nextTask(drawSlice);
  }

  /** Draws blocks for SLICE_MS, the columns in turn, then lets the page run. */
  function drawSlice() {
    drawScheduled = false;
    const t0 = performance.now();
    for (const col of drawing) {
      const job = col.job;
      if (!job || !state.columns.includes(col)) {
        drawing.delete(col);
        continue;
      }
      const frag = document.createDocumentFragment();
      while (job.next < job.n && performance.now() - t0 < SLICE_MS) frag.appendChild(drawBlock(col, job));
      col.el.tokens.appendChild(frag);
      if (job.next >= job.n) finishDrawing(col);
      if (performance.now() - t0 >= SLICE_MS) break;
    }
    updateBusy();
    scheduleDrawing();
  }

  /** The stability marks on the drawn spans (no redraw: a focused token keeps its focus);
   * spans drawn later take them from col.marked. */
  function applyMarks(col) {
    const marked = col.enc ? unstableSet(col) : new Set();
    for (const i of col.marked) if (!marked.has(i) && col.spans[i]) col.spans[i].classList.remove("unstable");
    for (const i of marked) if (col.spans[i]) col.spans[i].classList.add("unstable");
    col.marked = marked;
    if (!col.enc) {
      col.el.note.hidden = true;
      return;
    }
    const note = col.el.note;
    note.hidden = !(usesStability() && col.stab && col.stabText === col.encText);
    if (!note.hidden) {
      const n = marked.size;
      note.replaceChildren(
        el("span", null, `${n} trailing token${n === 1 ? "" : "s"} unstable; healing prefix `),
        el("code", null, col.stab.prefix || "∅"));
    }
  }

  function renderAllColumns() {
    for (const col of state.columns) renderColumn(col);
  }

  // ---------------------------------------------------------------- detail panel and highlight

  /** Takes the active / overlap marks off the spans that have them. */
  function unlight() {
    for (const node of state.lit) node.classList.remove("active", "overlap");
    state.lit = [];
    for (const col of state.columns) col.overlap = null;
  }

  function clearDetail() {
    state.shown = null;
    state.pinned = false;
    $("detail-body").hidden = true;
    $("detail-empty").hidden = false;
    unlight();
    setBackdrop(null);
  }

  function showDetail(col, index) {
    const enc = col.enc;
    if (!enc || index < 0 || index >= enc.count) return;
    state.shown = { col, index };
    unlight();
    if (col.spans[index]) {
      col.spans[index].classList.add("active");
      state.lit.push(col.spans[index]);
    }

    const id = enc.ids[index];
    const [start, end] = enc.offsets[index];
    const table = col.table || codePointTable(col.encText);
    const a = table[Math.min(start, table.length - 1)];
    const b = table[Math.min(end, table.length - 1)];
    const covered = col.encText.slice(a, b);

    $("detail-empty").hidden = true;
    $("detail-body").hidden = false;
    $("d-tokenizer").textContent = col.name;
    $("d-index").textContent = `${index} of ${enc.count}`;
    $("d-id").textContent = String(id);
    $("d-token").textContent = enc.tokens[index];
    const flags = [];
    if (enc.special[index]) flags.push("special");
    if (enc.partial[index]) flags.push("part of a character");
    if (unstableSet(col).has(index)) flags.push("unstable");
    $("d-flags").textContent = flags.length ? `(${flags.join(", ")})` : "";
    $("d-hex").textContent = hexBytes(enc.hex[index]) || "(no bytes)";
    $("d-text").textContent = covered === "" ? "∅" : visible(covered);
    $("d-range").textContent = `code points ${start}–${end}`;
    $("d-vocab").textContent = "…";
    $("d-rank").textContent = "…";
    $("d-tree-wrap").hidden = true;

    // tokens of the other columns covering the same text (spans drawn later take col.overlap)
    for (const other of state.columns) {
      if (other === col || !other.enc || other.encText !== col.encText) continue;
      const hits = new Set();
      other.enc.offsets.forEach(([s, e], i) => {
        const hit = start === end ? s <= start && start <= e && (s < e || s === start) : s < end && start < e;
        if (!hit) return;
        hits.add(i);
        if (other.spans[i]) {
          other.spans[i].classList.add("overlap");
          state.lit.push(other.spans[i]);
        }
      });
      other.overlap = hits;
    }
    setBackdrop(col.encText === $("text").value ? [a, b] : null);

    const my = ++state.detailReq;
    Promise.resolve(state.source.token(col.name, id)).then((info) => {
      if (my !== state.detailReq) return;
      renderTokenInfo(info);
    }).catch((exc) => {
      if (my !== state.detailReq) return;
      $("d-vocab").textContent = "–";
      $("d-rank").textContent = "–";
      showError(`${col.name}, token ${id}: ${exc.message}`);
    });
  }

  function renderTokenInfo(info) {
    if (!info) {
      $("d-vocab").textContent = "–";
      $("d-rank").textContent = "–";
      return;
    }
    $("d-vocab").textContent = info.vocab === null || info.vocab === undefined ? "–" : visible(String(info.vocab));
    let rank = info.rank === null || info.rank === undefined ? "–" : String(info.rank);
    if (info.reached_by_merges === false) rank += " (not reached by the merges alone)";
    $("d-rank").textContent = rank;
    const wrap = $("d-tree-wrap");
    if (Array.isArray(info.tree)) {
      $("d-tree").replaceChildren(treeList(info.tree));
      wrap.hidden = false;
    } else {
      wrap.hidden = true;
    }
  }

  /** A merge tree ([{token, hex, rank, children}]) as nested lists. */
  function treeList(nodes) {
    const ul = el("ul");
    for (const node of nodes) {
      const label = node.rank === null || node.rank === undefined ? "byte " + node.hex : "rank " + node.rank;
      const li = el("li", null, null, [el("code", "node", node.token), el("span", "rank", label)]);
      if (node.children && node.children.length) li.appendChild(treeList(node.children));
      ul.appendChild(li);
    }
    return ul;
  }

  /* The mirror behind the textarea (its text is transparent) only places the mark of the
   * covered range, so it holds the text only while a range is shown: typing does not lay
   * out a second copy of the text. The text is one node, rewritten only when the text
   * changed, and the range is painted with the CSS Custom Highlight API (no change to the
   * DOM, so hovering does not lay the whole text out again); a zero-width range is a
   * positioned caret. Browsers without the API get the range in a <mark> instead. */
  const HIGHLIGHTS = typeof CSS !== "undefined" && CSS.highlights && typeof Highlight === "function";

  /** The mirror's text node (the caret pin, then the text), holding the text if `fill`, else
   * emptied if it holds an old text. */
  function backdropText(fill) {
    const back = $("backdrop");
    let node = back.lastChild;
    if (!node || node.nodeType !== Node.TEXT_NODE || !back.firstChild.classList) {
      node = document.createTextNode("");
      back.replaceChildren(el("span", "caret-pin"), node); // shown by a class: no new layout of the text
    }
    const want = $("text").value + "\n";
    if (fill && node.data !== want) node.data = want;
    else if (!fill && node.data !== "" && node.data !== want) node.data = "";
    return node;
  }

  /** Scrolls the textarea so that the box (top, height in the mirror's content) is in view. */
  function revealInText(top, height) {
    const ta = $("text");
    if (top < ta.scrollTop || top + height > ta.scrollTop + ta.clientHeight) {
      ta.scrollTop = Math.max(0, top - ta.clientHeight / 3);
    }
  }

  /** The mirror behind the textarea: the range [a, b) (UTF-16) of the text marked, or nothing. */
  function setBackdrop(range) {
    const back = $("backdrop");
    const ta = $("text");
    if (!range) {
      if (HIGHLIGHTS) {
        CSS.highlights.delete("tf-cover");
        backdropText(false).previousSibling.classList.remove("on");
      } else if (back.firstChild) {
        back.replaceChildren();
      }
      return;
    }
    const [a, b] = range;
    if (HIGHLIGHTS) {
      const node = backdropText(true);
      const pin = node.previousSibling;
      back.scrollTop = ta.scrollTop;
      const r = document.createRange();
      r.setStart(node, Math.min(a, node.length));
      r.setEnd(node, Math.min(b, node.length));
      if (b > a) CSS.highlights.set("tf-cover", new Highlight(r));
      else CSS.highlights.delete("tf-cover");
      const box = r.getBoundingClientRect();
      const outer = back.getBoundingClientRect();
      const top = box.top - outer.top - back.clientTop + back.scrollTop;
      if (b <= a) {
        pin.style.top = top + "px";
        pin.style.left = (box.left - outer.left - back.clientLeft + back.scrollLeft) + "px";
        pin.style.height = box.height + "px";
      }
      pin.classList.toggle("on", b <= a);
      revealInText(top, box.height);
    } else {
      const text = ta.value;
      const mark = el("mark", b > a ? null : "caret", text.slice(a, b));
      back.replaceChildren(document.createTextNode(text.slice(0, a)), mark, document.createTextNode(text.slice(b) + "\n"));
      revealInText(mark.offsetTop, mark.offsetHeight);
    }
    back.scrollTop = ta.scrollTop;
  }

  /** The column and index of the token span an event is about (or null). The index is the
   * block's first index plus the token spans before this one in the block (at most BLOCK_MAX). */
  function tokenTarget(event) {
    const span = event.target.closest && event.target.closest(".tokens .tok");
    const block = span && span.parentNode;
    if (!block || block.tfFirst === undefined) return null;
    let index = block.tfFirst;
    for (let node = span.previousElementSibling; node; node = node.previousElementSibling) if (node.tagName !== "BR") index++;
    const col = colOf.get(block.closest(".column"));
    return col && col.spans[index] === span ? { col, span, index } : null;
  }

  /** Roving tabindex: the column's one token in the tab order becomes this one, focused. */
  function focusToken(col, index) {
    const span = col.spans[index];
    if (!span) return;
    const old = col.spans[col.roving];
    if (old && old !== span) old.removeAttribute("tabindex");
    col.roving = index;
    span.tabIndex = 0;
    span.focus();
  }

  function wireTokens() {
    const box = $("columns");
    box.addEventListener("mouseover", (e) => {
      const t = tokenTarget(e);
      if (t && !state.pinned) showDetail(t.col, t.index);
    });
    box.addEventListener("focusin", (e) => {
      const t = tokenTarget(e);
      if (!t) return;
      state.pinned = true;
      showDetail(t.col, t.index);
    });
    box.addEventListener("focusout", (e) => {
      if (tokenTarget(e)) state.pinned = false;
    });
    box.addEventListener("click", (e) => {
      const t = tokenTarget(e);
      if (!t) return;
      if (document.activeElement !== t.span) focusToken(t.col, t.index); // focusin shows it
      else showDetail(t.col, t.index);
    });
    box.addEventListener("keydown", (e) => {
      const t = tokenTarget(e);
      if (!t) return;
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        showDetail(t.col, t.index);
      } else if (e.key === "ArrowRight" || e.key === "ArrowLeft" || e.key === "Home" || e.key === "End") {
        const last = t.col.spans.length - 1;
        const next = { ArrowRight: t.index + 1, ArrowLeft: t.index - 1, Home: 0, End: last }[e.key];
        if (next >= 0 && next <= last && t.col.spans[next]) {
          e.preventDefault();
          focusToken(t.col, next);
        }
      } else if (e.key === "Escape") {
        t.span.blur();
        clearDetail();
      }
    });
  }

  // ---------------------------------------------------------------- views

  function setView(view) {
    if (!VIEWS.includes(view)) view = "tokens";
    const tab = document.querySelector(`.tabs [data-view="${view}"]`);
    if (!tab || tab.hidden) view = "tokens";
    const wasStab = usesStability();
    state.view = view;
    for (const b of document.querySelectorAll(".tabs [data-view]")) {
      const on = b.dataset.view === view;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
    }
    for (const v of VIEWS) $("view-" + v).hidden = v !== view;
    if (wasStab !== usesStability()) for (const col of state.columns) applyMarks(col);
    writeHash();
    refreshView("view");
  }

  const viewNames = () => [...new Set(state.columns.map((c) => c.name))];

  /** Loads what the active view shows. why: "text" (the text changed), "columns" or "view". */
  function refreshView(why) {
    const v = state.view;
    if (!state.columns.length || !state.source.live && v !== "stability") return;
    if (v === "numbers") loadInto("numbers-out", () => state.source.numbers(viewNames(), state.text), renderNumbers);
    else if (v === "indent" && why !== "text") loadInto("indent-out", () => state.source.indent(viewNames()), renderIndent);
    else if (v === "stability") {
      // a text change asks for stability with its encode requests (refreshText)
      if (why !== "text") for (const col of state.columns) if (!col.stab || col.stabText !== state.text) stabilityColumn(col);
      renderStabilityPanel();
    } else if (v === "glitch" && why !== "text") loadGlitch();
    else if (v === "compare" && why !== "text" && $("files").files.length) runCompare();
  }

  async function loadInto(id, fetcher, render) {
    const my = ++state.viewReq;
    const out = $(id);
    out.setAttribute("aria-busy", "true");
    try {
      const data = await fetcher();
      if (my === state.viewReq) out.replaceChildren(render(data));
    } catch (exc) {
      if (my === state.viewReq) showError(exc.message);
    } finally {
      if (my === state.viewReq) out.setAttribute("aria-busy", "false");
    }
  }

  /** Token strings as small coloured chips (not focusable: views only show them). */
  function chips(tokens) {
    const box = el("span", "chips");
    tokens.forEach((t, i) => box.appendChild(el("span", "tok small c" + (i % COLOURS), t === "" ? "∅" : t)));
    return box;
  }

  function table(head, rows) {
    const t = el("table", "data");
    t.appendChild(el("thead", null, null, [el("tr", null, null, head.map((h) => el("th", null, h)))]));
    const body = el("tbody");
    for (const row of rows) {
      body.appendChild(el("tr", null, null, row.map((cell) => (cell instanceof Node ? el("td", null, null, [cell]) : el("td", null, cell)))));
    }
    t.appendChild(body);
    return el("div", "table-wrap", null, [t]);
  }

  function renderNumbers(data) {
    const frag = document.createDocumentFragment();
    frag.appendChild(el("p", null, null, [el("span", "hint", "Text: "), el("code", null, visible(data.text))]));
    frag.appendChild(table(["Tokenizer", "Pieces", "Tokens", "Token strings"], data.rows.map((r) => [
      r.encoding, String(r.pieces.length), String(r.tokens.length), chips(r.tokens),
    ])));
    return frag;
  }

  function renderIndent(data) {
    const rows = [];
    for (let n = 0; n <= data.max_spaces; n++) {
      rows.push([String(n), ...data.rows.map((r) => {
        const cell = el("span", null, "+" + r.cost[n]);
        if (r.line_tokens && r.line_tokens[n]) cell.setAttribute("title", r.line_tokens[n].join(" · "));
        return cell;
      })]);
    }
    return table(["Spaces", ...data.rows.map((r) => r.encoding)], rows);
  }

  function renderStabilityPanel() {
    const out = $("stability-out");
    const rows = state.columns.filter((c) => c.stab).map((c) => [
      c.name, String(c.stab.count), String(c.stab.stable), String(c.stab.count - c.stab.stable),
      el("code", null, c.stab.prefix || "∅"), hexBytes(c.stab.prefix_hex) || "–", c.stab.satisfiable ? "yes" : "no",
    ]);
    out.replaceChildren(table(["Tokenizer", "Tokens", "Stable", "Unstable", "Healing prefix", "Prefix bytes", "Satisfiable"], rows));
  }

  async function loadGlitch() {
    const my = ++state.viewReq;
    const names = viewNames();
    try {
      await Promise.all(names.map(async (name) => {
        if (!state.glitch.has(name)) state.glitch.set(name, await state.source.glitch(name));
      }));
    } catch (exc) {
      if (my === state.viewReq) showError(exc.message);
    }
    if (my !== state.viewReq) return;
    const frag = document.createDocumentFragment();
    for (const name of names) {
      const g = state.glitch.get(name);
      if (!g) continue;
      const summary = `${g.never_produced} of ${g.vocab_size} tokens never produced, ${g.rarely_produced} rarely (≤ ${g.rare_max}) in ${g.total_tokens} tokens of corpus`;
      frag.appendChild(el("div", "glitch-col", null, [
        el("h3", null, name), el("p", "hint", summary),
        table(["Id", "Token", "Count", "Expected", "log p"], g.candidates.map((c) => [
          String(c.id), el("code", null, c.token), String(c.count), fmt(c.expected, 1), fmt(c.log_p, 1),
        ])),
      ]));
    }
    $("glitch-out").replaceChildren(frag);
  }

  // ---------------------------------------------------------------- compare files

  function checkFiles() {
    const files = [...$("files").files];
    const total = files.reduce((s, f) => s + f.size, 0);
    const lim = state.limits;
    $("files-note").textContent = files.length ? `${files.length} file${files.length === 1 ? "" : "s"}, ${total.toLocaleString("en")} bytes` : "";
    if (lim.max_files && files.length > lim.max_files) return `at most ${lim.max_files} files at once (${files.length} chosen)`;
    if (lim.max_upload_bytes && total > lim.max_upload_bytes) {
      return `the files hold ${total.toLocaleString("en")} bytes; the limit is ${lim.max_upload_bytes.toLocaleString("en")}`;
    }
    return files.length ? null : "choose one or more text files first";
  }

  async function runCompare() {
    const problem = checkFiles();
    if (problem) {
      showError("Compare files: " + problem);
      return;
    }
    const files = [...$("files").files];
    await loadInto("compare-out", async () => {
      const body = { tokenizers: viewNames(), files: await Promise.all(files.map(async (f) => ({ name: f.name, base64: await base64Of(f) }))) };
      return state.source.compare(body);
    }, renderCompare);
  }

  /** A file's bytes as base64 (the server reads them as exact UTF-8 and counts them). */
  function base64Of(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
      reader.onerror = () => reject(new Error(`cannot read ${file.name}: ${reader.error && reader.error.message}`));
      reader.readAsDataURL(file);
    });
  }

  function renderCompare(data) {
    const frag = document.createDocumentFragment();
    frag.appendChild(table(["File", "Tokenizer", "Tokens", "Bytes", "Characters", "Bytes/token", "Chars/token", "Tokens/word"],
      data.rows.map((r) => [
        visible(r.text), r.tokenizer, String(r.tokens), String(r.bytes), String(r.chars),
        r.tokens ? (r.bytes / r.tokens).toFixed(2) : "–", r.tokens ? (r.chars / r.tokens).toFixed(2) : "–", fmt(r.tokens_per_word),
      ])));
    frag.appendChild(barChart(data));
    return frag;
  }

  /** Bytes/token per file × tokenizer as horizontal bars (inline SVG built with createElementNS). */
  function barChart(data) {
    const rows = data.rows.filter((r) => r.tokens);
    const max = Math.max(1, ...rows.map((r) => r.bytes / r.tokens));
    const labelW = 260, barW = 360, rowH = 18, gap = 10;
    const height = rows.length * rowH + data.texts.length * gap + 28;
    const root = svg("svg", { class: "chart", width: labelW + barW + 60, height, role: "img",
      viewBox: `0 0 ${labelW + barW + 60} ${height}` });
    root.appendChild(svg("title", {}, "Bytes per token, per file and tokenizer"));
    let y = 4;
    for (const file of data.texts) {
      root.appendChild(svg("text", { x: 0, y: y + 12, class: "chart-file" }, visible(file)));
      y += rowH;
      for (const r of rows.filter((row) => row.text === file)) {
        const k = data.tokenizers.indexOf(r.tokenizer);
        const v = r.bytes / r.tokens;
        const w = Math.max(1, (v / max) * barW);
        root.appendChild(svg("text", { x: 12, y: y + 12, class: "chart-label" }, r.tokenizer));
        root.appendChild(svg("rect", { x: labelW, y: y + 2, width: w.toFixed(1), height: rowH - 4, class: "bar bar-" + (k % COLOURS) }));
        root.appendChild(svg("text", { x: labelW + w + 4, y: y + 12, class: "chart-value" }, v.toFixed(2)));
        y += rowH;
      }
      y += gap;
    }
    return el("figure", "chart-wrap", null, [root, el("figcaption", "hint", "Bytes per token (longer is more compact)")]);
  }

  // ---------------------------------------------------------------- text input

  function onInput() {
    clearTimeout(debounceTimer);
    debounceTimer = setTimeout(() => {
      debounceTimer = null;
      refreshText();
      updateBusy();
    }, DEBOUNCE_MS);
    updateBusy();
    setBackdrop(null);
  }

  function refreshText() {
    const text = $("text").value;
    const lim = state.limits.max_text_chars;
    if (lim && text.length > lim) {
      showError(`the text has ${text.length.toLocaleString("en")} characters; the server takes at most ${lim.toLocaleString("en")}`);
      return;
    }
    clearErrors();
    state.text = text;
    writeHash();
    for (const col of state.columns) encodeColumn(col);
    if (state.view === "stability") for (const col of state.columns) stabilityColumn(col);
    refreshView("text");
  }

  // ---------------------------------------------------------------- start

  function readStatic() {
    const node = document.getElementById("tf-static");
    if (!node || node.type !== "application/json") return null;
    try {
      const data = JSON.parse(node.textContent);
      return data && typeof data === "object" ? data : null;
    } catch (exc) {
      showError(`the page's embedded data is not JSON: ${exc.message}`);
      return null;
    }
  }

  async function start() {
    updateBusy();
    const data = readStatic();
    state.source = data ? staticSource(data) : serverSource();
    const live = state.source.live;
    const ta = $("text");
    const hash = live ? readHash() : { text: null, columns: [], view: null, ids: false, specials: "refuse" };

    let list;
    try {
      list = await state.source.tokenizers();
    } catch (exc) {
      showError(exc.message);
      return;
    }
    state.tokenizers = list.tokenizers || [];
    for (const t of state.tokenizers) state.info.set(t.name, t);
    state.limits = list.limits || {};
    const known = (names) => names.filter((n) => state.info.has(n)).slice(0, MAX_COLUMNS);
    let names = known(hash.columns);
    if (!names.length) names = known(list.default || []);
    if (!names.length && state.tokenizers.length) names = [state.tokenizers[0].name];

    if (live) {
      ta.value = hash.text !== null ? hash.text : EXAMPLE;
    } else {
      ta.value = typeof data.text === "string" ? data.text : "";
      ta.readOnly = true;
      document.body.classList.add("static");
      $("mode-note").hidden = false;
      for (const b of document.querySelectorAll(".tabs [data-server]")) b.hidden = true;
      $("add-column").hidden = true;
    }
    state.text = ta.value;
    state.ids = hash.ids;
    $("show-ids").checked = state.ids;
    state.specials = hash.specials;
    $("specials").value = state.specials;
    if (!live) $("specials-wrap").hidden = true;
    setBackdrop(null);

    for (const name of names) newColumn(name);
    if (!live) for (const col of state.columns) col.el.select.disabled = true;

    ta.addEventListener("input", onInput);
    ta.addEventListener("scroll", () => { $("backdrop").scrollTop = ta.scrollTop; });
    $("show-ids").addEventListener("change", (e) => {
      state.ids = e.target.checked;
      renderAllColumns();
      writeHash();
    });
    $("specials").addEventListener("change", (e) => {
      state.specials = SPECIALS.includes(e.target.value) ? e.target.value : "refuse";
      writeHash();
      refreshText();
    });
    $("add-column").addEventListener("click", addColumn);
    for (const b of document.querySelectorAll(".tabs [data-view]")) b.addEventListener("click", () => setView(b.dataset.view));
    $("tabs").addEventListener("keydown", (e) => {
      if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
      const tabs = [...document.querySelectorAll(".tabs [data-view]")].filter((b) => !b.hidden);
      const i = tabs.findIndex((b) => b.dataset.view === state.view);
      const next = tabs[(i + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
      setView(next.dataset.view);
      next.focus();
    });
    $("files").addEventListener("change", () => {
      const problem = checkFiles();
      if (problem) showError("Compare files: " + problem);
      else runCompare();
    });
    $("compare-run").addEventListener("click", runCompare);
    if (live) window.addEventListener("hashchange", () => location.reload());
    wireTokens();

    await Promise.all(state.columns.map((col) => encodeColumn(col)));
    setView(hash.view || "tokens");
    if (!live) for (const col of state.columns) stabilityColumn(col);
    document.body.dataset.ready = "1";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

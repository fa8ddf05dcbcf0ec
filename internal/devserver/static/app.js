// harness dev: the author's page. Everything the server sends is shown as
// text (textContent), never as markup.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { doc: null, tool: null, values: {}, lastRun: null, events: null };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: r.status + " " + r.statusText }; }
  if (!r.ok && !(data && data.error)) data = { error: r.status + " " + r.statusText };
  data.httpStatus = r.status;
  return data;
}

// pretty indents a JSON text (or a value already parsed); a text that is
// not JSON is shown as it is.
function pretty(v) {
  if (typeof v !== "string") return JSON.stringify(v, null, 2);
  try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; }
}

// ---- the document ----------------------------------------------------

async function load() {
  const d = await api("api/state");
  if (d.error && d.httpStatus !== 200) { $("doc-status").textContent = d.error; return; }
  state.doc = d;
  $("doc-title").textContent = (d.name || "(no name)") + "  " + (d.id || "");
  const st = $("doc-status");
  st.className = "status " + (d.valid ? "valid" : "invalid");
  st.textContent = d.valid ? "lint clean" : "invalid";
  $("mode").textContent = "runs: " + d.mode + " · trust " + d.trust;
  renderProblems(d);
  $("review").textContent = d.review || "";
  renderFiles(d);
  renderTools(d);
  renderSources(d);
  renderWidgets(d);
  renderPrefs(d);
  document.body.dataset.loaded = d.loaded;
}

function renderProblems(d) {
  const ul = $("problems");
  ul.replaceChildren();
  if (d.readError) ul.append(el("li", { class: "error", text: d.readError }));
  const errors = d.problems.filter((p) => p.severity === "error").length;
  const warnings = d.problems.length - errors;
  $("problem-count").textContent = d.problems.length ? `${errors} errors, ${warnings} warnings` : "";
  if (!d.problems.length && !d.readError) ul.append(el("li", { class: "none", text: "No problems: harness lint passes." }));
  for (const p of d.problems) {
    const pos = p.line > 0 ? `${p.file}:${p.line}:${p.col || 1}` : p.file;
    const a = el("a", { href: "#", class: "pos", "data-file": p.file, "data-line": p.line, "data-col": p.col, text: pos,
      onclick: (ev) => { ev.preventDefault(); openFile(p.file, p.line, p.col, p.message); } });
    ul.append(el("li", { class: p.severity }, a, document.createTextNode(": " + (p.severity === "warning" ? "warning: " : "") + p.message)));
  }
  if (d.dropped) ul.append(el("li", { text: `… and ${d.dropped} more` }));
}

function renderFiles(d) {
  const ul = $("files");
  ul.replaceChildren();
  for (const f of d.files) {
    ul.append(el("li", {}, el("a", { href: "#", text: f, onclick: (ev) => { ev.preventDefault(); openFile(f, 0, 0, ""); } })));
  }
}

async function openFile(name, line, col, msg) {
  const f = await api("api/file?name=" + encodeURIComponent(name));
  $("viewer-name").textContent = line > 0 ? `${name}:${line}:${col || 1}` : name;
  $("viewer-msg").textContent = msg || "";
  const pre = $("viewer-text");
  pre.replaceChildren();
  if (f.error) { pre.textContent = f.error; $("viewer").hidden = false; return; }
  const lines = f.text.split("\n");
  let hit = null;
  lines.forEach((text, i) => {
    const span = el("span", { class: "ln" + (i + 1 === line ? " hit" : "") });
    if (i + 1 === line && col > 0) {
      const chars = Array.from(text);
      const c = Math.min(col - 1, chars.length);
      span.append(chars.slice(0, c).join(""), el("span", { class: "caret", text: chars[c] || " " }), chars.slice(c + 1).join(""));
      hit = span;
    } else {
      span.textContent = text || " ";
      if (i + 1 === line) hit = span;
    }
    pre.append(span);
  });
  $("viewer").hidden = false;
  if (hit) hit.scrollIntoView({ block: "center" });
}

// ---- tools and their forms ----------------------------------------------

function renderTools(d) {
  const tabs = $("tool-tabs");
  tabs.replaceChildren();
  if (!d.tools.length) { $("fields").replaceChildren(el("p", { class: "desc", text: "The document has no tools." })); return; }
  if (!state.tool || !d.tools.some((t) => t.name === state.tool)) state.tool = d.tools[0].name;
  for (const t of d.tools) {
    tabs.append(el("button", { type: "button", role: "tab", "aria-selected": String(t.name === state.tool), "data-tool": t.name,
      onclick: () => { saveValues(); state.tool = t.name; renderTools(state.doc); } },
    t.name, el("span", { class: "effect", text: t.effect })));
  }
  renderForm(d.tools.find((t) => t.name === state.tool));
}

function fieldType(s) {
  let t = s && s.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
  if (!t && s && s.enum) t = typeof s.enum[0] === "number" ? "number" : "string";
  return t || "string";
}

function renderForm(t) {
  const box = $("fields");
  box.replaceChildren();
  $("tool-desc").textContent = (t.title ? t.title + ". " : "") + (t.description || "") + (t.runnable ? "" : "  (does not compile: see the problems)");
  $("run").disabled = !t.runnable;
  const schema = t.input || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const saved = state.values[t.name] || {};
  // required fields first, then the others, each in name order
  const names = Object.keys(props).sort((a, b) => (required.has(b) - required.has(a)) || (a < b ? -1 : a > b ? 1 : 0));
  if (!names.length) box.append(el("p", { class: "desc", text: "This tool takes no input." }));
  for (const name of names) {
    const s = props[name] || {};
    const type = fieldType(s);
    const id = `in-${t.name}-${name}`;
    const req = required.has(name);
    let input;
    const val = s.default; // a value typed before a reload is put back below, as typed
    if (Array.isArray(s.enum)) {
      input = el("select", { id, "data-prop": name, "data-type": type, required: req });
      if (!req) input.append(el("option", { value: "", text: "(not set)" }));
      for (const v of s.enum) input.append(el("option", { value: JSON.stringify(v), text: String(v) }));
      if (val !== undefined && val !== "") input.value = JSON.stringify(val);
    } else if (type === "boolean") {
      input = el("select", { id, "data-prop": name, "data-type": "boolean" },
        el("option", { value: "", text: "(not set)" }), el("option", { value: "true", text: "true" }), el("option", { value: "false", text: "false" }));
      if (val !== undefined && val !== "") input.value = String(val);
    } else if (type === "integer" || type === "number") {
      input = el("input", { id, type: "number", "data-prop": name, "data-type": type, required: req,
        step: type === "integer" ? (s.multipleOf || 1) : "any", min: s.minimum, max: s.maximum });
      if (val !== undefined) input.value = String(val);
    } else if (type === "object" || type === "array") {
      input = el("textarea", { id, rows: 3, "data-prop": name, "data-type": type, required: req, spellcheck: "false", placeholder: type === "array" ? "[ … ] (JSON)" : "{ … } (JSON)" });
      if (val !== undefined) input.value = typeof val === "string" ? val : JSON.stringify(val);
    } else {
      input = el("input", { id, type: "text", "data-prop": name, "data-type": "string", required: req,
        minlength: s.minLength, maxlength: s.maxLength, pattern: s.pattern, placeholder: s.format || "" });
      if (val !== undefined) input.value = String(val);
    }
    if (name in saved) input.value = saved[name];
    const label = el("label", { for: id }, name, req ? el("span", { class: "req", text: "*", title: "required" }) : null,
      el("span", { class: "type", text: type }));
    const help = s.description || s.title ? el("div", { class: "help", text: [s.title, s.description].filter(Boolean).join(": ") }) : null;
    box.append(el("div", { class: "field" }, label, input, help));
  }
}

// saveValues keeps what was typed, field by field: a reload that shows
// the tool without a field (a file caught half written) forgets nothing.
function saveValues() {
  if (!state.tool) return;
  const out = state.values[state.tool] || {};
  for (const input of $("fields").querySelectorAll("[data-prop]")) out[input.dataset.prop] = input.value;
  state.values[state.tool] = out;
}

// formInput reads the form into the tool's input object; a field left
// empty is left out.
function formInput() {
  const input = {};
  for (const f of $("fields").querySelectorAll("[data-prop]")) {
    const raw = f.value;
    if (raw === "") continue;
    const type = f.dataset.type;
    let v = raw;
    if (f.tagName === "SELECT" && type !== "boolean") v = JSON.parse(raw);
    else if (type === "boolean") v = raw === "true";
    else if (type === "integer" || type === "number") v = Number(raw);
    else if (type === "object" || type === "array") {
      try { v = JSON.parse(raw); } catch (e) { throw new Error(`${f.dataset.prop}: not JSON: ${e.message}`); }
    }
    input[f.dataset.prop] = v;
  }
  return input;
}

async function runTool(ev) {
  ev.preventDefault();
  saveValues();
  let input;
  try { input = formInput(); } catch (e) { showRunError(e.message); return; }
  $("run").disabled = true;
  $("run-status").className = "run-status";
  $("run-status").textContent = "running…";
  const r = await api("api/run", { tool: state.tool, input, approve: $("approve").checked });
  $("run").disabled = false;
  if (r.httpStatus !== 200) { showRunError(r.error); return; }
  showRun(r);
  refreshSources();
}

function showRunError(msg) {
  $("run-status").className = "run-status bad";
  $("run-status").textContent = msg;
}

function showRun(r) {
  state.lastRun = r;
  const res = $("result");
  $("run-status").textContent = `run ${r.id}: ${r.ms} ms`;
  if (r.refused) {
    res.className = "json refused"; res.textContent = "refused: " + r.refused;
  } else if (r.error) {
    res.className = "json error"; res.textContent = r.error;
  } else {
    res.className = "json"; res.textContent = pretty(r.result);
  }
  $("result-meta").textContent = `${r.tool} · run ${r.id} · ${r.ms} ms` + (r.status ? " · status " + r.status : "") + (r.truncated ? " · cut" : "");
  renderTrace(r.trace || []);
  if (r.traceCut) $("trace").append(el("li", { class: "desc", text: "… the trace was cut at 8 MiB" }));
  const save = $("save");
  save.hidden = !(state.doc && state.doc.canSave && r.saveable);
  $("save-status").className = "run-status";
  $("save-status").textContent = r.note || "";
  if (!$("save-name").value) $("save-name").value = `tests/${r.tool}-recorded.yaml`;
}

function headerText(h) {
  return Object.keys(h || {}).sort().map((k) => `${k}: ${h[k]}`).join("\n");
}

function renderRequest(q) {
  const box = el("div", { class: "request-view" });
  const where = (q.service ? q.service + " " : "") + q.target;
  const answer = q.error ? "error: " + q.error : `${q.status}` + (q.url ? " " + q.url : "");
  box.append(el("div", { class: "req", text: `${q.method} ${where} → ${answer}` }),
    el("div", { class: "ms", text: `request ${q.ms} ms` }));
  if (q.headers && Object.keys(q.headers).length) box.append(el("details", {}, el("summary", { text: "request headers" }), el("pre", { text: headerText(q.headers) })));
  if (q.body) box.append(el("details", {}, el("summary", { text: "request body" + (q.contentType ? " (" + q.contentType + ")" : "") }), el("pre", { text: pretty(q.body) })));
  if (q.respHeaders && Object.keys(q.respHeaders).length) box.append(el("details", {}, el("summary", { text: "answer headers" }), el("pre", { text: headerText(q.respHeaders) })));
  if (q.binary) box.append(el("div", { class: "desc", text: `answer body: not text (${q.mediaType})` }));
  else if (q.respBody) box.append(el("details", {}, el("summary", { text: `answer body (${q.bytes} bytes${q.cut ? ", cut" : ""})` }), el("pre", { text: pretty(q.respBody) })));
  return box;
}

function renderTrace(steps) {
  const ol = $("trace");
  ol.replaceChildren();
  if (!steps.length) ol.append(el("li", { text: "No steps ran." }));
  for (const s of steps) {
    const reqs = s.requests || [];
    const cls = [s.error ? "err" : "", s.skipped ? "skipped" : "", reqs.length ? "request" : ""].join(" ");
    const head = el("div", { class: "head" },
      el("span", { class: "label", text: "step " + s.label }), el("span", { class: "kind", text: s.kind }),
      el("a", { href: "#", class: "pos", text: s.pos, onclick: (ev) => { ev.preventDefault(); const m = /^(.*):(\d+):(\d+)$/.exec(s.pos); if (m) openFile(m[1], +m[2], +m[3], "step " + s.label); } }),
      el("span", { class: "ms", text: s.ms + " ms" }));
    const li = el("li", { class: cls, "data-kind": s.kind }, head);
    for (const q of reqs) li.append(renderRequest(q));
    if (s.error) li.append(el("pre", { class: "json error", text: s.error }));
    else if (s.skipped) li.append(el("div", { class: "desc", text: "skipped (its if: was false)" }));
    else if (s.omitted) li.append(el("div", { class: "desc", text: "output: " + s.omitted }));
    else if (s.output !== undefined) li.append(el("details", { open: !reqs.length }, el("summary", { text: "output" }), el("pre", { class: "json", text: pretty(s.output) })));
    ol.append(li);
  }
}

async function saveCase() {
  if (!state.lastRun) return;
  const r = await api("api/save", { run: state.lastRun.id, file: $("save-name").value });
  const st = $("save-status");
  if (r.error) { st.className = "run-status bad"; st.textContent = r.error; return; }
  st.className = "run-status"; st.textContent = "saved " + r.file + (r.name ? " (case " + r.name + ")" : "");
}

async function runTests() {
  $("tests-meta").textContent = "running…";
  const r = await api("api/tests", {});
  const ul = $("cases");
  ul.replaceChildren();
  if (r.error) { $("tests-meta").textContent = r.error; return; }
  const failed = r.cases.filter((c) => !c.passed).length;
  $("tests-meta").textContent = r.cases.length ? `${r.cases.length - failed} of ${r.cases.length} passed` : "no cases";
  for (const c of r.cases) {
    const m = /^(.*):(\d+):(\d+)$/.exec(c.pos);
    const li = el("li", { class: c.passed ? "pass" : "fail" },
      el("a", { href: "#", class: "pos", text: c.pos, onclick: (ev) => { ev.preventDefault(); if (m) openFile(m[1], +m[2], +m[3], c.name); } }),
      document.createTextNode(" " + c.name + " (" + c.tool + ", " + c.ms + " ms)"));
    if (!c.passed) li.append(el("pre", { class: "json error", text: c.failures.join("\n") }));
    ul.append(li);
  }
  if (!r.ok && !r.cases.length) ul.append(el("li", { class: "fail" }, el("pre", { text: r.text })));
}

// ---- the scratch pane ----------------------------------------------------

let scratchTimer = 0;
let scratchSeq = 0;

function renderSources(d, keep) {
  const sel = $("scratch-source");
  const cur = sel.value;
  sel.replaceChildren(el("option", { value: "", text: "paste, or pick a recorded response…" }));
  (d.responses || []).forEach((r, i) => sel.append(el("option", { value: String(i), text: r.label })));
  if (keep) sel.value = cur;
}

async function refreshSources() {
  const d = await api("api/state");
  state.doc.responses = d.responses;
  renderSources(state.doc, true);
}

function pickSource() {
  const i = $("scratch-source").value;
  if (i === "") return;
  const r = state.doc.responses[Number(i)];
  if (!r) return;
  $("scratch-input").value = r.body;
  const looksHTML = /^\s*</.test(r.body);
  if (looksHTML && $("scratch-kind").value !== "css") { $("scratch-kind").value = "css"; kindChanged(); }
  scheduleScratch();
}

function kindChanged() {
  const css = $("scratch-kind").value === "css";
  $("scratch-attr").hidden = !css;
  $("scratch-expr").placeholder = css ? "CSS selector, e.g. ul.rooms > li" : "jq program, e.g. .body.rooms[] | .name";
  scheduleScratch();
}

function scheduleScratch() {
  clearTimeout(scratchTimer);
  scratchTimer = setTimeout(runScratch, 120);
}

async function runScratch() {
  const kind = $("scratch-kind").value;
  const expr = $("scratch-expr").value;
  const out = $("scratch-result");
  if (!expr.trim()) { out.textContent = ""; return; }
  const seq = ++scratchSeq;
  const body = kind === "css"
    ? { kind, selector: expr, attr: $("scratch-attr").value, input: $("scratch-input").value }
    : { kind, program: expr, input: $("scratch-input").value };
  const r = await api("api/scratch", body);
  if (seq !== scratchSeq) return; // a newer keystroke answered first
  if (r.ok) { out.className = "json"; out.textContent = pretty(r.result); }
  else { out.className = "json error"; out.textContent = r.error; }
}

// ---- widgets ------------------------------------------------------------

function renderWidgets(d) {
  const box = $("widgets");
  box.replaceChildren();
  if (!d.widgets.length) { box.append(el("p", { class: "desc", text: "The document contributes no widgets." })); return; }
  for (const w of d.widgets) {
    const card = el("div", { class: "widget", "data-widget": w.key },
      el("div", { class: "w-head" }, el("span", { class: "w-sub", text: `${w.key} · widgets/${w.template}.json` + (w.dataSource ? ` · data: ${w.dataSource}` : "") }),
        el("button", { type: "button", text: "Preview", onclick: () => previewWidget(w.key, card) })),
      el("div", { class: "w-body" }));
    box.append(card);
  }
}

// ---- preferences --------------------------------------------------------

function renderPrefs(d) {
  const box = $("preferences");
  box.replaceChildren();
  if (!d.preferences.length) { box.append(el("p", { class: "desc", text: "The document declares no preferences." })); return; }
  for (const p of d.preferences) {
    const opts = (p.options || []).map(o => o.label === o.value ? text(o.value) : `${text(o.value)} (${o.label})`).join(", ");
    box.append(el("div", { class: "pref", "data-pref": p.key },
      el("div", { class: "w-head" }, el("span", { text: `${p.key} · ${p.kind}` + (p.screen ? ` · screen ${p.screen}` : "") })),
      el("div", { class: "desc", text: p.title + (opts ? ` — ${opts}` : "") + (p.default !== undefined ? ` · default ${text(p.default)}` : "") })));
  }
}

async function previewWidget(key, card) {
  const body = card.querySelector(".w-body");
  body.replaceChildren(el("span", { class: "w-sub", text: "running the data source…" }));
  const r = await api("api/widget", { key });
  body.replaceChildren();
  if (r.run) { showRun(r.run); refreshSources(); }
  if (r.error) { body.append(el("div", { class: "w-error", text: r.error })); return; }
  body.append(renderUI(r.ui));
}

function text(v) { return v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v); }

// renderUI draws the generative-UI JSON: a card (title, value, subtitle,
// badge) or a list (title, subtitle, items of title/subtitle/value/badge).
function renderUI(ui) {
  if (!ui || typeof ui !== "object") return el("pre", { text: JSON.stringify(ui) });
  const box = el("div", { class: "w-ui", "data-type": text(ui.type) });
  box.append(el("div", { class: "w-title", text: text(ui.title) }));
  if (ui.subtitle) box.append(el("div", { class: "w-sub", text: text(ui.subtitle) }));
  if (ui.value !== undefined) box.append(el("div", { class: "w-value", text: text(ui.value) }));
  if (ui.badge) box.append(el("span", { class: "badge", text: text(ui.badge) }));
  if (Array.isArray(ui.items)) {
    const ul = el("ul", { class: "w-items" });
    for (const it of ui.items) {
      if (!it || typeof it !== "object") { ul.append(el("li", { text: text(it) })); continue; }
      ul.append(el("li", {},
        el("span", { class: "t" }, text(it.title), it.subtitle ? el("span", { class: "s", text: text(it.subtitle) }) : null),
        it.value !== undefined ? el("span", { class: "v", text: text(it.value) }) : null,
        it.badge ? el("span", { class: "badge", text: text(it.badge) }) : null));
    }
    if (!ui.items.length) ul.append(el("li", { class: "w-sub", text: ui.empty ? text(ui.empty) : "(no items)" }));
    box.append(ul);
  }
  if (ui.footnote) box.append(el("div", { class: "w-sub", text: text(ui.footnote) }));
  const known = new Set(["type", "title", "subtitle", "value", "badge", "items", "empty", "max", "footnote"]);
  const rest = Object.keys(ui).filter((k) => !known.has(k));
  if (rest.length) box.append(el("details", {}, el("summary", { text: "other fields" }), el("pre", { text: JSON.stringify(Object.fromEntries(rest.map((k) => [k, ui[k]])), null, 2) })));
  return box;
}

// ---- wiring -------------------------------------------------------------

function listen() {
  const es = new EventSource("api/events");
  es.addEventListener("reload", (ev) => {
    saveValues();
    load().then(() => { $("reloaded").textContent = "reloaded " + ev.data; });
  });
  es.onerror = () => { $("reloaded").textContent = "not connected: is harness dev still running?"; };
  es.onopen = () => { if ($("reloaded").textContent.startsWith("not connected")) $("reloaded").textContent = "connected"; };
  state.events = es;
}

document.addEventListener("DOMContentLoaded", () => {
  $("tool-form").addEventListener("submit", runTool);
  $("save-button").addEventListener("click", saveCase);
  $("run-tests").addEventListener("click", runTests);
  $("scratch-kind").addEventListener("change", kindChanged);
  $("scratch-source").addEventListener("change", pickSource);
  $("scratch-input").addEventListener("input", scheduleScratch);
  $("scratch-expr").addEventListener("input", scheduleScratch);
  $("scratch-attr").addEventListener("input", scheduleScratch);
  $("viewer-close").addEventListener("click", () => { $("viewer").hidden = true; });
  $("viewer").addEventListener("click", (ev) => { if (ev.target === $("viewer")) $("viewer").hidden = true; });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") $("viewer").hidden = true; });
  load().then(listen);
});

"""The labelling page: one HTML document, its style and script inline under the
response's nonce, no external asset. The script builds every element from the server's
JSON with ``textContent`` (never ``innerHTML``): text from answers, passages and ids is
shown, never parsed."""

from __future__ import annotations

from ragrail.text.guard import escape

STYLE = """
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfd; --muted: #666; --line: #ccc;
  --pass: #1a7f37; --fail: #b42318; --hi: #fff3bf; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8e8; --bg: #161616; --muted: #a0a0a0;
  --line: #444; --pass: #5bd37a; --fail: #ff7b72; --hi: #4a3f00; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  max-width: 60rem; margin: 0 auto; padding: 1rem; }
header { display: flex; gap: 1rem; justify-content: space-between; border-bottom: 1px solid var(--line); }
.muted, kbd { color: var(--muted); }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 .3em; font-size: .85em; }
.block { white-space: pre-wrap; border: 1px solid var(--line); padding: .5rem; margin: .3rem 0; }
.passage .src { font-weight: 600; }
.chip { display: inline-block; border: 1px solid var(--line); border-radius: 1rem;
  padding: 0 .6em; margin: .1rem; }
.pass { color: var(--pass); } .fail { color: var(--fail); }
.pass::before { content: "\\2713  "; } .fail::before { content: "\\2717  "; }
#judge, #last { margin: .5rem 0; padding: .4rem; border-left: 4px solid var(--line); }
#error { color: var(--fail); font-weight: 600; }
#summary pre { white-space: pre-wrap; }
.selected { outline: 2px solid var(--fg); background: var(--hi); }
"""

SCRIPT = r"""
"use strict";
const TOKEN = document.body.dataset.token;
let S = null, cur = 0, draft = null, pendingForce = false;
const $ = (id) => document.getElementById(id);
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
async function api(path, body) {
  const r = await fetch(path, {method: body ? "POST" : "GET", headers:
    {"X-Ragrail-Token": TOKEN, "Content-Type": "application/json"},
    body: body ? JSON.stringify(body) : undefined});
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
  return data;
}
function say(msg) { $("error").textContent = msg || ""; }
function done(it) { return S.mode === "validate" ? it.label !== null : it.case !== null; }
function nDone() { return S.items.filter(done).length; }
function nextOpen(from) {
  for (let k = 1; k <= S.items.length; k++) {
    const i = (from + k) % S.items.length;
    if (!done(S.items[i])) return i;
  }
  return -1;
}
function word(v) { return v === "pass" || v === "fail" ? v : v; }
function passages(it, box) {
  it.passages.forEach((p, n) => {
    const d = el("div", null, "block passage");
    d.dataset.source = p.source; d.dataset.n = String(n + 1);
    d.appendChild(el("div", (n + 1) + ". " + p.source, "src"));
    d.appendChild(el("div", p.text, "text"));
    box.appendChild(d);
  });
}
function render() {
  const it = S.items[cur];
  $("progress").textContent = nDone() + " / " + S.items.length + " done";
  $("where").textContent = S.file;
  const main = clear($("item"));
  main.dataset.index = String(cur);
  if (S.mode === "validate") renderJudged(it, main); else renderSampled(it, main);
  $("undo").hidden = !S.can_undo;
  $("alldone").hidden = nDone() < S.items.length;
}
function renderJudged(it, main) {
  main.appendChild(el("h2", (cur + 1) + ". " + it.case_id + " \u00b7 " + it.criterion));
  main.appendChild(el("div", it.scale === "pass_fail" ? "p pass \u00b7 f fail" : "1-5 score", "muted"));
  main.appendChild(el("h3", "Question")); main.appendChild(el("div", it.question, "block"));
  main.appendChild(el("h3", "Answer")); main.appendChild(el("div", it.answer, "block answer"));
  const mine = el("div", null, "mine"); mine.id = "mine";
  mine.textContent = it.label === null ? "your verdict: (none yet)" : "your verdict: " + it.label;
  main.appendChild(mine);
  const j = el("div", null); j.id = "judge";
  if (it.judge !== undefined) {
    j.appendChild(el("span", "judge: " + it.judge, it.judge === "fail" ? "fail" : "pass"));
    j.appendChild(el("span", it.agrees ? "  (agrees)" : "  (DISAGREES)"));
    j.appendChild(el("div", it.reason, "muted"));
  } else j.textContent = "judge: hidden until you answer";
  main.appendChild(j);
  if (it.passages.length) { main.appendChild(el("h3", "Passages")); passages(it, main); }
}
function renderSampled(it, main) {
  if (!draft || draft.index !== cur) draft = {index: cur, facts: [], sources: [], expect: null};
  pendingForce = false;
  main.appendChild(el("h2", (cur + 1) + ". " + it.id + (it.stratum ? " \u00b7 " + it.stratum : "")));
  if (it.case !== null) main.appendChild(el("div", "in the golden set as " + it.case, "pass"));
  main.appendChild(el("h3", "Question")); main.appendChild(el("div", it.question, "block"));
  main.appendChild(el("h3", "Answer")); main.appendChild(el("div", it.answer, "block answer"));
  const f = el("div", null); f.id = "facts"; f.appendChild(el("b", "facts: "));
  draft.facts.forEach((x) => f.appendChild(el("span", x, "chip fact")));
  const s = el("div", null); s.id = "sources"; s.appendChild(el("b", "sources: "));
  draft.sources.forEach((x) => s.appendChild(el("span", x, "chip source")));
  const e = el("div", "expect: " + (draft.expect || "(default)")); e.id = "expect";
  main.append(f, s, e);
  const probs = el("ul", null); probs.id = "problems"; main.appendChild(probs);
  if (it.passages.length) { main.appendChild(el("h3", "Passages")); passages(it, main); }
  document.querySelectorAll(".passage").forEach((p) => {
    if (draft.sources.includes(p.dataset.source)) p.classList.add("selected");
  });
}
function lastLine(it) {
  const l = clear($("last"));
  l.appendChild(el("span", it.case_id + " \u00b7 " + it.criterion + ": you " + it.label + ", judge " + it.judge));
  l.appendChild(el("span", it.agrees ? " (agrees)" : " (DISAGREES)", it.agrees ? "pass" : "fail"));
}
async function label(verdict) {
  const it = S.items[cur];
  const r = await api("/api/act", {op: "label", index: cur, verdict: verdict});
  S.items[cur] = r.item; S.can_undo = r.can_undo; lastLine(r.item);
  const n = nextOpen(cur);
  if (n >= 0 && n > cur) cur = n; else if (n >= 0 && it.label === null) cur = n;
  render();
}
function toggleSource(name) {
  const k = draft.sources.indexOf(name);
  if (k >= 0) draft.sources.splice(k, 1); else draft.sources.push(name);
  render();
}
function addFact() {
  const sel = window.getSelection(); const text = sel ? sel.toString().trim() : "";
  if (!text) { say("select text in the answer or a passage first"); return; }
  const node = sel.anchorNode && (sel.anchorNode.nodeType === 1 ? sel.anchorNode : sel.anchorNode.parentElement);
  const passage = node ? node.closest(".passage") : null;
  if (!draft.facts.includes(text)) draft.facts.push(text);
  if (passage && !draft.sources.includes(passage.dataset.source)) draft.sources.push(passage.dataset.source);
  sel.removeAllRanges(); render();
}
async function save() {
  const r = await api("/api/act", {op: "save", index: cur, facts: draft.facts,
    sources: draft.sources, expect: draft.expect, force: pendingForce});
  if (r.problems) {
    const keep = Object.assign({}, draft); render(); draft = keep; pendingForce = true;
    const ul = clear($("problems"));
    r.problems.forEach((p) => ul.appendChild(el("li", p, "fail")));
    ul.appendChild(el("li", "Enter again saves it anyway; edit the labels to fix it", "muted"));
    return;
  }
  S.items[r.index].case = r.case; S.can_undo = r.can_undo; draft = null;
  const n = nextOpen(cur); if (n >= 0) cur = n; render();
}
async function undo() {
  const r = await api("/api/act", {op: "undo"});
  if (S.mode === "validate") { S.items[r.item.index] = r.item; cur = r.item.index; }
  else { S.items[r.index].case = null; cur = r.index; draft = null; }
  S.can_undo = r.can_undo; render();
}
async function finish() {
  say("finishing\u2026");
  const r = await api("/api/finish", {});
  say("");
  const box = clear($("summary")); box.hidden = false;
  box.appendChild(el("h2", "Finished"));
  box.appendChild(el("pre", r.lines.join("\n")));
  (r.criteria || []).forEach((c) => {
    const d = el("div", null, "criterion"); d.dataset.criterion = c.criterion;
    for (const k of ["n", "agreement", "kappa", "spearman", "labels_to_halve", "corrected"])
      if (c[k] !== undefined && c[k] !== null) d.dataset[k] = String(c[k]);
    box.appendChild(d);
  });
  clear($("item")); document.body.dataset.finished = "1";
}
document.addEventListener("keydown", (ev) => {
  if (!S || ev.ctrlKey || ev.metaKey || ev.altKey || document.body.dataset.finished) return;
  const t = ev.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
  const it = S.items[cur], k = ev.key;
  let act = null;
  if (k === "j") act = () => { cur = Math.min(cur + 1, S.items.length - 1); draft = null; render(); };
  else if (k === "k") act = () => { cur = Math.max(cur - 1, 0); draft = null; render(); };
  else if (k === "u") act = undo;
  else if (k === "q") act = finish;
  else if (S.mode === "validate") {
    if (it.scale === "pass_fail" && (k === "p" || k === "f")) act = () => label(k === "p" ? "pass" : "fail");
    else if (it.scale !== "pass_fail" && "12345".includes(k) && k.length === 1) act = () => label(k);
    else if (k === "Enter" && nDone() === S.items.length) act = finish;
  } else {
    if (k === "f") act = addFact;
    else if (k === "d") act = () => { draft.facts.pop(); render(); };
    else if ("123456789".includes(k) && k.length === 1) {
      const p = it.passages[Number(k) - 1];
      if (p) act = () => toggleSource(p.source);
    } else if (k === "a" || k === "n" || k === "r" || k === "e") {
      const m = {a: "answer", n: "abstain", r: "refuse", e: "escalate"}[k];
      act = () => { draft.expect = draft.expect === m ? null : m; render(); };
    } else if (k === "Enter") act = save;
    else if (k === "x") act = () => { const n = nextOpen(cur); if (n >= 0) cur = n; draft = null; render(); };
    else if (k === "/") act = () => { $("docname").focus(); };
  }
  if (act) {
    ev.preventDefault(); say("");
    Promise.resolve().then(act).catch((e) => say(e.message));
  }
});
$("docname").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter") {
    ev.preventDefault();
    const v = ev.target.value.trim(); ev.target.value = ""; ev.target.blur();
    if (v && draft) toggleSource(v);
  } else if (ev.key === "Escape") ev.target.blur();
});
$("undo").addEventListener("click", () => undo().catch((e) => say(e.message)));
api("/api/state").then((s) => {
  S = s; document.body.dataset.mode = s.mode;
  const docs = $("docs"); (s.documents || []).forEach((d) => { const o = el("option"); o.value = d; docs.appendChild(o); });
  $("golden-only").hidden = s.mode !== "golden";
  $(s.mode === "validate" ? "keys-validate" : "keys-golden").hidden = false;
  const open = nextOpen(-1); cur = open >= 0 ? open : 0; render();
  document.body.dataset.ready = "1";
}).catch((e) => say(e.message));
"""

BODY = """<header><h1>{title}</h1><div><span id="progress"></span><br><span id="where" class="muted"></span></div></header>
<p id="keys-validate" class="muted" hidden><kbd>p</kbd>/<kbd>f</kbd> pass/fail, <kbd>1</kbd>-<kbd>5</kbd> a score,
<kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>u</kbd> undo, <kbd>q</kbd> finish and validate the judge.
Every label is saved as you give it.</p>
<p id="keys-golden" class="muted" hidden>select text then <kbd>f</kbd>: a fact (its passage's document becomes a source),
<kbd>d</kbd> drop the last fact, <kbd>1</kbd>-<kbd>9</kbd> a passage's document as source, <kbd>/</kbd> a document by name,
<kbd>a</kbd>/<kbd>n</kbd>/<kbd>r</kbd>/<kbd>e</kbd> expect answer/abstain/refuse/escalate,
<kbd>Enter</kbd> add the case, <kbd>x</kbd> skip, <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>u</kbd> undo, <kbd>q</kbd> finish.</p>
<div id="error" role="alert"></div>
<div id="last"></div>
<div id="golden-only" hidden><input id="docname" list="docs" placeholder="/ a source document by name"><datalist id="docs"></datalist></div>
<main id="item"></main>
<p id="alldone" hidden><b>All done.</b> <kbd>q</kbd> (or <kbd>Enter</kbd>) finishes.</p>
<button id="undo" type="button" hidden>undo (u)</button>
<section id="summary" hidden></section>"""


def render_page(nonce: str, token: str, title: str) -> str:
    """The page for one response: ``nonce`` is the CSP's, ``token`` the session's."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        f'<style nonce="{escape(nonce)}">{STYLE}</style></head>'
        f'<body data-token="{escape(token)}">'
        + BODY.format(title=escape(title))
        + f'<script nonce="{escape(nonce)}">{SCRIPT}</script></body></html>\n'
    )

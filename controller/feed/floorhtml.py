"""The floor page's one document (controller/feed/floorpage.py): its style and script inline,
nothing loaded from anywhere else. Every text from the store is put in the page escaped
(``esc``); the page keeps the tables in a map updated from the event stream and draws the
filtered list one page of rows at a time (``PAGE_SIZE``), at most once per animation frame.
``window.floorStats`` holds how long drawing took (bench/bench_floor_page.py reads it)."""

from __future__ import annotations

from typing import Final

_HTML: Final = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Floor</title>
<style>
:root { color-scheme: dark; --bg:#101418; --fg:#e8e8e8; --dim:#8a949e; --line:#2a323a;
  --ok:#3fb950; --warn:#d29922; --bad:#f85149; --unk:#a371f7; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); font:14px/1.35 system-ui, sans-serif; }
header { display:flex; flex-wrap:wrap; gap:12px 24px; align-items:center; padding:10px 16px;
  border-bottom:1px solid var(--line); }
h1 { font-size:18px; margin:0; }
h2 { font-size:15px; margin:14px 0 6px; }
.badge { padding:2px 8px; border-radius:4px; font-weight:600; }
.b-connected { background:#12361d; color:var(--ok); }
.b-lost, .b-no-collector { background:#4a1414; color:var(--bad); }
#conn { color:var(--bad); font-weight:600; }
#collectors { color:var(--dim); }
#who { margin-left:auto; display:flex; gap:8px; align-items:center; }
input, select, textarea, button { font:inherit; color:var(--fg); background:#1b2128;
  border:1px solid var(--line); border-radius:4px; padding:3px 6px; }
button { cursor:pointer; }
button:hover { border-color:var(--dim); }
#filters { display:flex; gap:14px; align-items:center; padding:8px 16px; flex-wrap:wrap;
  border-bottom:1px solid var(--line); }
main { padding:0 16px 16px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:3px 8px; border-bottom:1px solid var(--line);
  white-space:nowrap; }
td.detail { white-space:normal; max-width:560px; color:var(--dim); }
th { color:var(--dim); font-weight:500; position:sticky; top:0; background:var(--bg); }
.i-ok { color:var(--ok); } .i-gap, .i-silent { color:var(--warn); }
.i-forked, .i-bad-signature { color:var(--bad); font-weight:700; }
.p-online { color:var(--ok); } .p-offline { color:var(--warn); }
.p-unknown { color:var(--unk); font-weight:600; }
#pager { display:flex; gap:10px; align-items:center; margin:6px 0; }
.error { color:var(--bad); }
.muted { color:var(--dim); }
dialog { background:#1b2128; color:var(--fg); border:1px solid var(--dim); border-radius:6px;
  min-width:420px; }
dialog textarea { width:100%; height:90px; }
</style></head>
<body data-version="0">
<header>
  <h1>Floor <span id="site" class="muted"></span></h1>
  <span>broker: <span id="broker" class="badge">&hellip;</span></span>
  <span id="collectors"></span>
  <span id="conn"></span>
  <span id="who">
    <form id="login" hidden>
      <input id="l-name" autocomplete="username" placeholder="name" maxlength="64">
      <input id="l-pass" type="password" autocomplete="current-password"
             placeholder="password" maxlength="1024">
      <button id="l-go" type="submit">Sign in</button>
      <span id="l-msg" class="error"></span>
    </form>
    <span id="signed" hidden>signed in as <b id="s-name"></b>
      <button id="s-out" type="button">Sign out</button></span>
    <span id="nologin" class="muted" hidden>read-only (no user list)</span>
  </span>
</header>
<div id="filters">
  <label>table <input id="f-table" maxlength="64" placeholder="name contains"></label>
  <label>tables showing <select id="f-integrity">
    <option value="">all</option><option>forked</option><option>bad signature</option>
    <option>gap</option><option>silent</option><option>ok</option><option>online</option>
    <option>offline</option><option>unknown</option></select></label>
  <label>alarm kind <select id="f-kind"><option value="">all</option></select></label>
  <span id="counts" class="muted"></span>
</div>
<main>
  <h2>Open alarms <span id="a-count" class="muted"></span></h2>
  <table><thead><tr><th>table</th><th>kind</th><th>count</th><th>first</th><th>last</th>
    <th>detail</th><th></th></tr></thead><tbody id="alarms"></tbody></table>
  <h2>Tables <span id="t-count" class="muted"></span></h2>
  <div id="pager"><button id="prev" type="button">&larr; previous</button>
    <span id="pageno"></span><button id="next" type="button">next &rarr;</button></div>
  <table><thead><tr><th>table</th><th>game</th><th>round</th><th>state</th><th>last result</th>
    <th>presence</th><th>integrity</th><th>last seen</th><th>rows</th><th>signed</th><th></th>
    </tr></thead><tbody id="tables"></tbody></table>
</main>
<dialog id="ackdlg"><form method="dialog" id="ackform">
  <p id="ack-what"></p>
  <p class="muted">acknowledged by <b id="ack-by"></b>, with a note of what was found:</p>
  <textarea id="ack-note" maxlength="2000" required></textarea>
  <p id="ack-msg" class="error"></p>
  <button id="ack-go" type="submit">Acknowledge</button>
  <button id="ack-cancel" type="button">Cancel</button>
</form></dialog>
<script>
"use strict";
const PAGE_SIZE = __PAGE_SIZE__;
const ORDER = {"forked": 0, "bad signature": 1, "gap": 2, "silent": 3, "ok": 4};
const $ = (id) => document.getElementById(id);
const tables = new Map();
let alarms = [], alarmsTotal = 0, collectors = [], broker = "", serverSkew = 0;
let session = {name: null, csrf: null, logins: false};
let pageNo = 0, drawPending = false, ackTarget = null;
window.floorStats = {draws: 0, lastMs: 0, maxMs: 0, totalMs: 0, updates: 0, samples: [],
                     firstAt: null, firstMs: null};

function esc(v) {
  return String(v == null ? "" : v).replace(/[&<>"']/g,
    (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}
function stamp(ns) {
  if (ns == null) return "never";
  const d = new Date(ns / 1e6);
  return d.toISOString().slice(11, 19) + "Z";
}
function ago(ns) {
  if (ns == null) return "never";
  const s = Math.max(0, Math.round((Date.now() - serverSkew - ns / 1e6) / 1000));
  const t = s < 120 ? s + " s"
    : s < 7200 ? Math.floor(s / 60) + " min" : Math.floor(s / 3600) + " h";
  return stamp(ns) + " (" + t + " ago)";
}
function filters() {
  return {table: $("f-table").value.trim().toLowerCase(), integrity: $("f-integrity").value,
          kind: $("f-kind").value};
}
function keepFilters() {
  const f = filters(), q = new URLSearchParams();
  if (f.table) q.set("table", $("f-table").value.trim());
  if (f.integrity) q.set("integrity", f.integrity);
  if (f.kind) q.set("kind", f.kind);
  const s = q.toString();
  history.replaceState(null, "", s ? "?" + s : location.pathname);
}
function schedule() {
  if (!drawPending) { drawPending = true; requestAnimationFrame(draw); }
}
function tableRow(t) {
  const cls = t.integrity.replace(" ", "-");
  const ack = t.forked != null
    ? (session.name ? '<button class="ack-table" data-table="' + esc(t.id) +
       '">Acknowledge</button>' : '<span class="muted">sign in to acknowledge</span>')
    : "";
  const integ = t.forked != null ? "forked since " + stamp(t.forked) + " at row " + t.forked_seq
    : t.fork_acked && t.integrity === "ok" ? "ok (a fork acknowledged)" : t.integrity;
  return '<tr data-id="' + esc(t.id) + '" data-presence="' + esc(t.presence) +
    '" data-integrity="' + esc(t.integrity) + '" data-rows="' + esc(t.rows) +
    '" data-signed="' + esc(t.signed) + '"><td>' + esc(t.id) + "</td><td>" +
    esc(t.game) + "</td><td>" + esc(t.round) + "</td><td>" + esc(t.state) + "</td><td>" +
    esc(t.result) + '</td><td class="p-' + esc(t.presence) + '">' + esc(t.presence) +
    '</td><td class="i-' + esc(cls) + '">' + esc(integ) + "</td><td>" + esc(ago(t.seen)) +
    "</td><td>" + esc(t.rows) + "</td><td>" + esc(t.signed) + "</td><td>" + ack + "</td></tr>";
}
function alarmRow(a) {
  const ack = session.name
    ? '<button class="ack-alarm" data-alarm="' + esc(a.id) + '">Acknowledge</button>'
    : '<span class="muted">sign in to acknowledge</span>';
  return '<tr data-alarm="' + esc(a.id) + '" data-kind="' + esc(a.kind) + '" data-table="' +
    esc(a.site + "/" + a.table) + '" data-count="' + esc(a.count) + '"><td>' +
    esc(a.site + "/" + a.table) + "</td><td>" + esc(a.kind) + "</td><td>" + esc(a.count) +
    "</td><td>" + esc(stamp(a.first)) + "</td><td>" + esc(stamp(a.last)) +
    '</td><td class="detail">' + esc(a.detail) + "</td><td>" + ack + "</td></tr>";
}
function draw() {
  drawPending = false;
  const t0 = performance.now();
  const f = filters();
  const list = [];
  for (const t of tables.values()) {
    if (f.table && !t.id.toLowerCase().includes(f.table)) continue;
    if (f.integrity && t.integrity !== f.integrity && t.presence !== f.integrity) continue;
    list.push(t);
  }
  list.sort((a, b) => (ORDER[a.integrity] - ORDER[b.integrity]) ||
                      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const pages = Math.max(1, Math.ceil(list.length / PAGE_SIZE));
  pageNo = Math.min(pageNo, pages - 1);
  const shown = list.slice(pageNo * PAGE_SIZE, (pageNo + 1) * PAGE_SIZE);
  $("tables").innerHTML = shown.map(tableRow).join("");
  $("pageno").textContent = "page " + (pageNo + 1) + " of " + pages;
  $("prev").disabled = pageNo === 0;
  $("next").disabled = pageNo >= pages - 1;
  $("t-count").textContent = list.length + " of " + tables.size;
  const kinds = new Set(alarms.map((a) => a.kind));
  const sel = $("f-kind"), have = new Set(Array.from(sel.options).map((o) => o.value));
  for (const k of [...kinds, f.kind].sort()) {
    if (k && !have.has(k)) { const o = document.createElement("option"); o.textContent = k;
      sel.appendChild(o); have.add(k); }
  }
  const shownAlarms = alarms.filter((a) => (!f.kind || a.kind === f.kind) &&
    (!f.table || (a.site + "/" + a.table).toLowerCase().includes(f.table)));
  $("alarms").innerHTML = shownAlarms.map(alarmRow).join("");
  $("a-count").textContent = shownAlarms.length + " shown, " + alarmsTotal + " open" +
    (alarmsTotal > alarms.length ? " (the newest " + alarms.length + " sent)" : "");
  const b = $("broker");
  b.textContent = broker === "connected" ? "connected" : broker === "lost"
    ? "LOST: tables unknown" : "no collector reporting";
  b.className = "badge b-" + broker.replace(" ", "-");
  document.body.dataset.broker = broker;
  $("collectors").textContent = collectors.map((c) => c.id + " " +
    (c.connected && c.fresh ? "connected since " + stamp(c.since)
     : c.fresh ? "no broker since " + stamp(c.since) : "silent since " + stamp(c.updated))
  ).join("; ");
  let bad = 0;
  for (const t of tables.values()) if (t.integrity !== "ok") bad++;
  $("counts").textContent = tables.size + " tables, " + bad + " not ok";
  void $("tables").offsetHeight;  // the layout of the new rows, in the figure below
  const ms = performance.now() - t0, s = window.floorStats;
  s.draws++; s.lastMs = ms; s.totalMs += ms; s.maxMs = Math.max(s.maxMs, ms);
  if (s.samples.length < 5000) s.samples.push(ms);
  if (s.firstAt === null && tables.size) { s.firstAt = performance.now(); s.firstMs = ms; }
}
function update(u) {
  if (u.full) tables.clear();
  for (const t of u.tables) tables.set(t.id, t);
  for (const id of u.gone) tables.delete(id);
  if (u.alarms) { alarms = u.alarms; alarmsTotal = u.alarms_total; }
  collectors = u.collectors; broker = u.broker;
  if (u.now) serverSkew = Date.now() - u.now / 1e6;
  $("conn").textContent = u.error ? u.error : "";
  window.floorStats.updates++;
  document.body.dataset.version = String(Number(document.body.dataset.version) + 1);
  schedule();
}
function connect() {
  const es = new EventSource("/events");
  es.addEventListener("update", (e) => { $("conn").textContent = ""; update(JSON.parse(e.data)); });
  es.onerror = () => { $("conn").textContent = "this page lost its server: reconnecting"; };
}
async function post(path, body) {
  const headers = {"Content-Type": "application/json"};
  if (session.csrf) headers["X-CSRF-Token"] = session.csrf;
  const r = await fetch(path, {method: "POST", headers, body: JSON.stringify(body),
                               credentials: "same-origin"});
  let answer = {};
  try { answer = await r.json(); } catch (e) { answer = {error: "HTTP " + r.status}; }
  if (!r.ok) throw new Error(answer.error || ("HTTP " + r.status));
  return answer;
}
function showSession() {
  $("login").hidden = !!session.name || !session.logins;
  $("signed").hidden = !session.name;
  $("nologin").hidden = session.logins;
  $("s-name").textContent = session.name || "";
  schedule();
}
async function loadSession() {
  const r = await fetch("/api/session", {credentials: "same-origin"});
  session = await r.json();
  showSession();
}
$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("l-msg").textContent = "";
  try {
    const a = await post("/api/login", {name: $("l-name").value, password: $("l-pass").value});
    session = {name: a.name, csrf: a.csrf, logins: true};
    $("l-pass").value = "";
    showSession();
  } catch (err) { $("l-msg").textContent = err.message; }
});
$("s-out").addEventListener("click", async () => {
  try { await post("/api/logout", {}); } catch (err) { /* signed out either way */ }
  session = {name: null, csrf: null, logins: true};
  showSession();
});
document.addEventListener("click", (e) => {
  const el = e.target;
  if (!(el instanceof HTMLElement)) return;
  if (el.classList.contains("ack-alarm")) {
    const a = alarms.find((x) => String(x.id) === el.dataset.alarm);
    ackTarget = {alarm: Number(el.dataset.alarm)};
    $("ack-what").textContent = a ? "Alarm " + a.kind + " on " + a.site + "/" + a.table +
      " (x" + a.count + ", last " + stamp(a.last) + ")" : "Alarm " + el.dataset.alarm;
  } else if (el.classList.contains("ack-table")) {
    ackTarget = {table: el.dataset.table};
    $("ack-what").textContent = "Divergence of " + el.dataset.table +
      ": its record stays what was verified first";
  } else return;
  $("ack-by").textContent = session.name || "";
  $("ack-msg").textContent = "";
  $("ack-note").value = "";
  $("ackdlg").showModal();
});
$("ack-cancel").addEventListener("click", () => $("ackdlg").close());
$("ackform").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    await post("/api/ack", Object.assign({note: $("ack-note").value}, ackTarget));
    $("ackdlg").close();
  } catch (err) { $("ack-msg").textContent = err.message; }
});
for (const id of ["f-table", "f-integrity", "f-kind"]) {
  $(id).addEventListener("input", () => { pageNo = 0; keepFilters(); schedule(); });
}
$("prev").addEventListener("click", () => { pageNo = Math.max(0, pageNo - 1); schedule(); });
$("next").addEventListener("click", () => { pageNo++; schedule(); });
(() => {
  const q = new URLSearchParams(location.search);
  $("f-table").value = q.get("table") || "";
  const k = q.get("kind");
  if (k) {
    const o = document.createElement("option");
    o.textContent = k;
    $("f-kind").appendChild(o);
    $("f-kind").value = k;
  }
  $("f-integrity").value = q.get("integrity") || "";
})();
setInterval(schedule, 5000);  // the "ago" of every row
loadSession().finally(connect);
</script>
</body></html>
"""

PAGE_SIZE: Final = 100
PAGE: Final = _HTML.replace("__PAGE_SIZE__", str(PAGE_SIZE)).encode("utf-8")

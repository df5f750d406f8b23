"""The scoreboard's two pages, baccarat and pai gow: each one HTML document with its CSS and
script inline (no CDN, no build step: the table is offline), drawn from the documents the event
stream sends (controller.scoreboard.content).

The pages are Python text rather than ``.html`` files because the program manifest
(controller/program/manifest.py) verifies every ``*.py`` file of the program and refuses any
other file under its packages: what the players see is verified like the rest of the program
(the Chinese fonts too: controller/scoreboard/fonts.py, served at ``/fonts/``).

Sized for a 1080p monitor read from 2 m: the header's figures at least 4 % of the screen height
(about 43 px; a 10-inch-wide character cell at 2 m subtends more than the 20/40 line of an eye
chart). The baccarat board holds a whole shoe at the ``standard`` density: a big road of 36
columns, a bead plate of 15 columns (90 coups) and the derived roads at half-size cells; the
``large`` density trades the whole shoe for cells about twice as big (the newest columns).
Every drawn cell carries ``data-road``, ``data-col``, ``data-row`` and ``data-color`` (and the
winner, ties and pairs where they apply), so a test reads the roads back out of the DOM.

A monitor's address may say which table it expects (``?table=ID``: a page of another table is
shown as wrong, never as this table's), its languages (``?lang=en,zh-Hant``) and its density
(``?density=large``); the profile's ``[scoreboard]`` gives the defaults (docs/scoreboard.md).

Each event updates only what changed: the cells a road gained or changed, the texts that
differ; nothing is measured during a render (the sizes are worked out when the window's size
changes). A page with no ``heartbeat`` event for :data:`SILENCE_S` dims all of itself under "NO
SIGNAL FROM THE TABLE"; a lost connection dims it under "CONNECTION LOST". After the profile's
idle minutes without a change at the table (between coups or rounds), the board gives way to
the idle screen (the table's name, its limits and the profile's texts, in turn, each in
another place against burn-in) until the next event.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from controller.config.profile import SCOREBOARD_DENSITIES, ScoreboardSettings
from controller.scoreboard.labels import LABELS, LANGUAGES

#: With no heartbeat event for this long (the server sends one about every second while the
#: table's loop runs), the page dims and says so.
SILENCE_S: Final = 5
#: The idle screen shows each of its slides this long, each in another place.
IDLE_SLIDE_S: Final = 6
#: The boards' ask (the next cell if banker / if player wins) alternates this often.
ASK_S: Final = 3


@dataclass(frozen=True)
class PageConfig:
    """What a page knows before its first event: the table it belongs to and the profile's
    ``[scoreboard]`` choices (a monitor's address may override languages and density)."""

    table: str = ""
    table_name: str = ""
    languages: tuple[str, ...] = ("en",)
    idle_minutes: float = 10.0
    idle_text: tuple[str, ...] = ()
    density: str = "standard"

    @classmethod
    def of(cls, settings: ScoreboardSettings, table_id: str) -> PageConfig:
        return cls(
            table=table_id,
            table_name=settings.table_name or table_id,
            languages=settings.languages,
            idle_minutes=settings.idle_minutes,
            idle_text=settings.idle_text,
            density=settings.density,
        )

    def script_json(self, game: str) -> str:
        """The page's configuration as JSON inside a ``<script type="application/json">``
        (``</`` escaped, so no text of the profile can end the element)."""
        data = {
            "game": game,
            "table": self.table,
            "table_name": self.table_name,
            "languages": list(self.languages),
            "lang_index": {lang: i for i, lang in enumerate(LANGUAGES)},
            "labels": {key: list(texts) for key, texts in LABELS.items()},
            "idle_after_ms": round(self.idle_minutes * 60_000),
            "idle_text": list(self.idle_text),
            "idle_slide_ms": IDLE_SLIDE_S * 1000,
            "ask_ms": ASK_S * 1000,
            "density": self.density,
            "densities": dict(SCOREBOARD_DENSITIES),
            "silence_ms": SILENCE_S * 1000,
        }
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return text.replace("</", "<\\/").replace("<!--", "<\\!--")


_HEAD: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,">
<title>%(title)s</title>
<style>
@font-face{font-family:"MonitorCJK TC";src:url(/fonts/zh-Hant.woff2) format("woff2");
font-weight:100 900;font-display:block}
@font-face{font-family:"MonitorCJK SC";src:url(/fonts/zh-Hans.woff2) format("woff2");
font-weight:100 900;font-display:block}
:root{--bg:#0d1b14;--panel:#f7f4ea;--grid:#c9c2ad;--ink:#f4efe0;--muted:#9fb3a8;
--red:#d0142c;--blue:#1650c8;--green:#13904a;--gold:#e0b84a;--c:50px}
*{box-sizing:border-box}
html,body{margin:0;height:100%%;background:var(--bg);color:var(--ink);overflow:hidden;
font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif}
:lang(zh-Hant){font-family:"DejaVu Sans","MonitorCJK TC",sans-serif}
:lang(zh-Hans){font-family:"DejaVu Sans","MonitorCJK SC",sans-serif}
body{display:flex;flex-direction:column;padding:1.2vh 1.2vw;gap:1vh}
.l1{margin-left:.45em}
#offline,#silent,#devfault{display:none;position:fixed;left:0;right:0;padding:1vh;
text-align:center;background:#8a0010;color:#fff;font-size:4vh;font-weight:bold;z-index:9}
#offline{bottom:0}
#devfault{top:0;font-size:3vh}
body.devfault #devfault{display:block}
#closed{display:none;position:fixed;left:0;right:0;top:30vh;padding:3vh;text-align:center;
background:#8a5a00;color:#fff;font-size:7vh;font-weight:bold;letter-spacing:.05em;z-index:8}
body.closed #closed{display:block}
#closed span{display:block;margin-left:0}
body.stale #closed,body.silent #closed{display:none}
#silent{top:40vh;padding:3vh;font-size:7vh;letter-spacing:.05em}
body.stale #offline,body.silent #silent{display:block}
body.stale #silent{display:none}
body.stale>header,body.stale>main,body.silent>header,body.silent>main,
body.stale>#idle,body.silent>#idle{opacity:.35}
.bar{display:flex;align-items:center;gap:1.6vw;font-weight:bold;letter-spacing:.03em;
white-space:nowrap;min-width:0}
.row1{font-size:5.2vh;line-height:6.4vh}
.row2{font-size:4.2vh;line-height:5.2vh}
.grow{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis}
.tag{color:var(--muted);font-size:.6em;font-weight:normal;margin-right:.35em}
.name{color:#fff}
.game{color:var(--muted);font-size:.6em;font-weight:normal}
.badge{padding:.1em .5em;border-radius:.3em;background:#21372b;font-size:.8em}
#last-hand{background:#8a5a00;color:#fff}
#last-hand:empty{display:none}
.limit{margin-right:1.2em;white-space:nowrap}
.limit .w{color:var(--muted);font-weight:normal;margin-right:.4em}
main{flex:1;min-height:0}
#idle,#wrong{display:none;position:fixed;inset:0;z-index:5}
body.idle>header,body.idle>main{display:none}
body.idle #idle{display:block}
#idle-box{position:absolute;left:0;top:0;max-width:80vw;text-align:center;
transition:transform .8s ease-in-out}
#idle-box .big{font-size:11vh;font-weight:bold;color:#fff}
#idle-box .mid{font-size:6vh;color:var(--gold);font-weight:bold;margin-top:2vh}
#idle-box .lim{font-size:5vh;line-height:7vh;font-weight:bold}
#idle-box .lim .w{color:var(--muted);font-weight:normal;margin-right:.5em}
body.wrong>header,body.wrong>main,body.wrong>#idle{visibility:hidden}
body.wrong #wrong{display:flex;flex-direction:column;align-items:center;justify-content:center;
background:#5a0008;color:#fff;text-align:center;gap:4vh;padding:4vw}
#wrong .title{font-size:12vh;font-weight:bold}
#wrong .detail{font-size:4.5vh}
#wrong .detail span{display:block}
</style>
<style>%(css)s</style>
<script id="config" type="application/json">%(config)s</script>
</head><body data-version="0" data-game="%(game)s" data-table="%(table)s">
%(body)s
<div id="idle"><div id="idle-box" data-slide=""></div></div>
<div id="wrong"><div class="title" data-label="wrong_table"></div>
<div class="detail" id="wrong-detail"></div></div>
<div id="offline" data-label="connection_lost"></div>
<div id="silent" data-label="no_signal"></div>
<div id="devfault" data-label="display_fault"></div>
<div id="closed"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const CONFIG = JSON.parse($("config").textContent);
const PARAMS = new URLSearchParams(location.search);
/* The monitor's own choices (its address) over the profile's. */
const LANGS = (() => {
  const asked = (PARAMS.get("lang") || "").split(",")
    .filter((l) => CONFIG.lang_index[l] !== undefined);
  return (asked.length ? asked : CONFIG.languages).slice(0, 2);
})();
const EXPECTED = PARAMS.get("table") || "";
const DENSITY = CONFIG.densities[PARAMS.get("density")] ? PARAMS.get("density") :
  CONFIG.density;
document.documentElement.lang = LANGS[0];
document.body.dataset.languages = LANGS.join(",");
document.body.dataset.density = DENSITY;

function say(key, lang, vars) {
  const texts = CONFIG.labels[key];
  let text = texts ? texts[CONFIG.lang_index[lang]] : String(key);
  for (const k in (vars || {})) {
    const v = vars[k];
    text = text.split("{" + k + "}").join(Array.isArray(v) ? say(v[0], lang, v[1]) : String(v));
  }
  return text;
}
/* A label in every language shown, one span each (its lang picks the Chinese font);
   written again only when it changed. A value named in ``shared`` (a name that is the same
   in every language) is said in the first language only. */
function put(el, key, vars, shared) {
  const sig = key ? key + JSON.stringify(vars || null) : "";
  if (el._sig === sig) { return; }
  el._sig = sig;
  el.textContent = "";
  if (!key) { return; }
  LANGS.forEach((lang, i) => {
    const s = document.createElement("span");
    s.lang = lang;
    s.className = "l" + i;
    let v = vars;
    if (i > 0 && shared) {
      v = Object.assign({}, vars);
      for (const k of shared) { v[k] = ""; }
    }
    s.textContent = say(key, lang, v).replace(/: *$/, "");
    el.appendChild(s);
  });
}
function setText(el, text) { if (el.textContent !== text) { el.textContent = text; } }
function money(cents) {
  const d = cents / 100;
  return "$" + d.toLocaleString("en-US", {minimumFractionDigits: Number.isInteger(d) ? 0 : 2});
}
for (const el of document.querySelectorAll("[data-label]")) { put(el, el.dataset.label); }

/* The limits sign: one entry per wager the table offers. */
function putLimits(el, limits, cls) {
  const sig = JSON.stringify(limits || []) + LANGS.join();
  if (el._sig === sig) { return; }
  el._sig = sig;
  el.textContent = "";
  for (const l of limits || []) {
    const item = document.createElement("div");
    item.className = cls;
    item.dataset.wager = l.wager;
    item.dataset.min = String(l.min);
    item.dataset.max = String(l.max);
    const w = document.createElement("span");
    w.className = "w";
    put(w, l.wager);
    item.appendChild(w);
    item.appendChild(document.createTextNode(money(l.min) + " - " + money(l.max)));
    el.appendChild(item);
  }
}

/* The page knows its table: a monitor that expects another one shows this page as wrong. */
function checkTable(shown) {
  const wrong = EXPECTED !== "" && shown !== EXPECTED;
  document.body.classList.toggle("wrong", wrong);
  document.body.dataset.shownTable = shown || "";
  if (wrong) { put($("wrong-detail"), "wrong_table_detail", {shown: shown || "?",
                                                             expected: EXPECTED}); }
}
checkTable(document.body.dataset.table);

/* Idle: after the profile's minutes without a change at the table (between coups or rounds),
   the table's name, its limits and the profile's texts in turn, each somewhere else on the
   screen (against burn-in); the next event brings the board back at once. */
const IDLE = {on: false, timer: null, slide: 0, doc: null};
const SPOTS = [[.08, .1], [.62, .55], [.2, .72], [.55, .12], [.12, .42], [.6, .8], [.32, .25],
               [.45, .6], [.25, .55]];
function idleSlides() {
  const out = [["name"]];
  if (IDLE.doc && (IDLE.doc.limits || []).length) { out.push(["limits"]); }
  for (const t of CONFIG.idle_text) { out.push(["text", t]); }
  return out;
}
function showSlide() {
  const box = $("idle-box");
  const slides = idleSlides();
  const [kind, value] = slides[IDLE.slide %% slides.length];
  box.textContent = "";
  box.dataset.slide = kind;
  const add = (cls, key, text) => {
    const d = document.createElement("div");
    d.className = cls;
    if (key) { put(d, key); } else { d.textContent = text; }
    box.appendChild(d);
    return d;
  };
  if (kind === "name") {
    add("big", null, (IDLE.doc && IDLE.doc.table_name) || CONFIG.table_name);
    add("mid", CONFIG.game);
  } else if (kind === "limits") {
    add("mid", "limits");
    const list = add("lim-list", null, "");
    putLimits(list, IDLE.doc.limits, "lim");
  } else {
    add("big", null, value);
  }
  const spot = SPOTS[IDLE.slide %% SPOTS.length];
  const free = [Math.max(0, innerWidth - box.offsetWidth), Math.max(0, innerHeight -
                box.offsetHeight)];
  box.style.transform = "translate(" + Math.round(spot[0] * free[0]) + "px," +
    Math.round(spot[1] * free[1]) + "px)";
  IDLE.slide += 1;
}
function enterIdle() {
  if (IDLE.on) { return; }
  IDLE.on = true;
  IDLE.slide = 0;
  document.body.classList.add("idle");
  showSlide();
  IDLE.timer = setInterval(showSlide, CONFIG.idle_slide_ms);
}
function leaveIdle() {
  if (!IDLE.on) { return; }
  IDLE.on = false;
  clearInterval(IDLE.timer);
  document.body.classList.remove("idle");
}

function connect(render, idleAllowed) {
  let src = null;
  /* Only the table's loop makes the server send a heartbeat: none for SILENCE_MS and the
     whole page dims under a notice (a frozen table must not look live). */
  let heard = performance.now();
  const silent = (on) => { document.body.classList.toggle("silent", on); };
  setInterval(() => { silent(performance.now() - heard > CONFIG.silence_ms); }, 250);
  const open = () => {
    src = new EventSource("/events");
    src.addEventListener("heartbeat", (ev) => {
      heard = performance.now();
      silent(false);
      const beat = JSON.parse(ev.data);
      if (CONFIG.idle_after_ms > 0 && beat.quiet_ms >= CONFIG.idle_after_ms && IDLE.doc &&
          idleAllowed(IDLE.doc)) {
        enterIdle();
      }
    });
    src.addEventListener("state", (ev) => {
      const doc = JSON.parse(ev.data);
      document.body.classList.remove("stale");
      if (IDLE.doc && doc.version !== IDLE.doc.version) { leaveIdle(); }
      IDLE.doc = doc;
      checkTable(doc.table);
      /* a table display not connected (the console's status names it) */
      document.body.classList.toggle("devfault", (doc.devices_down || []).length > 0);
      /* the host's disable (or the door): no new round until enabled, with the reason */
      document.body.classList.toggle("closed", !!doc.closed);
      put($("closed"), doc.closed ? "table_closed" : "", {reason: doc.closed || ""}, ["reason"]);
      render(doc);
      document.body.dataset.version = String(doc.version);
    });
    src.onerror = () => {
      document.body.classList.add("stale");
      if (src.readyState === EventSource.CLOSED) { setTimeout(open, 2000); }
    };
  };
  open();
  /* Keep the monitor lit where the browser offers a screen wake lock (secure context:
     a loopback page is one); the kiosk also turns blanking off (docs/scoreboard.md). */
  const lock = () => {
    if (navigator.wakeLock) { navigator.wakeLock.request("screen").catch(() => {}); }
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") { lock(); }
  });
  lock();
}
%(script)s
</script>
</body></html>
"""

_BACCARAT_CSS: Final = """
.dot{display:inline-block;min-width:1.05em;height:1.05em;border-radius:.53em;color:#fff;
font-size:.85em;line-height:1.05em;text-align:center;padding:0 .12em;margin-right:.2em;
vertical-align:.06em}
.dot.banker{background:var(--red)}.dot.player{background:var(--blue)}
.dot.tie{background:var(--green)}
.dot.bp,.dot.pp{background:#fff;font-size:.62em;line-height:1.3em;height:1.45em;
padding:0 .35em;border-radius:.75em}
.dot.bp{color:var(--red);border:.14em solid var(--red)}
.dot.pp{color:var(--blue);border:.14em solid var(--blue)}
.count{margin-right:.9em}
.pct{color:var(--muted);font-size:.72em;margin-left:.25em}
#announce{color:var(--gold);text-align:center}
#board{display:flex;flex-direction:column;justify-content:flex-start;gap:var(--gap,1vh)}
#lower{display:flex;gap:var(--gap,1vh)}
#left{display:flex;flex-direction:column;gap:var(--gap,1vh)}
#derived{display:flex;flex-direction:column;gap:0}
body.wide #board{display:grid;grid-template-columns:auto auto;grid-template-rows:auto auto;
justify-content:start;align-content:start;align-items:start}
body.wide #limits{font-size:calc(var(--c) * .36)}
body.wide #ask{font-size:calc(var(--c) * .26)}
body.wide #ask .askrow svg{width:calc(var(--c) * .3);height:calc(var(--c) * .3)}
body.wide #lower,body.wide #left{display:contents}
body.wide #big-panel{grid-column:2;grid-row:1}
body.wide #bead-panel{grid-column:1;grid-row:1}
body.wide #stats{grid-column:1;grid-row:2}
body.wide #derived{grid-column:2;grid-row:2;flex-direction:row;gap:var(--gap,1vh)}
.panel{background:var(--panel);border-radius:.6vh;overflow:hidden;display:flex;
flex-direction:column}
.panel>svg,.drow>svg{display:block;flex:none}
.label{color:#5f584a;font-size:calc(var(--label) * .62);height:var(--label);
line-height:var(--label);padding:0 .6vw;letter-spacing:.06em;border-bottom:.25vh solid #c9c2ad;
white-space:nowrap;overflow:hidden}
.drow{display:flex;flex-direction:row;background:var(--panel);border-bottom:.25vh solid #b9b29d}
.drow:last-child{border-bottom:0}
.dlabel{flex:none;color:#5f584a;font-size:min(calc(var(--label) * .6),calc(var(--c) * .34));
padding:.4vh .4vw;letter-spacing:.03em;border-right:.25vh solid #c9c2ad;overflow:hidden;
line-height:1.25;overflow-wrap:anywhere}
.dlabel span{display:block}
body.wide .drow{flex-direction:column;border-bottom:0;border-radius:.6vh;overflow:hidden}
body.wide .dlabel{border-right:0;border-bottom:.25vh solid #c9c2ad;height:var(--label);
line-height:var(--label);padding:0 .6vw;white-space:nowrap}
body.wide .dlabel span{display:inline}
#stats{display:flex;gap:1vw;align-items:stretch;color:var(--ink);overflow:hidden}
#limits{flex:1;display:flex;flex-wrap:wrap;align-content:flex-start;column-gap:1.2em;
font-size:calc(var(--c) * .5);line-height:1.45;font-weight:bold}
#limits .lim{white-space:nowrap}
#limits .lim .w{color:var(--muted);font-weight:normal;margin-right:.4em}
#ask{flex:none;display:flex;flex-direction:column;justify-content:center;gap:.4vh;
font-size:calc(var(--c) * .34);color:var(--muted)}
#ask .askrow{display:flex;align-items:center;gap:.4vw;padding:.2vh .4vw;border-radius:.5vh}
#ask .askrow.now{background:#21372b;color:#fff}
#ask .who{min-width:1.2em;font-weight:bold;font-size:1.2em}
#ask .askrow svg{width:calc(var(--c) * .5);height:calc(var(--c) * .5);flex:none}
body.ended #ask{visibility:hidden}
.ghost{animation:blink 1s steps(2,jump-none) infinite}
@keyframes blink{from{opacity:1}to{opacity:.15}}
"""

_BACCARAT_BODY: Final = """
<header id="head">
<div class="bar row1">
<span class="name" id="table-name"></span>
<span class="grow" id="announce" data-state=""></span>
<span><span class="tag" data-label="shoe"></span><span id="shoe">-</span></span>
<span><span class="tag" data-label="coup"></span><span id="coup">-</span></span>
</div>
<div class="bar row2">
<span><span class="tag" data-label="last_coup"></span><span id="last-totals">-</span></span>
<span class="badge" id="last-hand"></span>
<span class="grow"></span>
<span class="count"><span class="dot banker" data-letter="banker_letter"></span><span
 id="count-banker">0</span><span class="pct" id="pct-banker">0%</span></span>
<span class="count"><span class="dot player" data-letter="player_letter"></span><span
 id="count-player">0</span><span class="pct" id="pct-player">0%</span></span>
<span class="count"><span class="dot tie" data-letter="tie_letter"></span><span
 id="count-tie">0</span><span class="pct" id="pct-tie">0%</span></span>
<span class="count"><span class="dot bp" data-letter="banker_pair"></span><span
 id="count-banker_pair">0</span><span class="pct" id="pct-banker_pair">0%</span></span>
<span class="count"><span class="dot pp" data-letter="player_pair"></span><span
 id="count-player_pair">0</span><span class="pct" id="pct-player_pair">0%</span></span>
</div>
</header>
<main id="board">
<section class="panel" id="big-panel"><div class="label" data-label="big"></div>
<svg id="big" data-road-svg="big"></svg></section>
<div id="lower">
<div id="left">
<section class="panel" id="bead-panel"><div class="label" data-label="bead"></div>
<svg id="bead" data-road-svg="bead"></svg></section>
<section id="stats">
<div id="limits"></div>
<div id="ask">
<div class="askrow" data-ask="banker"><span class="who" style="color:var(--red)"
 data-letter="banker_letter"></span></div>
<div class="askrow" data-ask="player"><span class="who" style="color:var(--blue)"
 data-letter="player_letter"></span></div>
</div>
</section>
</div>
<div id="derived">
<section class="drow" id="eye-panel"><div class="dlabel" data-label="big_eye_boy"></div>
<svg id="big_eye_boy" data-road-svg="big_eye_boy"></svg></section>
<section class="drow" id="small-panel"><div class="dlabel" data-label="small_road"></div>
<svg id="small_road" data-road-svg="small_road"></svg></section>
<section class="drow" id="roach-panel"><div class="dlabel" data-label="cockroach_pig"></div>
<svg id="cockroach_pig" data-road-svg="cockroach_pig"></svg></section>
</div>
</div>
</main>
"""

_BACCARAT_JS: Final = """
const NS = "http://www.w3.org/2000/svg";
const U = 100;                      /* one cell, in SVG units */
const ROWS = 6;
const ROADS = ["bead", "big", "big_eye_boy", "small_road", "cockroach_pig"];
const DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"];
const COLOR = {banker: "#d0142c", player: "#1650c8", tie: "#13904a",
               red: "#d0142c", blue: "#1650c8"};
/* The bead's letter: the first language's (B / 莊). */
const LETTER = {banker: say("banker_letter", LANGS[0]), player: say("player_letter", LANGS[0]),
                tie: say("tie_letter", LANGS[0])};
const BEAD_COLS = {stacked: 15, wide: 8};
/* Big-road columns across: the density's at a shoe's start; a shoe whose roads need more
   (its cells would scroll off) makes the cells smaller, up to GROW_MAX columns, so the whole
   shoe stays on the screen. The large density scrolls instead (it shows the newest columns). */
const D0 = CONFIG.densities[DENSITY];
const GROW_MAX = 60;
let D = D0;
let shownShoe = null;
let last = null;
let askSide = "banker";
const R = {};                       /* per road: its layers, drawn cells, columns shown */

for (const el of document.querySelectorAll("[data-letter]")) {
  el.textContent = say(el.dataset.letter, LANGS[0]);
}

function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) { e.setAttribute(k, attrs[k]); }
  if (parent) { parent.appendChild(e); }
  return e;
}
function pairDots(g, c) {
  if (c.banker_pair) {
    svgEl("circle", {cx: 22, cy: 22, r: 13, fill: COLOR.red, stroke: "#fff",
                     "stroke-width": 4}, g);
  }
  if (c.player_pair) {
    svgEl("circle", {cx: 78, cy: 78, r: 13, fill: COLOR.blue, stroke: "#fff",
                     "stroke-width": 4}, g);
  }
}
const DRAW = {
  bead(g, c) {
    svgEl("circle", {cx: 50, cy: 50, r: 43, fill: COLOR[c.winner]}, g);
    if (c.natural) {
      svgEl("circle", {cx: 50, cy: 50, r: 46, fill: "none", stroke: "#e0b84a",
                       "stroke-width": 6}, g);
    }
    const t = svgEl("text", {x: 50, y: 67, "text-anchor": "middle", "font-size": 50,
                             "font-weight": "bold", fill: "#fff", lang: LANGS[0]}, g);
    t.textContent = LETTER[c.winner];
    pairDots(g, c);
  },
  big(g, c) {
    svgEl("circle", {cx: 50, cy: 50, r: 36, fill: "none", stroke: COLOR[c.winner],
                     "stroke-width": 13}, g);
    if (c.ties > 0) {
      svgEl("line", {x1: 16, y1: 84, x2: 84, y2: 16, stroke: COLOR.tie,
                     "stroke-width": 11, "stroke-linecap": "round"}, g);
    }
    if (c.ties > 1) {
      const t = svgEl("text", {x: 50, y: 64, "text-anchor": "middle", "font-size": 42,
                               "font-weight": "bold", fill: COLOR.tie}, g);
      t.textContent = String(c.ties);
    }
    pairDots(g, c);
  },
  big_eye_boy(g, c) {
    svgEl("circle", {cx: 50, cy: 50, r: 33, fill: "none", stroke: COLOR[c.color],
                     "stroke-width": 16}, g);
  },
  small_road(g, c) {
    svgEl("circle", {cx: 50, cy: 50, r: 40, fill: COLOR[c.color]}, g);
  },
  cockroach_pig(g, c) {
    svgEl("line", {x1: 18, y1: 82, x2: 82, y2: 18, stroke: COLOR[c.color],
                   "stroke-width": 16, "stroke-linecap": "round"}, g);
  },
};
function colorOf(c) {
  return c.color || (c.winner === "tie" ? "green" : c.winner === "banker" ? "red" : "blue");
}
function cellSig(c) {
  return colorOf(c) + (c.winner || "") + "|" + (c.ties || 0) + (c.banker_pair ? "b" : "") +
    (c.player_pair ? "p" : "") + (c.natural ? "n" : "");
}
function makeCell(name, c) {
  const g = svgEl("g", {transform: "translate(" + c.col * U + "," + c.row * U + ")",
    "data-road": name, "data-col": c.col, "data-row": c.row, "data-color": colorOf(c)});
  if (c.winner) { g.setAttribute("data-winner", c.winner); }
  if ("ties" in c) { g.setAttribute("data-ties", c.ties); }
  if ("banker_pair" in c) {
    g.setAttribute("data-banker-pair", c.banker_pair ? "1" : "0");
    g.setAttribute("data-player-pair", c.player_pair ? "1" : "0");
  }
  if ("natural" in c) { g.setAttribute("data-natural", c.natural ? "1" : "0"); }
  DRAW[name](g, c);
  return g;
}
/* Each road's SVG, once: a grid (one pattern-filled rectangle), its cells, the ask's cell. */
for (const name of ROADS) {
  const svg = $(name);
  const defs = svgEl("defs", {}, svg);
  const pat = svgEl("pattern", {id: "grid-" + name, width: U, height: U,
                                patternUnits: "userSpaceOnUse"}, defs);
  svgEl("path", {d: "M0 0H" + U + "M0 0V" + U, stroke: "#c9c2ad", "stroke-width": 6,
                 fill: "none"}, pat);
  const grid = svgEl("rect", {x: 0, y: 0, width: 400 * U, height: ROWS * U,
                              fill: "url(#grid-" + name + ")"}, svg);
  R[name] = {svg: svg, grid: grid, cells: svgEl("g", {}, svg), ghost: svgEl("g", {}, svg),
             drawn: new Map(), max: -1, need: -1, cols: 1, x0: -1, shoe: null};
}

/* Sizes: worked out only when the window's size changes, never during a render. */
function layout() {
  const H = innerHeight, W = innerWidth;
  const cs = getComputedStyle(document.body);
  const w = W - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const gap = Math.max(3, Math.round(H * 0.01));
  const L = Math.max(12, Math.round(H * 0.028));
  const h = H - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom) -
    $("head").getBoundingClientRect().height - gap;
  const wide = D0 < 24;
  const beadCols = wide ? BEAD_COLS.wide : BEAD_COLS.stacked;
  const body = document.body;
  body.classList.toggle("wide", wide);
  body.classList.toggle("stacked", !wide);
  body.style.setProperty("--gap", gap + "px");
  body.style.setProperty("--label", L + "px");
  let c, sizes;
  if (!wide) {
    /* the whole shoe: the big road across, the bead plate and the derived roads under it */
    c = Math.floor(Math.min(w / D, (h - 2 * L - gap) / 15));
    const beadW = beadCols * c, dlabel = 3 * c;
    const dW = w - beadW - gap;
    sizes = {big: [w, 6 * c], bead: [beadW, 6 * c], derived: [dW - dlabel, 3 * c]};
    $("stats").style.height = (3 * c - L) + "px";
    $("stats").style.width = beadW + "px";
    for (const n of DERIVED) {
      $(n).parentNode.querySelector(".dlabel").style.width = dlabel + "px";
      $(n).parentNode.style.height = 3 * c + "px";
    }
  } else {
    /* larger cells: the bead plate beside the big road, the derived roads side by side */
    c = Math.floor(Math.min((w - gap) / (D + beadCols), (h - 2 * L - gap) / 9));
    const beadW = beadCols * c, rest = w - beadW - gap;
    const dW = Math.floor((rest - 2 * gap) / 3);
    sizes = {big: [rest, 6 * c], bead: [beadW, 6 * c], derived: [dW, 3 * c]};
    $("stats").style.height = (3 * c + L) + "px";
    $("stats").style.width = beadW + "px";
    for (const n of DERIVED) {
      const label = $(n).parentNode.querySelector(".dlabel");
      label.style.width = "";
      $(n).parentNode.style.height = "";
    }
  }
  body.style.setProperty("--c", c + "px");
  for (const name of ROADS) {
    const [pw, ph] = sizes[DERIVED.includes(name) ? "derived" : name];
    const cell = DERIVED.includes(name) ? c / 2 : c;
    const r = R[name];
    r.svg.setAttribute("width", pw);
    r.svg.setAttribute("height", ph);
    r.cols = Math.max(1, Math.floor(pw / cell + 1e-6));
    r.x0 = -1;
    scroll(name);
  }
  body.dataset.bigCols = String(R.big.cols);
  body.dataset.beadCols = String(R.bead.cols);
  body.dataset.derivedCols = String(R.big_eye_boy.cols);
}
/* A road that needs more columns than it shows: smaller cells (rare: a few times in a long
   shoe), so every coup's cell stays on the screen. */
function fit() {
  if (D0 < 24) { return; }
  const over = () => ROADS.some((n) => n !== "bead" &&
                                Math.max(R[n].max, R[n].need) + 1 > R[n].cols);
  while (D < GROW_MAX && over()) {
    D = Math.min(GROW_MAX, D + 4);
    layout();
  }
}
/* The newest columns stay in view (and the ask's cell): whole columns scroll off the left. */
function scroll(name) {
  const r = R[name];
  const x0 = Math.max(0, Math.max(r.max, r.need) + 1 - r.cols) * U;
  if (x0 === r.x0) { return; }
  r.x0 = x0;
  r.svg.setAttribute("viewBox", x0 + " 0 " + r.cols * U + " " + ROWS * U);
  r.svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
}
/* Only what changed: a cell drawn again only when its place is new or it changed (a tie
   counted on it); cells a road no longer has (a new shoe) removed. */
function drawRoad(name, cells, shoe) {
  const r = R[name];
  if (r.shoe !== shoe || cells.length < r.drawn.size) {
    r.cells.textContent = "";
    r.drawn.clear();
    r.shoe = shoe;
  }
  let max = -1;
  for (const c of cells) {
    const key = c.col * 8 + c.row;
    if (c.col > max) { max = c.col; }
    const sig = cellSig(c);
    const had = r.drawn.get(key);
    if (had && had.sig === sig) { continue; }
    const g = makeCell(name, c);
    if (had) { r.cells.replaceChild(g, had.g); } else { r.cells.appendChild(g); }
    r.drawn.set(key, {g: g, sig: sig});
  }
  r.max = max;
}
/* The ask in the roads themselves: the cell each road would draw if the next coup went to
   askSide, blinking; banker and player in turn. */
function drawAsk() {
  const on = Boolean(last && last.ask && last.predict);
  document.body.classList.toggle("ended", !on);
  for (const name of ROADS) {
    const r = R[name];
    r.ghost.textContent = "";
    r.need = -1;
    if (on) {
      for (const side of ["banker", "player"]) {
        const p = last.predict[side][name];
        if (p) { r.need = Math.max(r.need, p.col); }
      }
      const p = last.predict[askSide][name];
      if (p) {
        const g = makeCell(name, p);
        for (const a of ["data-road", "data-col", "data-row", "data-color"]) {
          g.removeAttribute(a);
        }
        g.setAttribute("class", "ghost");
        g.dataset.askRoad = name;
        g.dataset.askSide = askSide;
        g.dataset.askCol = p.col;
        g.dataset.askRow = p.row;
        r.ghost.appendChild(g);
      }
    }
    scroll(name);
  }
  for (const side of ["banker", "player"]) {
    const row = document.querySelector('[data-ask="' + side + '"]');
    row.classList.toggle("now", on && side === askSide);
    const sig = on ? JSON.stringify(last.predict[side]) : "";
    if (row._sig === sig) { continue; }
    row._sig = sig;
    for (const old of row.querySelectorAll("svg")) { row.removeChild(old); }
    for (const name of DERIVED) {
      const p = on ? last.predict[side][name] : null;
      const svg = svgEl("svg", {viewBox: "0 0 100 100", "data-ask-road": name,
                                "data-color": p ? p.color : ""}, row);
      if (p) { DRAW[name](svg, {color: p.color}); }
    }
  }
}
setInterval(() => {
  askSide = askSide === "banker" ? "player" : "banker";
  if (last && last.ask && !IDLE.on) { drawAsk(); }
}, CONFIG.ask_ms);

function render(doc) {
  last = doc;
  setText($("table-name"), doc.table_name || CONFIG.table_name);
  setText($("shoe"), doc.shoe ? String(doc.shoe) : "-");
  setText($("coup"), doc.coup ? String(doc.coup) : "-");
  const a = $("announce");
  a.dataset.state = doc.state || "";
  put(a, doc.error ? "scoreboard_error" : (doc.called || {}).key, (doc.called || {}).vars);
  const t = doc.last_totals || [];
  setText($("last-totals"), t.length === 2 ? "P " + t[0] + " - B " + t[1] : "-");
  put($("last-hand"), doc.last_hand && doc.state !== "shuffle" ? "last_hand" : "");
  const counts = doc.counts || {}, pct = doc.percent || {};
  for (const k of ["banker", "player", "tie", "banker_pair", "player_pair"]) {
    setText($("count-" + k), String(counts[k] || 0));
    setText($("pct-" + k), String(pct[k] || 0) + "%");
  }
  putLimits($("limits"), doc.limits, "lim");
  const roads = doc.roads || {};
  if (doc.shoe !== shownShoe) {       /* a new shoe: the density's own cells again */
    shownShoe = doc.shoe;
    if (D !== D0) { D = D0; layout(); }
  }
  for (const name of ROADS) { drawRoad(name, roads[name] || [], doc.shoe); }
  drawAsk();
  fit();
}
/* Between coups, or with no shoe: the states the idle screen may replace the board in. */
function idleAllowed(doc) {
  return ["shuffle", "betting", "offering", "passing"].includes(doc.state);
}
layout();
window.addEventListener("resize", () => { layout(); if (last) { drawAsk(); } });
connect(render, idleAllowed);
"""

_PAIGOW_CSS: Final = """
main{display:flex;flex-direction:column;align-items:center;justify-content:center;gap:2vh}
#box{width:56vh;height:56vh;border-radius:3vh;background:#050807;border:1vh solid #2a4536;
display:flex;align-items:center;justify-content:center;flex:none}
#number{font-size:48vh;line-height:1;font-weight:bold;color:#ff3b2f;
text-shadow:0 0 3vh rgba(255,59,47,.55);font-family:"DejaVu Sans Mono",monospace}
#number.word{font-size:13vh;color:var(--gold);text-shadow:none;letter-spacing:.1em;
font-family:inherit}
#start{font-size:5vh;font-weight:bold;min-height:6vh;text-align:center;line-height:1.2}
#start span{display:block}
#detail{font-size:4.4vh;color:var(--muted);min-height:5vh;text-align:center}
#style{font-size:4.4vh;min-height:5vh}
#limits .lim{display:inline-block;margin-left:1em}
#limits .lim .w{color:var(--muted);font-weight:normal;margin-right:.4em}
"""

_PAIGOW_BODY: Final = """
<header id="head">
<div class="bar row1">
<span class="name" id="table-name"></span>
<span class="grow"></span>
<span class="badge" id="mode" data-mode="">-</span>
<span><span class="tag" data-label="round"></span><span id="round">-</span></span>
</div>
<div class="bar row2">
<span><span class="tag" data-label="bank"></span><span id="bank" data-bank-seat=""></span></span>
<span class="grow"></span>
<span id="limits"></span>
</div>
</header>
<main>
<div id="box"><span id="number" data-number=""></span></div>
<div id="start" data-seat="" data-position=""></div>
<div id="detail"></div>
<div id="style" data-style=""></div>
</main>
"""

_PAIGOW_JS: Final = """
function words(s) { return (s || "").replace(/_/g, " ").toUpperCase(); }
function render(doc) {
  setText($("table-name"), doc.table_name || CONFIG.table_name);
  setText($("round"), doc.round ? String(doc.round) : "-");
  const dice = Boolean(doc.dice_mode);
  const mode = $("mode");
  mode.dataset.mode = dice ? "dice" : "rng";
  put(mode, doc.start_mode === "dice (RNG fault)" ? "rng_fault" : dice ? "dice" : "rng");
  const bank = $("bank");
  const banker = doc.bank && doc.bank !== "house" && doc.bank_seat;
  bank.dataset.bankSeat = banker ? String(doc.bank_seat) : "";
  put(bank, banker ? "seat" : "the_dealer", banker ? {n: doc.bank_seat} : null);
  putLimits($("limits"), doc.limits, "lim");
  const n = $("number");
  n.dataset.number = doc.showing && doc.number ? String(doc.number) : "";
  if (doc.error) {
    n.className = "word"; put(n, "error");
  } else if (doc.test_mode) {
    n.className = "word"; put(n, "test");
  } else if (doc.showing && doc.number) {
    n.className = ""; put(n, ""); setText(n, String(doc.number));
  } else if (dice && ["betting", "bank_style", "no_more_bets"].includes(doc.state)) {
    n.className = "word"; put(n, "dice");
  } else {
    n.className = ""; put(n, ""); setText(n, "");   /* blank: the deal is complete, (e)(6) */
  }
  const s = $("start");
  s.dataset.seat = doc.seat ? String(doc.seat) : "";
  s.dataset.position = doc.start_position ? String(doc.start_position) : "";
  put(s, (doc.start || {}).key, (doc.start || {}).vars);
  const d = $("detail");
  if (doc.showing && doc.source === "dice" && doc.dice) {
    put(d, "");
    setText(d, "DICE " + doc.dice.join(" + ") +
      (doc.dice.length > 1 ? " = " + doc.dice_total : ""));
  } else if (doc.showing) {
    put(d, ""); setText(d, "");
  } else {
    put(d, (doc.called || {}).key);
  }
  const st = $("style");
  st.dataset.style = doc.style || "";
  const styled = doc.showing || ["bank_style", "no_more_bets"].includes(doc.state);
  put(st, styled ? "delivery" : "", {style: words(doc.style)}, ["style"]);
}
function idleAllowed(doc) {
  return ["inspection", "washing", "betting"].includes(doc.state);
}
connect(render, idleAllowed);
"""

_PAGES: Final = {
    "baccarat": ("Baccarat scoreboard", _BACCARAT_CSS, _BACCARAT_BODY, _BACCARAT_JS),
    "paigow": ("Pai gow", _PAIGOW_CSS, _PAIGOW_BODY, _PAIGOW_JS),
    # the starting-position table (docs/startpos-table.md) shows its number on the same page
    "startpos": ("Starting position", _PAIGOW_CSS, _PAIGOW_BODY, _PAIGOW_JS),
}


def page(game: str, config: PageConfig | None = None) -> bytes:
    """The page of ``game``'s table, as served (UTF-8), knowing ``config`` before its first
    event."""
    try:
        title, css, body, script = _PAGES[game]
    except KeyError:
        raise ValueError(f"no scoreboard page for game {game!r}") from None
    config = config or PageConfig()
    return (
        _HEAD
        % {
            "title": title,
            "css": css,
            "body": body,
            "script": script,
            "game": game,
            "table": _attribute(config.table),
            "config": config.script_json(game),
        }
    ).encode("utf-8")


def _attribute(text: str) -> str:
    """Text safe inside a double-quoted HTML attribute."""
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )

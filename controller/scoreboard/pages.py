"""The scoreboard's two pages, baccarat and pai gow: each one HTML document with its CSS and
script inline (no CDN, no build step: the table is offline), drawn from the documents the event
stream sends (controller.scoreboard.content).

The pages are Python text rather than ``.html`` files because the program manifest
(controller/program/manifest.py) verifies every ``*.py`` file of the program and refuses any
other file under its packages: what the players see is verified like the rest of the program.

Sized for a 1080p monitor read from 2 m: every figure at least 4 % of the screen height (about
43 px; a 10-inch-wide character cell at 2 m subtends more than the 20/40 line of an eye chart).
Every drawn cell carries ``data-road``, ``data-col``, ``data-row`` and ``data-color`` (and the
winner, ties and pairs where they apply), so a test reads the roads back out of the DOM.

A page with no ``heartbeat`` event for :data:`SILENCE_S` (the server sends them only while the
table's loop publishes) dims all of itself under "NO SIGNAL FROM THE TABLE"; a lost connection
dims it under "CONNECTION LOST". Either way a frozen board is never taken for a live one.
"""

from __future__ import annotations

from typing import Final

#: With no heartbeat event for this long (the server sends one about every second while the
#: table's loop runs), the page dims and says so.
SILENCE_S: Final = 5

_HEAD: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,">
<title>%(title)s</title>
<style>
:root{--bg:#0d1b14;--panel:#f7f4ea;--grid:#c9c2ad;--ink:#f4efe0;--muted:#9fb3a8;
--red:#d0142c;--blue:#1650c8;--green:#13904a;--gold:#e0b84a}
*{box-sizing:border-box}
html,body{margin:0;height:100%%;background:var(--bg);color:var(--ink);overflow:hidden;
font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif}
body{display:flex;flex-direction:column;padding:1.2vh 1.2vw;gap:1.2vh}
#offline,#silent{display:none;position:fixed;left:0;right:0;padding:1vh;text-align:center;
background:#8a0010;color:#fff;font-size:4vh;font-weight:bold;z-index:9}
#offline{bottom:0}
#silent{top:40vh;padding:3vh;font-size:7vh;letter-spacing:.05em}
body.stale #offline,body.silent #silent{display:block}
body.stale #silent{display:none}
body.stale>header,body.stale>main,body.silent>header,body.silent>main{opacity:.35}
.bar{display:flex;align-items:center;gap:2vw;font-size:4.4vh;font-weight:bold;
letter-spacing:.05em}
.bar .grow{flex:1}
.tag{color:var(--muted);font-size:3vh;font-weight:normal;margin-right:.4vw}
.badge{padding:.3vh 1.2vw;border-radius:1vh;background:#21372b;font-size:3.6vh}
main{flex:1;min-height:0;display:flex;flex-direction:column;gap:1.2vh}
</style>
<style>%(css)s</style>
</head><body data-version="0" data-game="%(game)s">
%(body)s
<div id="offline">CONNECTION LOST - RECONNECTING</div>
<div id="silent">NO SIGNAL FROM THE TABLE</div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const SILENCE_MS = %(silence_ms)d;
function connect(render) {
  let src = null;
  /* Only the table's loop makes the server send a heartbeat: none for SILENCE_MS and the
     whole page dims under a notice (a frozen table must not look live). */
  let heard = performance.now();
  const silent = (on) => { document.body.classList.toggle("silent", on); };
  setInterval(() => { silent(performance.now() - heard > SILENCE_MS); }, 250);
  const open = () => {
    src = new EventSource("/events");
    src.addEventListener("heartbeat", () => { heard = performance.now(); silent(false); });
    src.addEventListener("state", (ev) => {
      const doc = JSON.parse(ev.data);
      document.body.classList.remove("stale");
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
.counts{display:flex;gap:1.4vw}
.counts{gap:1.1vw}
.count{display:flex;align-items:center;gap:.5vw;font-size:4.8vh}
.dot{display:inline-block;width:4.4vh;height:4.4vh;border-radius:50%;color:#fff;
font-size:2.8vh;line-height:4.4vh;text-align:center}
.dot.banker{background:var(--red)}.dot.player{background:var(--blue)}
.dot.tie{background:var(--green)}
.dot.bp,.dot.pp{width:auto;border-radius:2.3vh;padding:0 .8vh;background:#fff;
font-weight:bold;font-size:2.6vh}
.dot.bp{color:var(--red);border:.5vh solid var(--red)}
.dot.pp{color:var(--blue);border:.5vh solid var(--blue)}
#announce{font-size:4.6vh;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;
min-width:0;text-align:center;color:var(--gold)}
.top{display:flex;gap:1.2vw;flex:5;min-height:0}
.bottom{display:flex;gap:1.2vw;flex:3.2;min-height:0}
.panel{background:var(--panel);border-radius:.8vh;min-width:0;overflow:hidden;
display:flex;flex-direction:column}
.panel>svg{flex:1;min-height:0;width:100%;display:block;overflow:visible}
.label{color:#7d7562;font-size:2.2vh;line-height:3vh;padding:0 .6vw;letter-spacing:.08em;
border-bottom:.3vh solid #c9c2ad}
#bead-panel{flex:1.25}#big-panel{flex:2.75}
#eye-panel,#small-panel,#roach-panel{flex:1}
#ask{flex:.7;display:flex;flex-direction:column;justify-content:space-evenly;
padding:1vh 1vw;font-size:3.4vh;color:#3a3428}
.askrow{display:flex;align-items:center;gap:.6vw}
.askrow .who{flex:1;font-weight:bold}
.askrow svg{width:5vh;height:5vh;flex:none}
.shoe{font-size:5vh}
.asktitle{font-size:2.4vh;color:#7d7562;letter-spacing:.08em}
"""

_BACCARAT_BODY: Final = """
<header class="bar">
<span class="shoe"><span class="tag">SHOE</span><span id="shoe">-</span></span>
<span class="shoe"><span class="tag">COUP</span><span id="coup">-</span></span>
<span class="grow" id="announce" data-state=""></span>
<span class="counts">
<span class="count"><span class="dot banker">B</span><span id="count-banker">0</span></span>
<span class="count"><span class="dot player">P</span><span id="count-player">0</span></span>
<span class="count"><span class="dot tie">T</span><span id="count-tie">0</span></span>
<span class="count"><span class="dot bp">B PAIR</span><span id="count-banker_pair">0</span>
</span>
<span class="count"><span class="dot pp">P PAIR</span><span id="count-player_pair">0</span>
</span>
</span>
</header>
<main>
<div class="top">
<div class="panel" id="bead-panel"><span class="label">BEAD PLATE</span>
<svg id="bead" data-road-svg="bead"></svg></div>
<div class="panel" id="big-panel"><span class="label">BIG ROAD</span>
<svg id="big" data-road-svg="big"></svg></div>
</div>
<div class="bottom">
<div class="panel" id="eye-panel"><span class="label">BIG EYE BOY</span>
<svg id="big_eye_boy" data-road-svg="big_eye_boy"></svg></div>
<div class="panel" id="small-panel"><span class="label">SMALL ROAD</span>
<svg id="small_road" data-road-svg="small_road"></svg></div>
<div class="panel" id="roach-panel"><span class="label">COCKROACH PIG</span>
<svg id="cockroach_pig" data-road-svg="cockroach_pig"></svg></div>
<div class="panel" id="ask">
<div class="asktitle">NEXT IF</div>
<div class="askrow" data-ask="banker"><span class="who" style="color:var(--red)">B</span>
</div>
<div class="askrow" data-ask="player"><span class="who" style="color:var(--blue)">P</span>
</div>
</div>
</div>
</main>
"""

_BACCARAT_JS: Final = """
const NS = "http://www.w3.org/2000/svg";
const U = 100;                      /* one cell, in SVG units */
const ROWS = 6;
const COLOR = {banker: "#d0142c", player: "#1650c8", tie: "#13904a",
               red: "#d0142c", blue: "#1650c8"};
const LETTER = {banker: "B", player: "P", tie: "T"};
const STATE_TEXT = {shuffle: "SHUFFLING", burn: "BURN", offering: "SHOE OFFERED",
  passing: "SHOE PASSES", betting: "PLACE YOUR BETS", dealing: "NO MORE BETS",
  player_third: "NO MORE BETS", banker_third: "NO MORE BETS", halted: "GAME HALTED"};
let last = null;

function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) { e.setAttribute(k, attrs[k]); }
  if (parent) { parent.appendChild(e); }
  return e;
}
function visibleCols(svg) {
  const r = svg.getBoundingClientRect();
  return Math.max(1, Math.floor(r.width / Math.max(1, r.height / ROWS)));
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
                             "font-weight": "bold", fill: "#fff"}, g);
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
function drawRoad(name, cells) {
  const svg = $(name);
  while (svg.firstChild) { svg.removeChild(svg.firstChild); }
  const cols = visibleCols(svg);
  let maxCol = -1;
  for (const c of cells) { maxCol = Math.max(maxCol, c.col); }
  const x0 = Math.max(0, maxCol + 1 - cols) * U;
  svg.setAttribute("viewBox", x0 + " 0 " + cols * U + " " + ROWS * U);
  svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
  /* The grid runs on past the last whole column: the panel clips it at its edge. */
  const grid = svgEl("g", {stroke: "#c9c2ad", "stroke-width": 3}, svg);
  const x1 = x0 + (cols + 2) * U;
  for (let x = x0; x <= x1; x += U) {
    svgEl("line", {x1: x, y1: 0, x2: x, y2: ROWS * U}, grid);
  }
  for (let y = 0; y <= ROWS * U; y += U) {
    svgEl("line", {x1: x0, y1: y, x2: x1, y2: y}, grid);
  }
  for (const c of cells) {
    const color = c.color || (c.winner === "tie" ? "green" :
                              c.winner === "banker" ? "red" : "blue");
    const g = svgEl("g", {transform: "translate(" + c.col * U + "," + c.row * U + ")",
      "data-road": name, "data-col": c.col, "data-row": c.row, "data-color": color}, svg);
    if (c.winner) { g.setAttribute("data-winner", c.winner); }
    if ("ties" in c) { g.setAttribute("data-ties", c.ties); }
    if ("banker_pair" in c) {
      g.setAttribute("data-banker-pair", c.banker_pair ? "1" : "0");
      g.setAttribute("data-player-pair", c.player_pair ? "1" : "0");
    }
    if ("natural" in c) { g.setAttribute("data-natural", c.natural ? "1" : "0"); }
    DRAW[name](g, c);
  }
}
function drawAsk(predict) {
  for (const side of ["banker", "player"]) {
    const row = document.querySelector('[data-ask="' + side + '"]');
    for (const old of row.querySelectorAll("svg")) { row.removeChild(old); }
    for (const name of ["big_eye_boy", "small_road", "cockroach_pig"]) {
      const color = predict && predict[side] ? predict[side][name] : null;
      const svg = svgEl("svg", {viewBox: "0 0 100 100", "data-ask-road": name,
                                "data-color": color || ""}, row);
      if (color) { DRAW[name](svg, {color: color}); }
    }
  }
}
function render(doc) {
  last = doc;
  $("shoe").textContent = doc.shoe ? String(doc.shoe) : "-";
  $("coup").textContent = doc.coup ? String(doc.coup) : "-";
  const a = $("announce");
  a.dataset.state = doc.state || "";
  a.textContent = doc.error ? "SCOREBOARD ERROR" :
    (doc.state === "settling" && doc.announce) ? doc.announce :
    (STATE_TEXT[doc.state] || "");
  const counts = doc.counts || {};
  for (const k of ["banker", "player", "tie", "banker_pair", "player_pair"]) {
    $("count-" + k).textContent = String(counts[k] || 0);
  }
  const roads = doc.roads || {};
  for (const name of ["bead", "big", "big_eye_boy", "small_road", "cockroach_pig"]) {
    drawRoad(name, roads[name] || []);
  }
  drawAsk(doc.predict);
}
window.addEventListener("resize", () => { if (last) { render(last); } });
connect(render);
"""

_PAIGOW_CSS: Final = """
main{align-items:center;justify-content:center;gap:2vh}
#box{width:56vh;height:60vh;border-radius:3vh;background:#050807;border:1vh solid #2a4536;
display:flex;align-items:center;justify-content:center}
#number{font-size:52vh;line-height:1;font-weight:bold;color:#ff3b2f;
text-shadow:0 0 3vh rgba(255,59,47,.55);font-family:"DejaVu Sans Mono",monospace}
#number.word{font-size:15vh;color:var(--gold);text-shadow:none;letter-spacing:.1em}
#start{font-size:8vh;font-weight:bold;min-height:9vh}
#detail{font-size:4.4vh;color:var(--muted);min-height:5vh;text-align:center}
#style{font-size:4.4vh;min-height:5vh}
"""

_PAIGOW_BODY: Final = """
<header class="bar">
<span>PAI GOW</span>
<span class="grow"></span>
<span class="badge" id="mode" data-mode="">-</span>
<span><span class="tag">ROUND</span><span id="round">-</span></span>
</header>
<main>
<div id="box"><span id="number" data-number=""></span></div>
<div id="start" data-seat="" data-position=""></div>
<div id="detail"></div>
<div id="style" data-style=""></div>
</main>
"""

_PAIGOW_JS: Final = """
const STATE_TEXT = {inspection: "TILES FOR INSPECTION", washing: "WASHING THE TILES",
  betting: "PLACE YOUR BETS", bank_style: "NO MORE BETS", no_more_bets: "NO MORE BETS",
  setting_hands: "PLAYERS SET THEIR HANDS", dealer_hands: "DEALER SETS THE HANDS"};
function words(s) { return (s || "").replace(/_/g, " ").toUpperCase(); }
function render(doc) {
  $("round").textContent = doc.round ? String(doc.round) : "-";
  const dice = Boolean(doc.dice_mode);
  const mode = $("mode");
  mode.dataset.mode = dice ? "dice" : "rng";
  mode.textContent = doc.start_mode === "dice (RNG fault)" ? "DICE (RNG FAULT)" :
    dice ? "DICE" : "RNG";
  const n = $("number");
  n.className = "";
  n.dataset.number = doc.showing && doc.number ? String(doc.number) : "";
  if (doc.error) {
    n.className = "word"; n.textContent = "ERROR";
  } else if (doc.test_mode) {
    n.className = "word"; n.textContent = "TEST";
  } else if (doc.showing && doc.number) {
    n.textContent = String(doc.number);
  } else if (dice && ["betting", "bank_style", "no_more_bets"].includes(doc.state)) {
    n.className = "word"; n.textContent = "DICE";
  } else {
    n.textContent = "";            /* blank: the deal is complete, 5324.50(e)(6) */
  }
  const s = $("start");
  s.dataset.seat = doc.seat ? String(doc.seat) : "";
  s.dataset.position = doc.start_position ? String(doc.start_position) : "";
  s.textContent = doc.showing && doc.position_name ?
    "FIRST STACK: " + doc.position_name.toUpperCase() : "";
  let detail = doc.showing ? "POSITION " + doc.start_position + " COUNTED FROM " +
    (doc.bank === "house" ? "THE DEALER" : "THE BANK") : (STATE_TEXT[doc.state] || "");
  if (doc.showing && doc.source === "dice" && doc.dice) {
    detail = "DICE " + doc.dice.join(" + ") +
      (doc.dice.length > 1 ? " = " + doc.dice_total : "") + " \u00b7 " + detail;
  }
  $("detail").textContent = detail;
  const st = $("style");
  st.dataset.style = doc.style || "";
  st.textContent = doc.showing || ["bank_style", "no_more_bets"].includes(doc.state) ?
    "DELIVERY: " + words(doc.style) : "";
}
connect(render);
"""

_PAGES: Final = {
    "baccarat": ("Baccarat scoreboard", _BACCARAT_CSS, _BACCARAT_BODY, _BACCARAT_JS),
    "paigow": ("Pai gow", _PAIGOW_CSS, _PAIGOW_BODY, _PAIGOW_JS),
}


def page(game: str) -> bytes:
    """The page of ``game``'s table, as served (UTF-8)."""
    try:
        title, css, body, script = _PAGES[game]
    except KeyError:
        raise ValueError(f"no scoreboard page for game {game!r}") from None
    return (
        _HEAD
        % {
            "title": title,
            "css": css,
            "body": body,
            "script": script,
            "game": game,
            "silence_ms": SILENCE_S * 1000,
        }
    ).encode("utf-8")

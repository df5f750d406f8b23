"""The monitor's words: Chinese labels drawn with the font the release ships (this machine has
no Chinese font of its own, so without it every character would be the same empty box), and
pai gow's start said in words that cannot be misread, the console's draw reply in capitals.
Headless Chromium against the real controller on sim-paigow."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.scoreboard.fonts import COVERED
from controller.scoreboard.labels import LABELS, is_cjk
from controller.tables.paigow.definition import start_words
from tests.hil.rig import Rig

from .conftest import Page, scoreboard_url

#: Each character drawn alone on a canvas, once in the shipped font's family and once in a
#: family the page does not have (the browser's fallback); the pixels of each, as a hash.
GLYPHS = """
const [family, chars, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const canvas = document.createElement("canvas");
canvas.width = 64; canvas.height = 64;
const ctx = canvas.getContext("2d", {willReadFrequently: true});
const draw = (font, ch) => {
  ctx.clearRect(0, 0, 64, 64);
  ctx.font = font; ctx.fillStyle = "#000"; ctx.textBaseline = "top";
  ctx.fillText(ch, 4, 4);
  const px = ctx.getImageData(0, 0, 64, 64).data;
  let h = 0, ink = 0;
  for (let i = 3; i < px.length; i += 4) { h = (h * 31 + px[i]) >>> 0; ink += px[i] > 0; }
  return [h, ink, ctx.measureText(ch).width];
};
document.fonts.load("48px '" + family + "'", chars).then(() => {
  const out = {};
  for (const ch of chars) {
    out[ch] = {shipped: draw("48px '" + family + "'", ch), fallback: draw("48px 'NoSuchFont'", ch)};
  }
  done({glyphs: out, loaded: document.fonts.check("48px '" + family + "'", chars)});
}).catch((e) => done({glyphs: {}, loaded: false, error: String(e)}));
"""


def test_chinese_labels_are_drawn_with_the_shipped_font_not_boxes(
    table: Callable[..., Rig], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    rig = table("paigow", 'scoreboard.languages = ["zh-Hant", "en"]\n')
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    assert page.js("return document.documentElement.lang") == "zh-Hant"
    for family, column in (("MonitorCJK TC", 1), ("MonitorCJK SC", 2)):
        chars = "".join(sorted({ch for t in LABELS.values() for ch in t[column] if is_cjk(ch)}))
        assert set(chars) <= set(COVERED)
        got = page.driver.execute_async_script(GLYPHS, family, chars)
        assert got["loaded"], (family, got.get("error"))
        glyphs = got["glyphs"]
        fallback = {tuple(g["fallback"][:2]) for g in glyphs.values()}
        # This machine has no Chinese font: without the shipped one, every character is the
        # same box (the test would not tell a box from a glyph otherwise).
        assert len(fallback) <= 2, f"a Chinese font is installed here: {len(fallback)} shapes"
        for ch, g in glyphs.items():
            assert g["shipped"][:2] != g["fallback"][:2], f"{ch} ({family}) is a box"
            assert g["shipped"][1] > 0, f"{ch} ({family}) drew nothing"
            assert abs(g["shipped"][2] - 48) < 0.5, f"{ch} ({family}) is not full width"
        # and no two characters look alike, as boxes would
        shapes = {tuple(g["shipped"][:2]) for g in glyphs.values()}
        assert len(shapes) == len(glyphs), family
    # The labels on the page are in that font: each Chinese span is as wide as its characters
    # at full width (a box of the fallback font is narrower).
    spans = page.js(
        """return Array.from(document.querySelectorAll('span[lang="zh-Hant"]'))
        .filter((s) => s.offsetWidth > 0)
        .map((s) => [s.textContent, s.getBoundingClientRect().width,
                     parseFloat(getComputedStyle(s).fontSize)]);"""
    )
    assert spans, "no Chinese label shown"
    for text, width, size in spans:
        full = sum(1 for ch in text if is_cjk(ch))
        assert width >= full * size * 0.98, (text, width, size)
    page.screenshot("scoreboard-paigow-zh.png")


def test_the_start_of_the_deal_in_the_console_s_words(
    table: Callable[..., Rig], monitor: Callable[..., Any], tmp_path: Path
) -> None:
    """With seat 1 banking, the dice count from the bank's own position: the page says the
    count, who counts from and who gets the first stack, as the console's reply does."""
    rig = table("paigow", 'scoreboard.table_name = "PAI GOW 3"\n')
    rig.login()
    rig.ok("config set start_mode dice")
    page = Page(monitor(), scoreboard_url(rig), tmp_path)
    for button in ("shuffled", "no_more_bets"):
        rig.ok(f"sim button {button}")
    rig.ok("dice 5")  # round 1: the start of the game, no player bank
    for button in ("dealt", "hands_set", "settled", "shuffled"):
        rig.ok(f"sim button {button}")
    rig.ok("bank seat 1")
    rig.ok("sim button no_more_bets")
    if rig.status()["state"] == "bank_style":
        rig.ok("style house_way_from_right")
    reply = rig.ok("dice 1 1 1")
    said = next(line for line in reply if line.startswith("dice 1+1+1=3: "))
    words = start_words(3, 1, 4)
    assert words == "count 3 from the bank (seat 1): first stack to seat 3"
    assert said.startswith(f"dice 1+1+1=3: {words} (position 4)")
    page.wait(lambda: page.text("start") == words.upper(), "the start in words")
    assert page.text("bank") == "SEAT 1"
    assert page.data("#start")[0]["seat"] == "3"
    page.screenshot("scoreboard-paigow.png")

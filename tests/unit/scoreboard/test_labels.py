"""The monitor's labels and the fonts they need: every label in the three languages with the
same placeholders; every Chinese character of the labels in the shipped fonts (made by
scripts/make-monitor-fonts: this fails until they are made again after a label changes); the
profile's texts checked against the fonts; nothing in a profile's text can end the page's
script element."""

from __future__ import annotations

import re

from controller.config.profile import SCOREBOARD_LANGUAGES, ScoreboardSettings
from controller.scoreboard import fonts
from controller.scoreboard.labels import (
    EXTRA,
    LABELS,
    LANGUAGES,
    chinese_characters,
    is_cjk,
    missing_glyphs,
    text_warnings,
)
from controller.scoreboard.pages import PageConfig, page


def test_every_label_is_in_the_three_languages_with_the_same_placeholders() -> None:
    assert LANGUAGES == SCOREBOARD_LANGUAGES == ("en", "zh-Hant", "zh-Hans")
    for key, texts in LABELS.items():
        assert len(texts) == 3 and all(texts), key
        holes = [sorted(re.findall(r"\{(\w+)\}", t)) for t in texts]
        assert holes[0] == holes[1] == holes[2], key
        assert not any(is_cjk(ch) for ch in texts[0]), key  # the English is English
        english = re.sub(r"\{\w+\}", "", texts[0])
        assert english == english.upper(), key  # the boards' capitals


def test_the_shipped_fonts_carry_every_chinese_character_of_the_labels() -> None:
    assert fonts.COVERED == chinese_characters()
    for texts in LABELS.values():
        assert missing_glyphs(texts[1] + texts[2], fonts.COVERED) == ""
    assert missing_glyphs(EXTRA, fonts.COVERED) == ""
    for data in (fonts.ZH_HANT, fonts.ZH_HANS):
        assert data[:4] == b"wOF2" and 20_000 < len(data) < 60_000
    assert "SIL OPEN FONT LICENSE Version 1.1" in fonts.LICENCE


def test_a_profile_text_the_font_lacks_is_warned_about() -> None:
    assert text_warnings(ScoreboardSettings(table_name="百家樂 7", idle_text=("歡迎光臨",))) == []
    warned = text_warnings(ScoreboardSettings(table_name="龘 TABLE", idle_text=("OK", "鑫鑫")))
    assert len(warned) == 2
    assert warned[0].startswith("scoreboard.table_name '龘 TABLE': the monitor's Chinese font")
    assert "has no 鑫 " in warned[1]  # each missing character once
    assert missing_glyphs("Ünïcode façade", "") == ""  # Latin: the kiosk's own fonts


def test_no_profile_text_can_end_the_page_s_script_element() -> None:
    hostile = "</script><script>alert(1)</script><!--"
    body = page(
        "baccarat", PageConfig(table="T1", table_name=hostile, idle_text=(hostile,))
    ).decode()
    assert body.count("</script>") == 2  # the configuration's and the page's own script
    assert "<\\/script>" in body and "<\\!--" in body
    table = page("paigow", PageConfig(table='a"b<c')).decode()
    assert 'data-table="a&quot;b&lt;c"' in table

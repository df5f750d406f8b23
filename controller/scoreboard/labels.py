"""What the monitor's pages say, in each language they offer: English, and Chinese in its
traditional (Macau, Hong Kong, Taiwan, most overseas tables) and simplified (mainland China,
Singapore, Malaysia) scripts. A profile (``[scoreboard] languages``) or a monitor's address
(``?lang=``) picks one or two; with two, every label shows both.

The Chinese characters here, and :data:`EXTRA` (words a casino puts in its table name or idle
texts), are the ones the monitor's font carries (``controller/scoreboard/fonts.py``, a subset
of Debian's Noto Sans CJK made by ``scripts/make-monitor-fonts``): the kiosk's system may have no
Chinese font at all, and the page loads nothing from elsewhere. A text that needs another
character is refused by ``check-profile`` (:func:`missing_glyphs`) rather than shown as boxes.
Placeholders in braces (``{n}``) are filled by the page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from controller.config.profile import SCOREBOARD_LANGUAGES, ScoreboardSettings

#: The languages a page can show, in the order of each label's texts.
LANGUAGES: Final = SCOREBOARD_LANGUAGES

#: key -> (English, traditional Chinese, simplified Chinese)
LABELS: Final[Mapping[str, tuple[str, str, str]]] = {
    # the games
    "baccarat": ("BACCARAT", "百家樂", "百家乐"),
    "paigow": ("PAI GOW", "牌九", "牌九"),
    # the header
    "shoe": ("SHOE", "靴", "靴"),
    "coup": ("COUP", "局", "局"),
    "round": ("ROUND", "局", "局"),
    "limits": ("LIMITS", "限紅", "限红"),
    "last_coup": ("LAST COUP", "上局", "上局"),
    "last_hand": ("LAST HAND", "最後一局", "最后一局"),
    "shoe_ended": ("SHOE ENDED", "本靴結束", "本靴结束"),
    # the wagers (their limits) and the counts
    "banker": ("BANKER", "莊", "庄"),
    "player": ("PLAYER", "閒", "闲"),
    "tie": ("TIE", "和", "和"),
    "banker_pair": ("B PAIR", "莊對", "庄对"),
    "player_pair": ("P PAIR", "閒對", "闲对"),
    "dragon": ("DRAGON BONUS", "龍寶", "龙宝"),
    "dragon7": ("DRAGON 7", "龍7", "龙7"),
    "panda8": ("PANDA 8", "熊貓8", "熊猫8"),
    "wager": ("WAGER", "投注", "投注"),
    # the bead's letter and the short names in the counts (one character each)
    "banker_letter": ("B", "莊", "庄"),
    "player_letter": ("P", "閒", "闲"),
    "tie_letter": ("T", "和", "和"),
    # the roads
    "bead": ("BEAD PLATE", "珠盤路", "珠盘路"),
    "big": ("BIG ROAD", "大路", "大路"),
    "big_eye_boy": ("BIG EYE BOY", "大眼仔", "大眼仔"),
    "small_road": ("SMALL ROAD", "小路", "小路"),
    "cockroach_pig": ("COCKROACH PIG", "曱甴路", "曱甴路"),
    "ask": ("NEXT IF", "問路", "问路"),
    "banker_ask": ("BANKER ASK", "莊問路", "庄问路"),
    "player_ask": ("PLAYER ASK", "閒問路", "闲问路"),
    # what the table is doing (baccarat)
    "state_shuffle": ("SHUFFLING", "洗牌中", "洗牌中"),
    "state_burn": ("BURN", "燒牌", "烧牌"),
    "state_offering": ("SHOE OFFERED", "派靴", "派靴"),
    "state_passing": ("SHOE PASSES", "轉靴", "转靴"),
    "state_betting": ("PLACE YOUR BETS", "請下注", "请下注"),
    "state_dealing": ("NO MORE BETS", "停止下注", "停止下注"),
    "state_halted": ("GAME HALTED", "暫停遊戲", "暂停游戏"),
    "banker_wins": ("BANKER WINS {n}", "莊贏 {n}", "庄赢 {n}"),
    "player_wins": ("PLAYER WINS {n}", "閒贏 {n}", "闲赢 {n}"),
    "tie_hand": ("TIE HAND", "和局", "和局"),
    # what the table is doing (pai gow)
    "state_inspection": ("TILES FOR INSPECTION", "驗牌", "验牌"),
    "state_washing": ("WASHING THE TILES", "洗牌中", "洗牌中"),
    "state_setting_hands": ("PLAYERS SET THEIR HANDS", "玩家配牌", "玩家配牌"),
    "state_dealer_hands": ("DEALER SETS THE HANDS", "荷官配牌", "荷官配牌"),
    "dice": ("DICE", "骰子", "骰子"),
    "rng": ("RNG", "隨機數", "随机数"),
    "rng_fault": ("DICE (RNG FAULT)", "骰子 (隨機數故障)", "骰子 (随机数故障)"),
    "test": ("TEST", "測試", "测试"),
    "error": ("ERROR", "錯誤", "错误"),
    "bank": ("BANK", "莊家", "庄家"),
    "the_bank_seat": ("THE BANK (SEAT {n})", "莊家 ({n}號位)", "庄家 ({n}号位)"),
    "the_dealer": ("THE DEALER", "荷官", "荷官"),
    "seat": ("SEAT {n}", "{n}號位", "{n}号位"),
    "the_dead_hand": ("THE DEAD HAND", "廢手", "废手"),
    # 5324.50(e)(2)-(3): the count starts at the bank (or the dealer) and gives the first stack
    "count_from": (
        "COUNT {n} FROM {from}: FIRST STACK TO {to}",
        "由{from}數{n}: 首疊給{to}",
        "由{from}数{n}: 首叠给{to}",
    ),
    "delivery": ("DELIVERY: {style}", "派牌方式: {style}", "派牌方式: {style}"),
    # the page's own notices
    "connection_lost": (
        "CONNECTION LOST - RECONNECTING",
        "連線中斷 - 重新連線中",
        "连线中断 - 重新连线中",
    ),
    "no_signal": ("NO SIGNAL FROM THE TABLE", "牌桌沒有訊號", "牌桌没有信号"),
    "scoreboard_error": ("SCOREBOARD ERROR", "顯示錯誤", "显示错误"),
    # the host's `disable` (or the door holding play): no new round, with the reason given
    "table_closed": ("TABLE CLOSED: {reason}", "牌桌暫停: {reason}", "牌桌暂停: {reason}"),
    "display_fault": ("TABLE DISPLAY NOT CONNECTED", "顯示故障", "显示故障"),
    "wrong_table": ("WRONG TABLE", "牌桌錯誤", "牌桌错误"),
    "wrong_table_detail": (
        "THIS IS THE PAGE OF TABLE {shown}; THIS MONITOR EXPECTS TABLE {expected}",
        "此為 {shown} 的畫面, 本顯示器應顯示 {expected}",
        "此为 {shown} 的画面, 本显示器应显示 {expected}",
    ),
}

#: Characters the font carries besides the labels' own: words a casino writes in its table
#: name or idle texts (welcome, the room, play responsibly, good luck, numbers, commission
#: free), in both scripts.
EXTRA: Final = (
    "歡迎光臨欢迎光临貴賓贵宾廳厅號号桌檯台請请理性博彩娛樂娱乐祝您好運好运發財发财恭喜新年快"
    "乐幸運幸运一二三四五六七八九十百千萬万元最低高免佣龍龙虎鳳凤金銀银貴贵賓"
    "、。，：（）"
)


def is_cjk(ch: str) -> bool:
    """A character the monitor's Chinese font must draw (CJK ideographs, their punctuation and
    full-width forms): the kiosk's own fonts are not counted on for these."""
    code = ord(ch)
    return (
        0x2E80 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
        or 0x20000 <= code <= 0x3FFFF
    )


def chinese_characters() -> str:
    """Every CJK character the font must carry: the Chinese labels and :data:`EXTRA`, sorted,
    each once (what ``scripts/make-monitor-fonts`` subsets)."""
    chars = {ch for texts in LABELS.values() for text in texts[1:] for ch in text if is_cjk(ch)}
    chars.update(ch for ch in EXTRA if is_cjk(ch))
    return "".join(sorted(chars))


def missing_glyphs(text: str, covered: Iterable[str]) -> str:
    """The CJK characters of ``text`` that ``covered`` lacks, each once, in order."""
    have = set(covered)
    out: list[str] = []
    for ch in text:
        if is_cjk(ch) and ch not in have and ch not in out:
            out.append(ch)
    return "".join(out)


def text_warnings(settings: ScoreboardSettings) -> list[str]:
    """The profile's texts for the monitor (its table name, its idle texts) with a Chinese
    character the monitor's font lacks: the page would show a box in its place."""
    from controller.scoreboard.fonts import COVERED

    out = []
    for key, texts in (("table_name", (settings.table_name,)), ("idle_text", settings.idle_text)):
        for text in texts:
            missing = missing_glyphs(text, COVERED)
            if missing:
                out.append(
                    f"scoreboard.{key} {text!r}: the monitor's Chinese font has no {missing}"
                    " (it carries the labels' characters and common words:"
                    " controller/scoreboard/labels.py EXTRA); the page would show a box instead"
                )
    return out

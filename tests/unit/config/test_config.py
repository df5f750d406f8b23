"""Rule settings: every setting's range, every console error code, the cross-field rules, and
ConfigStore's journaled changes and replay order."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from controller.config.settings import SETTING_KEYS, ConfigError, ConfigStore, RuleSettings
from controller.games.paigow.dealing import DELIVERY_STYLES


@dataclass(frozen=True)
class FakeEntry:
    seq: int
    kind: str
    data: dict[str, Any]
    round_id: int | None = None


@dataclass
class FakeJournal:
    """The two journal methods ConfigStore uses, in memory."""

    entries: list[FakeEntry] = field(default_factory=list)

    def append(self, kind: str, data: dict[str, Any], round_id: int | None = None) -> int:
        self.entries.append(FakeEntry(len(self.entries) + 1, kind, dict(data), round_id))
        return len(self.entries)

    def events(self, kinds: Iterable[str] | None = None, since_seq: int = 0) -> Iterator[FakeEntry]:
        wanted = None if kinds is None else set(kinds)
        return (
            e for e in self.entries if e.seq > since_seq and (wanted is None or e.kind in wanted)
        )


def code_of(settings: RuleSettings, key: str, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        settings.with_change(key, text)
    return info.value.code


EZ = RuleSettings().with_change("baccarat.ez", "true")
NJ = RuleSettings().with_change("start_mode", "dice").with_change("jurisdiction", "NJ")
COBANK = RuleSettings().with_change("paigow.cobank_offered", "true")
SURRENDER = RuleSettings().with_change("paigow.surrender_offered", "true")
DRAGON = RuleSettings().with_change("baccarat.dragon_pay_table", "A")

# key, settings to start from, accepted texts, RANGE texts, SYNTAX texts
RANGES: list[tuple[str, RuleSettings, list[str], list[str], list[str]]] = [
    ("jurisdiction", RuleSettings(), ["NY"], ["NV", "ny"], [""]),
    ("start_mode", RuleSettings(), ["rng", "dice"], ["coin"], [" "]),
    ("recall_depth", RuleSettings(), ["10", "1000"], ["9", "1001", "-1"], ["ten", "1.5"]),
    ("paigow.vig_percent", RuleSettings(), ["5"], ["4", "6"], ["five"]),
    ("paigow.round_vig_to_quarter", RuleSettings(), ["true", "off"], [], ["2", "maybe"]),
    ("paigow.house_way_policy", RuleSettings(), ["default", "regulation"], ["mine"], [""]),
    ("paigow.zero_value", RuleSettings(), ["non-pairs", "gongs", "all"], ["pairs"], [""]),
    ("paigow.surrender_offered", RuleSettings(), ["yes", "no"], [], ["1"]),
    ("paigow.bank_offered", RuleSettings(), ["false", "true"], [], ["x"]),
    ("paigow.cobank_offered", RuleSettings(), ["true", "false"], [], ["x"]),
    (
        "paigow.delivery_styles",
        RuleSettings(),
        ["house_way_from_right", "house_way_from_right,jung_quat", "all"],
        ["house_way_from_right,nine_dragons", "house_way_from_right,house_way_from_right"],
        ["house_way_from_right;jung_quat", "a,,b"],
    ),
    ("paigow.dragons_eye", NJ, ["true", "false"], [], ["x"]),
    (
        "paigow.dragons_eye_method",
        NJ.with_change("paigow.dragons_eye", "true"),
        ["1", "2"],
        ["3", "0"],
        ["one"],
    ),
    ("paigow.zero_low_conflict", RuleSettings(), ["f7-lose", "f8ii-push"], ["push", "f8"], [""]),
    ("paigow.vig_cent_rounding", RuleSettings(), ["up", "down"], ["nearest", "UP"], [" "]),
    ("paigow.co_bank_shortfall_odd_cent", COBANK, ["co_bank", "house"], ["bank", "split"], [""]),
    (
        "paigow.surrender_against_bank",
        SURRENDER,
        ["refuse", "center", "house"],
        ["centre", "bank"],
        [""],
    ),
    ("paigow.bank_rotation_includes_dealer", RuleSettings(), ["true", "false"], [], ["x"]),
    ("baccarat.decks", RuleSettings(), ["6", "8"], ["5", "9"], ["eight"]),
    ("baccarat.vig_percent", RuleSettings(), ["4", "5"], ["3", "6"], ["4%"]),
    ("baccarat.tie_pays", RuleSettings(), ["8", "9"], ["7", "10"], ["8:1"]),
    ("baccarat.dragon_pay_table", RuleSettings(), ["none", "A", "B", "C"], ["D", "a"], [""]),
    ("baccarat.ez", RuleSettings(), ["true", "false"], [], ["ez"]),
    ("baccarat.dragon7_pays", EZ, ["1", "40", "100"], ["0", "101"], ["40:1"]),
    ("baccarat.panda8_offered", EZ, ["true", "false"], [], ["x"]),
    ("baccarat.panda8_pays", EZ, ["25"], ["24", "26"], ["x"]),
    ("baccarat.deferred_vig", RuleSettings(), ["true", "false"], [], ["x"]),
    ("baccarat.pay_order", RuleSettings(), ["i", "ii", "iii", "iv"], ["v", "losing"], [""]),
    ("baccarat.error_card_count", RuleSettings(), ["burn", "baccarat"], ["BURN", "ten"], [""]),
    (
        "baccarat.face_up_burn_from",
        RuleSettings(),
        ["next_card", "face_up_card"],
        ["next card", "face-up card"],
        [""],
    ),
    ("baccarat.hands_after_cover", RuleSettings(), ["0", "1"], ["2", "-1"], ["one"]),
    ("baccarat.offer_back_to_previous", RuleSettings(), ["true", "false"], [], ["x"]),
    ("baccarat.dead_hand_compels_pass", RuleSettings(), ["true", "false"], [], ["x"]),
    # the posted limits (tests/unit/config/test_limits.py has their cross-field rules)
    (
        "paigow.wager_min_cents",
        RuleSettings(),
        ["100", "2501", "500000"],
        ["99", "500001"],
        ["$25"],
    ),
    ("paigow.wager_max_cents", RuleSettings(), ["2500", "100000000"], ["2499", "100000001"], ["x"]),
    *[
        (f"baccarat.{w}_min_cents", start, ["500", "1000"], ["100", "501", "0"], ["5.00"])
        for w, start in (
            ("banker", RuleSettings()),
            ("player", RuleSettings()),
            ("tie", RuleSettings()),
            ("dragon", DRAGON),
            ("dragon7", EZ),
            ("panda8", EZ),
        )
    ],
    *[
        (
            f"baccarat.{w}_max_cents",
            start,
            ["25000", "100000000"],
            ["499", "24999", "100000500"],
            ["1e6"],
        )
        for w, start in (
            ("banker", RuleSettings()),
            ("player", RuleSettings()),
            ("tie", RuleSettings()),
            ("dragon", DRAGON),
            ("dragon7", EZ),
            ("panda8", EZ),
        )
    ],
]


def test_every_setting_has_a_range_test() -> None:
    tested = {r[0] for r in RANGES} | {"baccarat.vig_step_cents"}
    assert tested == set(SETTING_KEYS)


@pytest.mark.parametrize(
    ("key", "start", "ok", "bad", "syntax"), RANGES, ids=[r[0] for r in RANGES]
)
def test_setting_ranges(
    key: str, start: RuleSettings, ok: list[str], bad: list[str], syntax: list[str]
) -> None:
    for text in ok:
        changed = start.with_change(key, text)
        # the console shows what it reads back
        assert changed.with_change(key, changed.get_text(key)) == changed
    for text in bad:
        assert code_of(start, key, text) == "RANGE", text
    for text in syntax:
        assert code_of(start, key, text) == "SYNTAX", text


def test_defaults() -> None:
    s = RuleSettings()
    assert (s.jurisdiction, s.start_mode, s.recall_depth) == ("NY", "rng", 20)
    p, b = s.paigow, s.baccarat
    assert (p.vig_percent, p.round_vig_to_quarter, p.house_way_policy) == (5, False, "default")
    assert (p.zero_value, p.surrender_offered, p.bank_offered, p.cobank_offered) == (
        "non-pairs",
        False,
        True,
        False,
    )
    assert p.delivery_styles == DELIVERY_STYLES and len(DELIVERY_STYLES) == 10
    assert (p.dragons_eye, b.decks, b.vig_percent, b.vig_step_cents, b.tie_pays) == (
        False,
        8,
        5,
        25,
        8,
    )
    assert (b.dragon_pay_table, b.ez, b.dragon7_pays, b.panda8_pays, b.deferred_vig) == (
        "none",
        False,
        40,
        25,
        False,
    )
    assert b.pay_order == "i"
    # The new keys default to the rules engines' own defaults.
    from controller.games.baccarat import irregularities, shoe, shoe_passing
    from controller.games.paigow.outcome import DEFAULT_ZERO_LOW_CONFLICT
    from controller.games.paigow.settlement import PaigowRules

    engine = PaigowRules()
    assert (
        p.zero_low_conflict,
        p.vig_cent_rounding,
        p.co_bank_shortfall_odd_cent,
        p.surrender_against_bank,
    ) == (
        DEFAULT_ZERO_LOW_CONFLICT,
        engine.vig_cent_rounding,
        engine.co_bank_shortfall_odd_cent,
        engine.surrender_against_bank,
    )
    assert (
        p.zero_low_conflict,
        p.vig_cent_rounding,
        p.co_bank_shortfall_odd_cent,
        p.surrender_against_bank,
    ) == ("f7-lose", "up", "co_bank", "refuse")
    opts = s.baccarat_shoe_options()
    assert opts.error_card_count is irregularities.ERROR_CARD_COUNT
    assert opts.face_up_burn_from is irregularities.FACE_UP_BURN_FROM
    assert opts.hands_after_cover == shoe.HANDS_AFTER_COVER == 1
    assert opts.offer_back_to_previous is shoe_passing.OFFER_BACK_TO_PREVIOUS is False
    assert opts.dead_hand_compels_pass is shoe_passing.DEAD_HAND_COMPELS_PASS is False


def test_unknown_key_code_and_hint() -> None:
    with pytest.raises(ConfigError) as info:
        RuleSettings().with_change("baccarat.deck", "8")
    assert info.value.code == "UNKNOWN"
    assert str(info.value) == "baccarat.deck: no such setting (did you mean baccarat.decks?)"


def test_get_text_of_unknown_key() -> None:
    with pytest.raises(ConfigError) as info:
        RuleSettings().get_text("colour")
    assert info.value.code == "UNKNOWN"


def test_range_message_names_value_range_and_section() -> None:
    with pytest.raises(ConfigError) as info:
        RuleSettings().with_change("baccarat.decks", "5")
    assert str(info.value) == (
        "baccarat.decks: 5 is out of range 6..8 (5324.20(a)(4) (at least six))"
    )


def test_construction_validates() -> None:
    with pytest.raises(ConfigError) as info:
        RuleSettings(recall_depth=5)
    assert info.value.code == "RANGE"
    with pytest.raises(ConfigError) as info:
        RuleSettings(recall_depth=True)
    assert info.value.code == "SYNTAX"


# -- cross-field rules ----------------------------------------------------------------------------


def test_nj_refuses_rng_and_defaults_to_dice() -> None:
    assert RuleSettings.from_mapping({"jurisdiction": "NJ"}).start_mode == "dice"
    with pytest.raises(ConfigError) as info:
        RuleSettings().with_change("jurisdiction", "NJ")
    assert info.value.code == "RANGE" and info.value.key == "jurisdiction"
    assert "conflicts with start_mode: rng is not allowed with jurisdiction NJ" in str(info.value)
    with pytest.raises(ConfigError) as info:
        RuleSettings.from_mapping({"jurisdiction": "NJ", "start_mode": "rng"})
    assert info.value.key == "start_mode"
    assert NJ.start_mode == "dice" and code_of(NJ, "start_mode", "rng") == "RANGE"


def test_dragons_eye_needs_nj_and_dice() -> None:
    assert code_of(RuleSettings(), "paigow.dragons_eye", "true") == "RANGE"
    ny_dice = RuleSettings().with_change("start_mode", "dice")
    with pytest.raises(ConfigError) as info:
        ny_dice.with_change("paigow.dragons_eye", "true")
    assert "13:69F-10.7(l)" in str(info.value) and "jurisdiction NJ" in str(info.value)
    on = NJ.with_change("paigow.dragons_eye", "true")
    assert code_of(on, "jurisdiction", "NY") == "RANGE"


def test_cobank_needs_bank() -> None:
    assert (
        code_of(
            RuleSettings().with_change("paigow.bank_offered", "false"),
            "paigow.cobank_offered",
            "true",
        )
        == "RANGE"
    )
    both = RuleSettings().with_change("paigow.cobank_offered", "true")
    with pytest.raises(ConfigError) as info:
        both.with_change("paigow.bank_offered", "false")
    assert info.value.key == "paigow.bank_offered" and "5324.50(g)(5)" in str(info.value)


def test_delivery_styles_must_keep_the_default_style() -> None:
    with pytest.raises(ConfigError) as info:
        RuleSettings().with_change("paigow.delivery_styles", "jung_quat")
    assert info.value.code == "RANGE" and "house_way_from_right" in str(info.value)


def test_vig_step_follows_percent() -> None:
    four = RuleSettings().with_change("baccarat.vig_percent", "4")
    assert (four.baccarat.vig_percent, four.baccarat.vig_step_cents) == (4, 20)
    assert code_of(four, "baccarat.vig_step_cents", "25") == "RANGE"
    assert four.with_change("baccarat.vig_step_cents", "20") == four
    assert RuleSettings.from_mapping({"baccarat": {"vig_percent": 4}}).baccarat.vig_step_cents == 20
    with pytest.raises(ConfigError) as info:
        RuleSettings.from_mapping({"baccarat": {"vig_percent": 4, "vig_step_cents": 25}})
    assert "5324.20(d)(2) requires 20-cent steps" in str(info.value)


def test_ez_has_no_vigorish_settings() -> None:
    # 5324.20(d)(3): the vigorish settings are kept but inactive, and changing them is refused
    assert EZ.inactive_reason("baccarat.vig_percent") is not None
    for key, text in [
        ("baccarat.vig_percent", "4"),
        ("baccarat.deferred_vig", "true"),
        ("baccarat.vig_step_cents", "25"),
    ]:
        with pytest.raises(ConfigError) as info:
            EZ.with_change(key, text)
        assert info.value.code == "RANGE" and "5324.20(d)(3)" in str(info.value)
    with pytest.raises(ConfigError) as info:
        RuleSettings.from_mapping({"baccarat": {"ez": True, "vig_percent": 4}}, source="p.toml")
    assert str(info.value).startswith("p.toml: baccarat.vig_percent: is set but has no effect")
    assert EZ.baccarat_rules().vig_step_cents == 0


def test_ez_payouts_only_with_ez() -> None:
    for key in ("baccarat.dragon7_pays", "baccarat.panda8_pays", "baccarat.panda8_offered"):
        assert code_of(RuleSettings(), key, "25" if "pays" in key else "true") == "RANGE"
    with pytest.raises(ConfigError):
        RuleSettings.from_mapping({"baccarat": {"dragon7_pays": 30}})
    assert (
        RuleSettings.from_mapping(
            {"baccarat": {"ez": True, "dragon7_pays": 30}}
        ).baccarat.dragon7_pays
        == 30
    )
    no_panda = EZ.with_change("baccarat.panda8_offered", "false")
    assert code_of(no_panda, "baccarat.panda8_pays", "25") == "RANGE"
    assert no_panda.baccarat_rules().offers("panda8") is False
    assert EZ.baccarat_rules().offers("panda8") is True


def test_describe_marks_inactive_settings() -> None:
    lines = RuleSettings().describe()
    assert len(lines) == len(SETTING_KEYS)
    assert lines[0] == (
        "jurisdiction = NY  (default NY, range NY|NJ; NY 9 NYCRR 5324; NJ N.J.A.C. 13:69F)"
    )
    d7 = next(ln for ln in lines if ln.startswith("baccarat.dragon7_pays"))
    assert d7.endswith("[inactive: needs baccarat.ez = true (5324.20(b)(1)(v)-(vi))]")
    assert "[inactive" not in next(ln for ln in lines if ln.startswith("baccarat.vig_percent"))
    assert "default all" in next(ln for ln in lines if ln.startswith("paigow.delivery_styles"))


def test_as_dict_and_get_text() -> None:
    s = RuleSettings()
    d = s.as_dict()
    assert list(d) == list(SETTING_KEYS)
    assert d["baccarat.decks"] == 8 and d["paigow.delivery_styles"] == DELIVERY_STYLES
    assert s.get_text("paigow.bank_offered") == "true"
    assert s.get_text("paigow.delivery_styles") == ",".join(DELIVERY_STYLES)


# -- from_mapping (a profile's [rules] table) -----------------------------------------------------


def test_from_mapping_nested_and_dotted() -> None:
    a = RuleSettings.from_mapping({"paigow": {"surrender_offered": True}, "recall_depth": 30})
    b = RuleSettings.from_mapping({"paigow.surrender_offered": True, "recall_depth": 30})
    assert a == b and a.paigow.surrender_offered and a.recall_depth == 30


def test_from_mapping_errors() -> None:
    cases: list[tuple[Mapping[str, Any], str, str]] = [
        ({"paigow": {"vig": 5}}, "UNKNOWN", "paigow.vig"),
        ({"colour": "red"}, "UNKNOWN", "colour"),
        ({"paigow": 5}, "SYNTAX", "paigow"),
        ({"recall_depth": "20"}, "SYNTAX", "recall_depth"),
        ({"baccarat": {"ez": 1}}, "SYNTAX", "baccarat.ez"),
        ({"baccarat": {"decks": True}}, "SYNTAX", "baccarat.decks"),
        ({"paigow": {"delivery_styles": [1]}}, "SYNTAX", "paigow.delivery_styles"),
        ({"paigow": {"delivery_styles": []}}, "RANGE", "paigow.delivery_styles"),
        ({"paigow": {"vig_percent": 5}, "paigow.vig_percent": 5}, "SYNTAX", "paigow.vig_percent"),
        ({"baccarat": {"tie_pays": 30}}, "RANGE", "baccarat.tie_pays"),
    ]
    for mapping, code, key in cases:
        with pytest.raises(ConfigError) as info:
            RuleSettings.from_mapping(mapping, source="x.toml")
        assert (info.value.code, info.value.key, info.value.source) == (code, key, "x.toml")


def test_delivery_styles_from_a_list_or_text() -> None:
    two = ("house_way_from_right", "jung_quat")
    assert (
        RuleSettings.from_mapping({"paigow": {"delivery_styles": list(two)}}).paigow.delivery_styles
        == two
    )
    assert (
        RuleSettings.from_mapping(
            {"paigow": {"delivery_styles": ",".join(two)}}
        ).paigow.delivery_styles
        == two
    )


def test_engine_settings_objects() -> None:
    s = (
        RuleSettings()
        .with_change("paigow.round_vig_to_quarter", "true")
        .with_change("baccarat.dragon_pay_table", "B")
        .with_change("baccarat.pay_order", "iii")
    )
    pr = s.paigow_rules()
    assert pr.round_vig_to_quarter and pr.player_bank_offered and not pr.co_bank_offered
    br = s.baccarat_rules()
    assert br.dragon_pay_table == "B" and br.paying_procedure == "iii" and br.pays_by_seat
    assert RuleSettings().baccarat_rules().dragon_pay_table is None


def test_paigow_engine_mapping_of_the_new_keys() -> None:
    from controller.games.paigow.settlement import commission

    s = (
        RuleSettings()
        .with_change("paigow.cobank_offered", "true")
        .with_change("paigow.surrender_offered", "true")
        .with_change("paigow.vig_cent_rounding", "down")
        .with_change("paigow.co_bank_shortfall_odd_cent", "house")
        .with_change("paigow.surrender_against_bank", "center")
        .with_change("paigow.zero_low_conflict", "f8ii-push")
    )
    pr = s.paigow_rules()
    assert (pr.vig_cent_rounding, pr.co_bank_shortfall_odd_cent, pr.surrender_against_bank) == (
        "down",
        "house",
        "center",
    )
    # 5% of $10.10 is 50.5 cents: "down" collects 50, the default "up" 51 (5324.50(f)(10)).
    assert commission(1010, pr) == 50 and commission(1010, RuleSettings().paigow_rules()) == 51
    assert s.paigow_outcome_options() == {
        "zero_value": "non-pairs",
        "zero_low_conflict": "f8ii-push",
    }


def test_new_paigow_keys_inactive_where_they_do_nothing() -> None:
    s = RuleSettings()
    assert s.inactive_reason("paigow.co_bank_shortfall_odd_cent") == (
        "needs paigow.cobank_offered = true"
    )
    assert s.inactive_reason("paigow.surrender_against_bank") == (
        "needs paigow.surrender_offered = true"
    )
    assert code_of(s, "paigow.co_bank_shortfall_odd_cent", "house") == "RANGE"
    q = s.with_change("paigow.round_vig_to_quarter", "true")
    assert "25 cents" in str(q.inactive_reason("paigow.vig_cent_rounding"))
    with pytest.raises(ConfigError, match="is set but has no effect"):
        RuleSettings.from_mapping({"paigow": {"surrender_against_bank": "center"}}, "t.toml")
    ok = RuleSettings.from_mapping(
        {
            "paigow": {"surrender_offered": True, "surrender_against_bank": "house"},
            "baccarat": {"face_up_burn_from": "face_up_card", "hands_after_cover": 0},
        },
        "t.toml",
    )
    assert ok.paigow_rules().surrender_against_bank == "house"
    from controller.games.baccarat.irregularities import BurnFrom

    assert ok.baccarat_shoe_options().face_up_burn_from is BurnFrom.FACE_UP_CARD
    assert ok.baccarat_shoe_options().hands_after_cover == 0


# -- ConfigStore ----------------------------------------------------------------------------------


def test_set_journals_old_new_who() -> None:
    j = FakeJournal()
    store = ConfigStore(j, RuleSettings())
    assert store.set("baccarat.tie_pays", "9", who="tech:ann") == ("8", "9")
    assert store.current().baccarat.tie_pays == 9
    assert [(e.kind, e.data) for e in j.entries] == [
        ("config.changed", {"key": "baccarat.tie_pays", "old": "8", "new": "9", "who": "tech:ann"})
    ]


def test_refused_change_journals_nothing() -> None:
    j = FakeJournal()
    store = ConfigStore(j, RuleSettings())
    with pytest.raises(ConfigError) as info:
        store.set("baccarat.decks", "4", who="tech")
    assert info.value.code == "RANGE"
    assert j.entries == [] and store.current() == RuleSettings()


def test_no_op_change_journals_nothing() -> None:
    j = FakeJournal()
    store = ConfigStore(j, RuleSettings())
    assert store.set("baccarat.decks", "8", who="tech") == ("8", "8")
    assert j.entries == []


def test_follow_on_change_is_journaled_with_its_cause() -> None:
    j = FakeJournal()
    store = ConfigStore(j, RuleSettings())
    assert store.set("baccarat.vig_percent", "4", who="tech") == ("5", "4")
    assert [e.data for e in j.entries] == [
        {"key": "baccarat.vig_percent", "old": "5", "new": "4", "who": "tech"},
        {
            "key": "baccarat.vig_step_cents",
            "old": "25",
            "new": "20",
            "who": "tech",
            "cause": "baccarat.vig_percent",
        },
    ]
    again = ConfigStore(j, RuleSettings())
    assert again.replay() == ()
    assert again.current() == store.current()


def test_who_is_required() -> None:
    with pytest.raises(ValueError):
        ConfigStore(FakeJournal(), RuleSettings()).set("baccarat.decks", "6", who="")


def test_replay_applies_changes_in_sequence_order_over_profile_defaults() -> None:
    j = FakeJournal()
    defaults = RuleSettings.from_mapping({"baccarat": {"decks": 6}, "recall_depth": 15})
    store = ConfigStore(j, defaults)
    store.set("baccarat.decks", "7", who="a")
    j.append("round.started", {"round": 1})
    store.set("baccarat.decks", "8", who="b")
    store.set("start_mode", "dice", who="a")
    store.set("jurisdiction", "NJ", who="a")  # valid only after start_mode dice: order matters
    restarted = ConfigStore(j, defaults)
    assert restarted.replay() == ()
    s = restarted.current()
    assert (s.baccarat.decks, s.start_mode, s.jurisdiction, s.recall_depth) == (8, "dice", "NJ", 15)


def test_replay_reports_events_that_no_longer_apply() -> None:
    j = FakeJournal()
    j.append("config.changed", {"key": "baccarat.shoes", "old": "1", "new": "2", "who": "x"})
    j.append("config.changed", {"key": "baccarat.decks", "old": "8", "new": "7", "who": "x"})
    store = ConfigStore(j, RuleSettings())
    problems = store.replay()
    assert [(p.seq, p.key) for p in problems] == [(1, "baccarat.shoes")]
    assert "no such setting" in problems[0].reason
    assert store.current().baccarat.decks == 7 and store.problems == problems


def test_as_of_gives_the_settings_an_earlier_journal_row_saw() -> None:
    j = FakeJournal()
    store = ConfigStore(j, RuleSettings())
    before = j.append("round.started", {"round": 1})
    store.set("baccarat.tie_pays", "9", who="a")
    between = j.append("round.started", {"round": 2})
    store.set("baccarat.hands_after_cover", "0", who="a")
    assert store.as_of(before).baccarat.tie_pays == 8
    assert store.as_of(between).baccarat.tie_pays == 9
    assert store.as_of(between).baccarat.hands_after_cover == 1
    assert store.as_of(10**9) == store.current()


def test_current_replays_lazily() -> None:
    j = FakeJournal()
    j.append("config.changed", {"key": "recall_depth", "old": "20", "new": "40", "who": "x"})
    assert ConfigStore(j, RuleSettings()).current().recall_depth == 40


def test_with_the_real_journal(tmp_path: Any) -> None:
    journal_mod = pytest.importorskip("controller.journal.store")
    j = journal_mod.Journal(tmp_path / "j.sqlite")
    try:
        ConfigStore(j, RuleSettings()).set("recall_depth", "50", who="tech")
        assert ConfigStore(j, RuleSettings()).current().recall_depth == 50
        e = j.last(["config.changed"])
        assert e.data == {"key": "recall_depth", "old": "20", "new": "50", "who": "tech"}
    finally:
        j.close()


def test_settings_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RuleSettings().recall_depth = 30  # type: ignore[misc]

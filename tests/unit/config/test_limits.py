"""The table's posted limits (rule settings shown on the monitor): a minimum and a maximum for
each wager the table offers, in cents; baccarat's in $5 steps (5324.20(d)(2)); a minimum never
above its maximum; journaled like every setting and offered per game."""

from __future__ import annotations

import pytest

from controller.config.settings import ConfigError, ConfigStore, RuleSettings, WagerLimit
from tests.unit.config.test_config import FakeJournal


def test_the_default_limits_of_each_game_name_only_the_wagers_it_offers() -> None:
    s = RuleSettings()
    assert s.wager_limits("paigow") == (WagerLimit("wager", 2_500, 500_000),)
    assert [w.wager for w in s.wager_limits("baccarat")] == ["banker", "player", "tie"]
    dragon = s.with_change("baccarat.dragon_pay_table", "B")
    assert [w.wager for w in dragon.wager_limits("baccarat")][-1] == "dragon"
    ez = s.with_change("baccarat.ez", "true")
    assert [w.wager for w in ez.wager_limits("baccarat")] == [
        "banker",
        "player",
        "tie",
        "dragon7",
        "panda8",
    ]
    no_panda = ez.with_change("baccarat.panda8_offered", "false")
    assert "panda8" not in [w.wager for w in no_panda.wager_limits("baccarat")]


@pytest.mark.parametrize(
    ("key", "text", "blamed"),
    [
        ("baccarat.tie_min_cents", "50500", "baccarat.tie_min_cents"),
        ("baccarat.tie_max_cents", "400", "baccarat.tie_max_cents"),
        ("paigow.wager_min_cents", "500001", "paigow.wager_min_cents"),
        ("paigow.wager_max_cents", "2000", "paigow.wager_max_cents"),
    ],
)
def test_a_minimum_above_its_maximum_is_refused_whichever_is_changed(
    key: str, text: str, blamed: str
) -> None:
    with pytest.raises(ConfigError) as info:
        RuleSettings().with_change(key, text)
    assert info.value.code == "RANGE" and info.value.key == blamed
    assert "minimum cannot exceed its maximum" in str(info.value)


def test_baccarat_limits_go_in_five_dollar_steps_pai_gow_in_cents() -> None:
    with pytest.raises(ConfigError, match=r"multiple of 500.*5324\.20\(b\)\(1\)\(i\), \(d\)\(2\)"):
        RuleSettings().with_change("baccarat.banker_min_cents", "2550")
    assert RuleSettings().with_change("paigow.wager_min_cents", "2550").paigow.wager_min_cents == (
        2550
    )


def test_limits_of_a_wager_not_offered_cannot_be_set() -> None:
    with pytest.raises(ConfigError, match="has no effect now: needs baccarat.ez = true"):
        RuleSettings().with_change("baccarat.dragon7_max_cents", "10000")
    with pytest.raises(ConfigError, match="is set but has no effect"):
        RuleSettings.from_mapping({"baccarat": {"panda8_min_cents": 1000}}, "p.toml")


def test_limits_from_a_profile_and_a_journaled_change() -> None:
    s = RuleSettings.from_mapping(
        {"baccarat": {"banker_min_cents": 10_000, "banker_max_cents": 1_000_000}}, "p.toml"
    )
    assert s.wager_limits("baccarat")[0] == WagerLimit("banker", 10_000, 1_000_000)
    journal = FakeJournal()
    store = ConfigStore(journal, s)
    assert store.set("baccarat.tie_max_cents", "100000", "technician@stdio") == (
        "50000",
        "100000",
    )
    assert journal.entries[-1].data == {
        "key": "baccarat.tie_max_cents",
        "old": "50000",
        "new": "100000",
        "who": "technician@stdio",
    }
    replayed = ConfigStore(journal, s)
    assert replayed.current().wager_limits("baccarat")[2] == WagerLimit("tie", 500, 100_000)

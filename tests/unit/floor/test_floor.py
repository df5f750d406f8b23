"""Meters and coded events read from rows (docs/meters.md, docs/events.md): the docs' catalogue
is the code's; counts from rows built here by hand; junk rows never crash; the feed's messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.feed.messages import went_back
from controller.floor.events import CATALOGUE, EventReader, catalogue_markdown
from controller.floor.feed import FloorFeed
from controller.floor.meters import MeterFold, PlainRow, chi_square

ROOT = Path(__file__).resolve().parents[3]


def _rows(*specs: tuple[str, dict[str, Any]]) -> list[PlainRow]:
    return [PlainRow(i + 1, kind, 1, data) for i, (kind, data) in enumerate(specs)]


def test_docs_events_table_is_the_catalogue() -> None:
    text = (ROOT / "docs" / "events.md").read_text(encoding="utf-8")
    assert catalogue_markdown() in text
    codes = [e.code for e in CATALOGUE]
    assert len(codes) == len(set(codes)), "a code used twice"


def test_docs_meters_lists_every_meter() -> None:
    from controller.floor.meters import CATALOGUE as METERS

    text = (ROOT / "docs" / "meters.md").read_text(encoding="utf-8")
    for name, _ in METERS:
        assert f"| `{name}` |" in text, name


def test_pai_gow_counts_and_a_power_cut_mid_round() -> None:
    rows = _rows(
        ("app.start", {"game": "paigow"}),
        ("paigow.recovered", {"state": "inspection", "trigger": "power_up"}),
        ("paigow.drawn", {"record": {"number": 3}}),
        ("paigow.settled", {"record": {"number": 3, "bank": "player"}}),
        ("paigow.dice", {"record": {"number": 6}}),
        ("paigow.voided", {"record": {"number": 6}}),
        ("paigow.voided", {"record": {}}),
        # no app.shutdown: the power was cut with a round in betting
        ("app.start", {"game": "paigow"}),
        ("paigow.recovered", {"state": "betting", "trigger": "power_up"}),
        ("app.shutdown", {}),
        ("app.start", {"game": "paigow"}),
        ("paigow.recovered", {"state": "betting", "trigger": "power_up"}),  # a clean stop
        ("config.changed", {"key": "x", "carried_from": 1}),  # a copy: counts nothing
    )
    m = MeterFold().add_all(rows).lifetime
    assert m["power_ups"] == 3
    assert m["power_lost_mid_round"] == 1
    assert m["paigow.rng.3"] == 1 and m["paigow.dice.6"] == 1 and m["paigow.dice_rounds"] == 1
    assert m["paigow.games_played"] == 1 and m["paigow.player_bank_rounds"] == 1
    assert m["paigow.voided_after_draw"] == 1 and m["paigow.voided_before_draw"] == 1
    assert "setting_changes" not in m


def test_baccarat_coup_meters_from_the_cards() -> None:
    # player 4-4 (a pair) draws a 9: 7; banker 3-4 stands on 7: a tie
    # banker 2-2 + 3 = 7 against player 3-3 = 6 with a third... keep two coups by hand:
    rows = _rows(
        ("app.start", {"game": "baccarat"}),
        ("baccarat.shoe.start", {"shoe": 1}),
        ("shoe.frame", {"type": "CARD", "fields": ["4H"]}),
        ("shoe.frame", {"type": "HBT", "fields": []}),
        (
            "baccarat.coup.result",
            {"player": ["4H", "4D", "9C"], "banker": ["3S", "4S"], "winner": "tie"},
        ),
        (
            "baccarat.coup.result",
            {"player": ["KH", "6D"], "banker": ["2S", "2C", "3H"], "winner": "banker"},
        ),
        (
            "baccarat.coup.result",
            {"player": ["9H", "KD"], "banker": ["2S", "5C"], "winner": "player", "natural": True},
        ),
        ("baccarat.coup.voided", {"cards": ["2S"]}),
        ("baccarat.irregularity", {"kind": "exposed", "card": "2S"}),
        ("baccarat.integrity", {"problem": "unreadable card"}),
    )
    m = MeterFold().add_all(rows).lifetime
    assert m["baccarat.coups"] == 3 and m["baccarat.ties"] == 1
    assert m["baccarat.banker_wins"] == 1 and m["baccarat.player_wins"] == 1
    assert m["baccarat.player_pairs"] == 1 and m["baccarat.banker_pairs"] == 1
    assert m["baccarat.dragon7"] == 1  # banker 2+2+3 = 7 with three cards, winning
    assert m["baccarat.naturals"] == 1
    assert m["baccarat.shoes"] == 1 and m["baccarat.cards_read"] == 1
    assert m["baccarat.voided_after_cards"] == 1
    assert m["baccarat.irregularities.exposed"] == 1 and m["baccarat.integrity_alarms"] == 1


def test_a_shift_starts_the_shift_counts_again() -> None:
    rows = _rows(
        ("paigow.settled", {}),
        ("paigow.shift_start", {"who": "supervisor"}),
        ("paigow.settled", {}),
    )
    fold = MeterFold().add_all(rows)
    assert fold.lifetime["paigow.games_played"] == 2
    assert fold.shift["paigow.games_played"] == 1
    assert fold.shift_from_seq == 2


def test_chi_square_against_uniform() -> None:
    fold = MeterFold(game="paigow")
    fold.lifetime.update({f"paigow.rng.{n}": 10 for n in range(1, 9)})
    assert chi_square(fold).statistic == 0.0 and chi_square(fold).p_value == 1.0
    fold.lifetime["paigow.rng.1"] = 90  # 160 numbers: expected 20; (70^2 + 7*10^2)/20 = 280
    c = chi_square(fold)
    assert abs(c.statistic - 280.0) < 1e-9 and c.p_value < 1e-6


def test_the_dice_are_tested_against_three_fair_dice_not_uniform() -> None:
    """5324.50(a)(3), (e)(3): three dice's total counted around eight positions gives 1-8 with
    28, 28, 28, 28, 27, 25, 25, 27 ways in 216 (totals 9+17, 10+18, 3+11, 4+12, 5+13, 6+14,
    7+15, 8+16: 25+3, 27+1, 1+27, 3+25, 6+21, 10+15, 15+10, 21+6)."""
    ways = (28, 28, 28, 28, 27, 25, 25, 27)
    fold = MeterFold(game="paigow")
    fold.lifetime.update({f"paigow.dice.{n}": 100 * w for n, w in enumerate(ways, 1)})
    honest = chi_square(fold, "dice")
    assert honest.statistic < 1e-9 and honest.p_value > 0.999
    assert "expected 1-8: 2800.00 2800.00" in honest.lines("dice")[0]
    # uniform counts are what fair dice do not give: 21,600 numbers, 2,700 each
    fold.lifetime.update({f"paigow.dice.{n}": 2700 for n in range(1, 9)})
    expected = [100 * w for w in ways]
    stat = sum((2700 - e) ** 2 / e for e in expected)
    uniform = chi_square(fold, "dice")
    assert abs(uniform.statistic - stat) < 1e-9 and uniform.p_value < 1e-6
    # the RNG's numbers stay tested against one in eight
    fold.lifetime.update({f"paigow.rng.{n}": 2700 for n in range(1, 9)})
    assert chi_square(fold).statistic == 0.0


def test_verify_seed_runs_count_each_folded_run_and_no_failed_one() -> None:
    """docs/meters.md: every `verify SEED` run is a program verification. The console folds
    repeats into one counted row a minute (controller/journal/summary.py): it stands for
    ``count`` runs. A run whose HMAC could not be computed (the host's, a file unreadable)
    verified nothing: no meter, no event 131."""
    mac = {"seed": "00" * 16, "hmac": "ab" * 32, "files": 3, "source": "serial"}
    rows = _rows(
        ("program.hmac", {**mac, "count": 1}),
        ("program.hmac", {**mac, "count": 4, "folded": True}),
        ("program.hmac", {"seed": "00" * 16, "error": "OSError: unreadable", "source": "host"}),
    )
    assert MeterFold().add_all(rows).lifetime["program_verifications"] == 5
    reader = EventReader()
    assert [e.code for r in rows for e in reader.events(r)] == [131, 131]


def test_a_meter_that_goes_back_is_named() -> None:
    assert went_back({"a": 3, "b": 1}, {"a": 4, "b": 1}) == ["a: 4 -> 3"]


def test_events_from_rows_once_each() -> None:
    rows = _rows(
        ("app.start", {"game": "paigow"}),
        ("paigow.rng_fault", {"reason": "stuck"}),
        ("app.start", {"game": "paigow"}),
        ("paigow.recovered", {"state": "dealing"}),
        ("program.release_changed", {"old": {"version": "1"}, "new": {"version": "2"}}),
        ("program.release_changed", {"old": {}, "new": {}, "carried_from": 5}),
    )
    reader = EventReader()
    codes = [e.code for r in rows for e in reader.events(r)]
    assert codes == [100, 120, 100, 101, 200]
    assert reader.events(rows[1]) == []  # a row fed twice raises nothing twice


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "app.start",
                    "app.shutdown",
                    "paigow.drawn",
                    "paigow.dice",
                    "paigow.settled",
                    "paigow.voided",
                    "baccarat.coup.result",
                    "baccarat.coup.voided",
                    "console.login_failed",
                    "shoe.frame",
                    "paigow.recovered",
                    "baccarat.recovery",
                    "baccarat.irregularity",
                    "program.checked",
                    "clock.warning",
                    "x.y",
                ]
            ),
            st.dictionaries(
                st.sampled_from(
                    [
                        "record",
                        "player",
                        "banker",
                        "winner",
                        "checked",
                        "state",
                        "type",
                        "ok",
                        "kind",
                        "coup",
                        "cards",
                        "number",
                    ]
                ),
                st.recursive(
                    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                    lambda c: (
                        st.lists(c, max_size=3)
                        | st.dictionaries(st.text(max_size=6), c, max_size=3)
                    ),
                    max_leaves=6,
                ),
                max_size=4,
            ),
        ),
        max_size=20,
    )
)
def test_junk_rows_never_crash(specs: list[tuple[str, dict[str, Any]]]) -> None:
    rows = _rows(*specs)
    fold = MeterFold().add_all(rows)
    reader = EventReader()
    for r in rows:
        for e in reader.events(r):
            json.dumps(e.as_dict())
    json.dumps(fold.as_dict())
    fold.lines()


class _Source:
    def __init__(self, rows: list[PlainRow]) -> None:
        self.rows = rows

    def events(self, kinds: Any = None, since_seq: int = 0, round_id: int | None = None) -> Any:
        return iter(self.rows)

    def close(self) -> None:
        pass


def test_floor_feed_primes_then_publishes_events_and_meters() -> None:
    rows = _rows(
        ("app.start", {"game": "paigow"}),
        ("paigow.settled", {}),
        ("paigow.rng_fault", {"reason": "stuck"}),
        ("paigow.voided", {"record": {}}),
    )
    feed = FloorFeed("t1", lambda: _Source(rows), None)

    def as_dict(r: PlainRow) -> dict[str, Any]:
        return {"seq": r.seq, "kind": r.kind, "round": r.round, "data": r.data, "ts": 5}

    assert feed.after_row(as_dict(rows[2])) == [("events", feed._recent[3][0])]
    event = json.loads(feed._recent[3][0])
    assert (event["code"], event["seq"], event["ts"], event["details"]) == (
        120,
        3,
        5,
        {"reason": "stuck"},
    )
    out = feed.after_row(as_dict(rows[3]))  # a round closed: the meters, retained
    meters = json.loads(out[-1][1])
    assert out[-1][0] == "meters"
    assert meters["lifetime"] == {
        "power_ups": 1,
        "paigow.games_played": 1,
        "faults.rng": 1,
        "paigow.voided_before_draw": 1,
    }
    assert [c for c, _ in feed.idle()] == ["meters"]  # caught up: published once more
    assert feed.idle() == []  # unchanged since
    assert feed.after_row(as_dict(rows[2])) == [("events", feed._recent[3][0])]  # sent again


def test_release_identity_names_the_manifest(tmp_path: Path, monkeypatch: Any) -> None:
    import hashlib

    from controller.program.identity import running_identity

    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}", encoding="utf-8")
    monkeypatch.setenv("TABLE_CONTROLLER_MANIFEST", str(manifest))
    ident = running_identity()
    assert ident.manifest == hashlib.sha256(b"{}").hexdigest()
    assert ident.same_release({**ident.as_dict(), "root": "/elsewhere", "carried_from": 3})
    assert not ident.same_release({**ident.as_dict(), "manifest": "0" * 64})


def test_meters_lower_than_last_published_are_reported(tmp_path: Path) -> None:
    rows = _rows(("app.start", {"game": "paigow"}), ("paigow.settled", {}))
    high = tmp_path / "meters.published"
    reports: list[list[str]] = []

    def as_dict(r: PlainRow) -> dict[str, Any]:
        return {"seq": r.seq, "kind": r.kind, "round": r.round, "data": r.data, "ts": 0}

    first = FloorFeed("t1", lambda: _Source(rows), None, high_path=high, report=reports.append)
    first.after_row(as_dict(rows[0]))
    first.after_row(as_dict(rows[1]))
    assert [c for c, _ in first.idle()] == ["meters"]
    assert json.loads(high.read_text())["lifetime"]["paigow.games_played"] == 1
    # the journal put back to a copy from before the settled round
    again = FloorFeed("t1", lambda: _Source(rows[:1]), None, high_path=high, report=reports.append)
    again.after_row(as_dict(rows[0]))
    again.idle()
    assert reports == [["paigow.games_played: 1 -> 0"]]


def test_the_boards_power_rows_are_meters_and_events() -> None:
    rows = _rows(
        ("power.undervoltage", {"active": True, "detail": "4.6 V", "count": 1}),
        ("power.undervoltage", {"active": False, "detail": "5.1 V", "count": 1}),
        ("power.fail", {"asserted": True, "pin": 24, "count": 1}),
        ("power.throttled", {"active": True, "detail": "85 C", "count": 1}),
    )
    m = MeterFold().add_all(rows).lifetime
    assert m == {"board.undervoltage": 1, "board.power_fail": 1, "board.throttling": 1}
    reader = EventReader()
    assert [e.code for r in rows for e in reader.events(r)] == [230, 233, 232, 231]


def test_a_failing_derivation_never_stops_the_rows(tmp_path: Path) -> None:
    """The publisher sends the rows (the record) even when reading events from them fails."""
    from controller.feed.broker import BrokerSettings
    from controller.feed.publisher import Publisher, PublisherSettings, _Session

    class Broken:
        def after_row(self, row: dict[str, Any]) -> list[Any]:
            raise OSError("the journal's reader is gone")

        def idle(self) -> list[Any]:
            raise ValueError("junk")

    settings = PublisherSettings(BrokerSettings("127.0.0.1", 1, False), "s", "t", tmp_path / "p")
    pub = Publisher(settings, lambda: None, derived=Broken())  # type: ignore[arg-type,return-value]
    session = _Session.__new__(_Session)
    session.pub = pub
    assert session._derive(lambda d: d.after_row({})) == []
    assert session._derive(lambda d: d.idle()) == []


def test_shoe_sessions_new_lost_and_confirmed() -> None:
    rows = _rows(
        ("shoe.session", {"sid": "A1", "seq": 1, "model": "sim"}),
        ("baccarat.shoe.start", {"shoe": 1, "decks": 8}),
        ("shoe.session", {"sid": "B2", "seq": 1, "previous": {"sid": "A1", "last_seq": 40}}),
        ("baccarat.shoe.resumed", {"sid": "B2", "who": "technician@stdio"}),
    )
    reader = EventReader()
    events = [e for r in rows for e in reader.events(r)]
    assert [e.code for e in events] == [153, 151, 150, 152]
    assert events[2].details["previous"] == {"sid": "A1", "last_seq": 40}

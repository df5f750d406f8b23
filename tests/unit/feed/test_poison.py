"""Messages that once stopped the collector (docs/feed.md "Malformed messages"): each is
``malformed`` for its table, nothing of it is stored, and the rows after it still are; and the
table's will arriving during a round is alarmed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.feed import messages
from controller.feed.messages import MessageError, decode_row, status_payload
from controller.feed.store import Store
from controller.journal.chain import GENESIS, row_hash
from tests.feed_hostile import poisons
from tests.feed_journal import TableJournal
from tests.unit.feed.test_verifier import SITE, Rig

BIG = 2**63  # one more than a signed 64-bit column holds


def _row(**change: Any) -> dict[str, Any]:
    fields = {
        "seq": 1,
        "ts": 1_800_000_000 * 10**9,
        "boot": "b",
        "mono": 5,
        "kind": "paigow.drawn",
        "round": 1,
        "data": {"n": 1},
        **change,
    }
    return {"v": 2, **fields, "prev": GENESIS, "hash": row_hash(GENESIS, fields)}


def _bytes(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode("ascii")


POISONS = {
    **{f"{name} 2**63": _bytes(_row(**{name: BIG})) for name in ("seq", "ts", "mono", "round")},
    "seq 2**64": _bytes(_row(seq=2**64)),
    "round -1": _bytes(_row(round=-1)),
    "100 kB of [": b"[" * 100_000,
    "100 kB of {": b'{"a":' * 20_000,
    "deep data": _bytes(_row()).replace(b'{"n":1}', b'{"n":' + b"[" * 40 + b"]" * 40 + b"}"),
    "not UTF-8": b'{"v":2,"seq":\xff\xfe}',
    "seq a string": _bytes(_row(seq="1")),
    "seq a bool": _bytes(_row(seq=True)),
    "round a float": _bytes(_row(round=1.0)),
    "data a list": _bytes({**_row(), "data": []}),
    "NUL in a string": _bytes(_row(kind="paigow.\u0000drawn")),
    "lone surrogate": _bytes({**_row(), "boot": "\ud800"}),
    "1e400": _bytes(_row()).replace(b'{"n":1}', b'{"n":1e400}'),
    "-2**63-1 in data": _bytes(_row()).replace(b'{"n":1}', b'{"n":-9223372036854775809}'),
    "15e308 in data": _bytes(_row()).replace(b'{"n":1}', b'{"n":[0.5,15e308]}'),
}


def test_the_poisons_hash_correctly() -> None:
    # the 2**63 rows are what a table's certificate holder can send: their hash is right
    for name in ("seq", "ts", "mono", "round"):
        obj = json.loads(POISONS[f"{name} 2**63"])
        fields = {k: obj[k] for k in ("seq", "ts", "boot", "mono", "kind", "round", "data")}
        assert obj[name] == BIG and row_hash(GENESIS, fields) == obj["hash"]


@pytest.mark.parametrize("name", sorted(POISONS))
def test_a_poison_is_malformed_and_the_rows_after_it_are_stored(tmp_path: Path, name: str) -> None:
    honest, evil = TableJournal("table-07"), TableJournal("evil-01")
    rig = Rig(tmp_path, honest, evil)
    rig.raw(f"tc/{SITE}/evil-01/rows", POISONS[name])
    for r in honest.rounds(2, 2):
        rig.row(honest, r)
    alarms = rig.store.alarms()
    assert [(a.table, a.kind) for a in alarms] == [("evil-01", "malformed")]
    assert rig.store.rows(SITE, "evil-01") == []
    assert rig.seqs(honest) == [1, 2, 3, 4]


def test_the_largest_integers_the_store_holds_are_accepted(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    top = 2**63 - 1
    payload = _bytes(_row(ts=top, mono=top, round=top))
    assert decode_row(payload)["ts"] == top
    rig.raw(f"tc/{SITE}/table-07/rows", payload)
    assert rig.kinds() == []
    assert rig.store.rows(SITE, "table-07")[0]["round"] == top


@pytest.mark.parametrize("payload", [b"[" * 100_000, b'{"a":' * 50_000, b"[{" * 40_000])
def test_deep_nesting_is_refused_before_the_parser(payload: bytes) -> None:
    with pytest.raises(MessageError, match="nested deeper"):
        decode_row(payload)


def test_heads_and_statuses_out_of_range_are_malformed(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    t.append()
    head = t.sign().as_dict()
    rig.raw(f"tc/{SITE}/table-07/heads", _bytes({"v": 2, **head, "seq": BIG}))
    rig.raw(f"tc/{SITE}/table-07/heads", _bytes({"v": 2, **head, "ts": -1}))
    rig.raw(f"tc/{SITE}/table-07/status", _bytes({"v": 2, "state": "online", "ts": BIG}))
    assert rig.kinds() == ["malformed"]
    assert rig.store.alarms()[0].count == 3
    assert all(r.status == "" for r in rig.store.tables())  # no status taken from them


def test_the_issues_named_poisons_are_in_the_fuzz_set() -> None:
    named = dict.fromkeys(p for _, p in poisons())
    assert b"[" * 100_000 in named
    assert sum(1 for p in named if str(BIG).encode() in p) == 4


# -- the will during a round ---------------------------------------------------------------------


def _status(rig: Rig, state: str) -> None:
    rig.raw(f"tc/{SITE}/table-07/status", status_payload(state, 1))  # type: ignore[arg-type]


def _paigow(t: TableJournal, kind: str, trigger: str, before: str, after: str, rnd: int) -> Any:
    return t.append(kind, {"trigger": trigger, "from": before, "state": after}, rnd)


def test_offline_during_a_paigow_round_is_alarmed(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    for r in (
        _paigow(t, "paigow.state", "open", "inspection", "washing", 4),
        _paigow(t, "paigow.state", "stacked", "washing", "betting", 4),
        _paigow(t, "paigow.state", "no_more_bets", "betting", "no_more_bets", 4),
        _paigow(t, "paigow.drawn", "draw", "no_more_bets", "dealing", 4),
        t.append("paigow.input", {"button": "x"}, 4),
    ):
        rig.row(t, r)
    _status(rig, "online")
    _status(rig, "offline")
    _status(rig, "offline")  # the retained will again: one alarm
    alarms = rig.store.alarms()
    assert [(a.kind, a.count) for a in alarms] == [("offline-in-round", 1)]
    assert "round 4" in alarms[0].detail


def test_the_feeds_round_states_are_the_tables() -> None:
    from controller.feed.floor import ROUND_STATES
    from controller.tables.baccarat.machine import COUP_STATES
    from controller.tables.paigow.definition import IN_ROUND

    assert ROUND_STATES == {"paigow": IN_ROUND, "baccarat": frozenset((*COUP_STATES, "settling"))}


def test_offline_between_rounds_is_not_alarmed(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    for r in (
        _paigow(t, "paigow.drawn", "draw", "no_more_bets", "dealing", 4),
        _paigow(t, "paigow.settled", "settled", "dealer_hands", "washing", 4),
        _paigow(t, "paigow.state", "idle", "washing", "inspection", 5),
    ):
        rig.row(t, r)
    _status(rig, "offline")
    assert rig.kinds() == []


def test_offline_during_a_baccarat_coup_is_alarmed_and_not_after_it(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    rig.row(t, t.append("baccarat.bet", {"seat": 1, "moved": ["passing>betting"]}, 9))
    _status(rig, "offline")
    assert rig.kinds() == []  # betting: no coup under way
    _status(rig, "online")
    rig.row(t, t.append("baccarat.card", {"card": "AS", "moved": ["betting>dealing"]}, 9))
    _status(rig, "offline")
    assert rig.kinds() == ["offline-in-round"]
    _status(rig, "online")
    rig.row(t, t.append("baccarat.coup.settled", {"shoe": 1, "coup": 9}, 9))
    _status(rig, "offline")
    assert rig.kinds() == ["offline-in-round"]


def test_the_store_refuses_what_does_not_fit_as_a_store_error(tmp_path: Path) -> None:
    from controller.feed.store import StoreError

    store = Store.open(f"sqlite:///{tmp_path / 's.sqlite'}")
    with pytest.raises(StoreError):
        store.execute("SELECT ?", (BIG,))
    with pytest.raises(StoreError):
        store.execute("SELECT ?", ("\ud800",))
    store.close()


# -- integers checked as parsed: 19-digit nanosecond timestamps are not walked -----------------


def test_a_nanosecond_timestamp_is_accepted_without_the_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[object] = []
    monkeypatch.setattr(messages, "_storable", walked.append)
    assert decode_row(_bytes(_row(ts=1_800_000_000_123_456_789)))["ts"] == 1_800_000_000_123_456_789
    decode_row(_bytes(_row(ts=2**63 - 1, data={"n": -(2**63)})))  # the extremes that fit
    with pytest.raises(MessageError, match="exceeds signed 64 bits"):
        decode_row(_bytes(_row(ts=2**63)))  # refused as it is parsed
    with pytest.raises(MessageError, match="exceeds signed 64 bits"):
        decode_row(_bytes(_row(data={"n": [1, -(2**63) - 1]})))
    assert walked == []  # no \u escape: only the parser looked at the numbers
    decode_row(_bytes(_row(kind="paigow.\u00e9")))
    assert len(walked) == 1  # a \u escape: walked for NUL and lone surrogates


def test_a_signed_row_with_a_nanosecond_timestamp_is_stored(tmp_path: Path) -> None:
    t = TableJournal("table-07")
    rig = Rig(tmp_path, t)
    rows = [t.append(), t.append()]
    assert all(len(str(r.ts)) == 19 for r in rows)  # the journal's clock is in nanoseconds
    for r in rows:
        rig.row(t, r)
    assert rig.kinds() == [] and rig.seqs(t) == [1, 2]


@pytest.mark.parametrize(
    ("value", "fits"),
    [(2**63, False), (2**63 - 1, True), (-(2**63), True), (-(2**63) - 1, False), (10**19, False)],
)
def test_an_integer_beyond_64_bits_in_data_is_refused(value: int, fits: bool) -> None:
    payload = _bytes(_row(data={"n": value, "at": 1_800_000_000 * 10**9}))
    if fits:
        assert decode_row(payload)["data"]["n"] == value
    else:
        with pytest.raises(MessageError, match="exceeds signed 64 bits"):
            decode_row(payload)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(min_value=-(2**64), max_value=2**64),
            st.integers(min_value=2**63 - 3, max_value=2**63 + 3),
            st.integers(min_value=-(2**63) - 3, max_value=-(2**63) + 3),
            st.integers(min_value=10**18, max_value=10**19),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_exactly_the_integers_beyond_64_bits_are_refused(values: list[int]) -> None:
    payload = _bytes(_row(data={"ns": values}))
    if all(-(2**63) <= v <= 2**63 - 1 for v in values):
        assert decode_row(payload)["data"]["ns"] == values
    else:
        with pytest.raises(MessageError, match="exceeds signed 64 bits"):
            decode_row(payload)


_ROW_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(min_value=2**63 - 2, max_value=2**63 + 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "boot-1", "a" * 64, "A" * 64, "0" * 63, "f" * 65, "0" * 64]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_GOOD_ROW: dict[str, object] = {
    "seq": 1,
    "ts": 1_700_000_000_000_000_000,
    "boot": "boot-1",
    "mono": 5,
    "kind": "app.start",
    "round": None,
    "data": {},
    "prev": "0" * 64,
    "hash": "ab" * 32,
}


@settings(max_examples=400)
@given(
    st.dictionaries(st.sampled_from(sorted(_GOOD_ROW)), _ROW_VALUE, max_size=4),
    st.sets(st.sampled_from(sorted(_GOOD_ROW)), max_size=2),
)
def test_a_rows_quick_check_takes_exactly_what_the_field_by_field_check_takes(
    changed: dict[str, object], dropped: set[str]
) -> None:
    """``as_row`` checks a row's fields in one expression and falls back to the readers only
    to name what is wrong: both take the same rows, and every row the readers refuse is
    refused with their words."""
    obj = {k: v for k, v in {**_GOOD_ROW, **changed}.items() if k not in dropped}
    try:
        expected: object = messages._checked_row(obj)
    except MessageError as exc:
        expected = ("refused", str(exc))
    try:
        got: object = messages.as_row(obj)
    except MessageError as exc:
        got = ("refused", str(exc))
    assert got == expected

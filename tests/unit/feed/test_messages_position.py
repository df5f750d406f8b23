"""The feed's topics and message shapes (docs/journal.md "Feed message shapes") and the
publisher's durable position (controller/feed/position.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.feed.broker import BrokerError, parse_broker_url
from controller.feed.messages import (
    MessageError,
    decode_head,
    decode_row,
    decode_status,
    head_payload,
    parse_topic,
    row_payload,
    status_payload,
    topic,
)
from controller.feed.position import Position, PositionError, load_position, save_position
from controller.journal.chain import row_hash
from tests.feed_journal import TableJournal


def test_topics_follow_the_design() -> None:
    assert topic("vegas-1", "pg-07", "rows") == "tc/vegas-1/pg-07/rows"
    assert parse_topic("tc/vegas-1/pg-07/heads").channel == "heads"
    # the host's commands and the table's replies are on the table's subtree too
    assert parse_topic("tc/vegas-1/pg-07/cmd").channel == "cmd"
    assert parse_topic("tc/vegas-1/pg-07/reply").channel == "reply"
    for bad in ("tc/a/b", "tc/a/b/c/d", "xx/a/b/rows", "tc/+/b/rows", "tc/a/b/other"):
        with pytest.raises(MessageError):
            parse_topic(bad)
    with pytest.raises(MessageError):
        topic("a/b", "t", "rows")


def test_a_row_message_is_its_fields_and_recomputes_to_its_hash() -> None:
    j = TableJournal("pg-07")
    row = j.append("paigow.drawn", {"number": 5, "é": "ü"}, 3)
    payload = row_payload(row.as_dict())
    obj = json.loads(payload)
    assert obj["v"] == 2
    assert set(obj) == {"v", "seq", "ts", "boot", "mono", "kind", "round", "data", "prev", "hash"}
    decoded = decode_row(payload)
    assert row_hash(decoded["prev"], decoded) == decoded["hash"] == row.hash


def test_head_and_status_messages() -> None:
    j = TableJournal("pg-07")
    j.append()
    head = j.sign()
    decoded = decode_head(head_payload(head.as_dict()))
    assert decoded == head.as_dict()
    assert decode_status(status_payload("offline", 5)) == {"state": "offline", "ts": 5}


@pytest.mark.parametrize(
    "change",
    [
        {"seq": 0},
        {"seq": "1"},
        {"round": 1.5},
        {"data": []},
        {"prev": "AB" * 32},
        {"hash": "00"},
        {"kind": ""},
        {"boot": None},
        {"ts": -1},
    ],
)
def test_a_row_of_the_wrong_shape_is_refused(change: dict[str, object]) -> None:
    j = TableJournal("pg-07")
    fields = j.append().as_dict() | change
    with pytest.raises(MessageError):
        decode_row(json.dumps({"v": 2, **fields}).encode())


def test_broker_urls() -> None:
    b = parse_broker_url("mqtts://broker.lan", ca="/c", cert="/a", key="/b")
    assert (b.host, b.port, b.tls) == ("broker.lan", 8883, True)
    assert parse_broker_url("mqtt://127.0.0.1").port == 1883
    for url in ("http://x", "mqtt://", "mqtts://x/y", "mqtts://u:p@x"):
        with pytest.raises(BrokerError):
            parse_broker_url(url)
    with pytest.raises(BrokerError):
        parse_broker_url("mqtt://x", cert="/a", key="/b")
    with pytest.raises(BrokerError):
        parse_broker_url("mqtts://x", cert="/a")


def test_the_position_survives_and_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "feed.position"
    assert load_position(path) == Position()
    save_position(path, Position(41, "ab" * 32, 40))
    save_position(path, Position(42, "cd" * 32, 40))
    assert load_position(path) == Position(42, "cd" * 32, 40)
    assert [p.name for p in tmp_path.iterdir()] == ["feed.position"]  # no temp file left
    path.write_text("{torn")
    with pytest.raises(PositionError):
        load_position(path)

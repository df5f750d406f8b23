"""The feed through a real Mosquitto (TLS, a client certificate per table, the ACL
``tc/+/%u/#``): rows and heads in order to the collector, the ACL refusing another table's
topic, the broker stopped during play, the collector killed and restarted, a forged head and a
row that breaks the chain sent over the broker (docs/feed.md "Failures")."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from controller.feed.messages import head_payload, row_payload
from controller.feed.store import Store
from controller.journal.chain import row_hash, verify_rows
from tests.feed_journal import TableJournal
from tests.feed_rig import (
    CollectorThread,
    collect_process,
    kill,
    publisher,
    stored,
    wait_for,
    write_keys,
)

if TYPE_CHECKING:
    from tests.services.mosquitto import MosquittoBroker

if importlib.util.find_spec("tests.services") is None:
    # the real-services fixtures (mosquitto_broker, postgres_server) come with tests/services
    pytest.skip(
        "MISSING tests/services (the real-services fixtures): the feed's broker tests need them",
        allow_module_level=True,
    )

SITE = "site1"


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'collector.sqlite'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The collector's store on SQLite and on a real PostgreSQL (``postgres_server``)."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'collector.sqlite'}"


def _alarms(store_url: str) -> list[str]:
    store = Store.open(store_url)
    try:
        return [a.kind for a in store.alarms()]
    finally:
        store.close()


def test_rows_and_heads_reach_the_collector_in_order(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, any_store_url: str
) -> None:
    store_url = any_store_url
    t7, t8 = TableJournal("table-07"), TableJournal("table-08")
    collector = CollectorThread(mosquitto_broker, store_url, write_keys(tmp_path / "k", t7, t8))
    try:
        pubs = [publisher(mosquitto_broker, t, t.table, tmp_path) for t in (t7, t8)]
        for t in (t7, t8):
            t.rounds(10)
            t.sign()
        for p in pubs:
            p.wake()
        for t, p in zip((t7, t8), pubs, strict=True):
            wait_for(
                lambda t=t: len(stored(store_url, SITE, t.table)) == 30,
                20,
                f"{t.table}'s 30 rows stored",
            )
            wait_for(lambda p=p: p.state().acked_head == 30, 10, "head acknowledged")
            rows = stored(store_url, SITE, t.table)
            assert [r["hash"] for r in rows] == [r.hash for r in t.rows]
            assert verify_rows(rows).ok
            state = p.state()
            assert state.connected and state.acked_seq == 30
            assert state.describe(30) == "connected, backlog 0, acked seq 30"
        for p in pubs:
            p.stop()

        def tables() -> dict[str, Any]:
            store = Store.open(store_url)
            try:
                return {r.table: r for r in store.tables()}
            finally:
                store.close()

        # "offline", said on stop, reaches the collector's store a moment later
        wait_for(
            lambda: [r.status for r in tables().values()] == ["offline", "offline"],
            10,
            "offline stored for both tables",
        )
        recs = tables()
        for t in (t7, t8):
            assert (recs[t.table].signed_seq, recs[t.table].last_round) == (30, 10)
            assert recs[t.table].status == "offline"
    finally:
        collector.stop()
    assert _alarms(store_url) == []


def test_the_acl_refuses_another_tables_topic(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    from tests.services.mqtt import NOT_AUTHORIZED, MqttTestClient

    t7, t8 = TableJournal("table-07"), TableJournal("table-08")
    collector = CollectorThread(mosquitto_broker, store_url, write_keys(tmp_path / "k", t7, t8))
    try:
        forged = t8.rounds(1, 1)[0]
        with MqttTestClient.connect_to(mosquitto_broker, "table-07") as c:
            rc = c.publish(f"tc/{SITE}/table-08/rows", row_payload(forged.as_dict()))
            assert rc is not None and rc.value == NOT_AUTHORIZED
            ok = c.publish(f"tc/{SITE}/table-07/status", b'{"v":2,"state":"online","ts":1}')
            assert ok is not None and not ok.is_failure
        # a publisher whose certificate is table-07's but whose profile says table-08
        t8.sign()
        pub = publisher(mosquitto_broker, t8, "table-08", tmp_path, identity="table-07")
        try:
            wait_for(lambda: pub.state().state == "refused", 10, "publisher refused")
            assert "0x87" in pub.state().error or "authori" in pub.state().error.lower()
            assert pub.state().acked_seq == 0
        finally:
            pub.stop()
        wait_for(
            lambda: any(r.table == "table-07" for r in Store.open(store_url).tables()),
            10,
            "table-07's own status stored",
        )
    finally:
        collector.stop()
    assert stored(store_url, SITE, "table-08") == []


def test_broker_stopped_during_play_loses_and_repeats_nothing(
    make_mosquitto_broker: Callable[..., MosquittoBroker], tmp_path: Path, any_store_url: str
) -> None:
    store_url = any_store_url
    t7 = TableJournal("table-07")
    # as a floor runs it: the collector's session survives the restart
    mosquitto_broker = make_mosquitto_broker(persistence=True)
    collector = CollectorThread(mosquitto_broker, store_url, write_keys(tmp_path / "k", t7))
    pub = publisher(mosquitto_broker, t7, "table-07", tmp_path)
    try:
        t7.rounds(5)
        pub.wake()
        wait_for(lambda: len(stored(store_url, SITE, "table-07")) == 15, 20, "first rounds")
        mosquitto_broker.stop()
        wait_for(lambda: not pub.state().connected, 10, "publisher sees the broker down")
        for _ in range(10):  # play goes on while the broker is down
            t7.rounds(1)
            t7.sign()
            pub.wake()
        state = pub.state()
        assert state.acked_seq == 15 and state.describe(len(t7.rows)).startswith("down")
        assert "backlog 30" in state.describe(len(t7.rows))
        mosquitto_broker.start()
        wait_for(lambda: pub.state().acked_seq == 45, 30, "backlog acknowledged")
        wait_for(lambda: len(stored(store_url, SITE, "table-07")) == 45, 20, "backlog stored")
        rows = stored(store_url, SITE, "table-07")
        assert [r["seq"] for r in rows] == list(range(1, 46))
        assert [r["hash"] for r in rows] == [r.hash for r in t7.rows]
        assert not any(r["gap_before"] for r in rows)
    finally:
        pub.stop()
        collector.stop()
    assert _alarms(store_url) == []


def test_collector_killed_and_restarted_loses_nothing(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    t7 = TableJournal("table-07")
    keys = write_keys(tmp_path / "k", t7)
    log = tmp_path / "collector.log"
    proc = collect_process(mosquitto_broker, store_url, keys, log)
    # the first start makes the broker's session: rows before it are not kept for it
    wait_for(lambda: "subscribed" in log.read_text(), 20, "collector subscribed")
    pub = publisher(mosquitto_broker, t7, "table-07", tmp_path)
    try:
        t7.rounds(5)
        pub.wake()
        wait_for(lambda: len(stored(store_url, SITE, "table-07")) == 15, 30, "first rows stored")
        for _ in range(20):  # the collector dies mid-stream
            t7.rounds(2)
            pub.wake()
        kill(proc)
        for _ in range(20):
            t7.rounds(2)
            t7.sign()
            pub.wake()
        wait_for(lambda: pub.state().acked_seq == len(t7.rows), 20, "all acknowledged")
        proc = collect_process(mosquitto_broker, store_url, keys, log)
        wait_for(
            lambda: len(stored(store_url, SITE, "table-07")) == len(t7.rows),
            30,
            "every row stored after the restart",
        )
        rows = stored(store_url, SITE, "table-07")
        assert [r["hash"] for r in rows] == [r.hash for r in t7.rows]
    finally:
        pub.stop()
        kill(proc, 15)
    assert _alarms(store_url) == []
    assert "ALARM" not in log.read_text()


def test_forged_head_and_broken_row_over_the_broker_are_refused(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    """Someone holding table-07's broker certificate, not its journal key, sends a head signed
    with another key, a row chained on nothing and a payload that is not JSON: each is refused
    with its alarm and nothing of it is stored; the table's own rows keep flowing. A row they
    chain correctly onto the last one is stored, and the table's next signed head exposes it
    (``fork``): rows are trusted up to the newest head that matches (``signed_seq``)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    from tests.services.mqtt import MqttTestClient

    t7 = TableJournal("table-07")
    collector = CollectorThread(mosquitto_broker, store_url, write_keys(tmp_path / "k", t7))
    rows_topic = f"tc/{SITE}/table-07/rows"
    try:
        rows = t7.rounds(2)
        with MqttTestClient.connect_to(mosquitto_broker, "table-07", client_id="intruder") as c:
            for r in rows[:3]:
                c.publish(rows_topic, row_payload(r.as_dict()))
            forged = t7.sign(3, key=ec.generate_private_key(ec.SECP256R1()))
            t7.heads.remove(forged)
            c.publish(f"tc/{SITE}/table-07/heads", head_payload(forged.as_dict()))
            broken = rows[3].as_dict() | {"data": {"number": 8}, "prev": "ab" * 32}
            broken["hash"] = row_hash(broken["prev"], broken)
            c.publish(rows_topic, json.dumps({"v": 2, **broken}).encode())
            c.publish(rows_topic, b"not json")
            wait_for(
                lambda: {"bad-signature", "chain", "malformed"} <= set(_alarms(store_url)),
                10,
                "three alarms",
            )
            assert [r["seq"] for r in stored(store_url, SITE, "table-07")] == [1, 2, 3]
            c.publish(rows_topic, row_payload(rows[3].as_dict()))  # the genuine row 4
            wait_for(lambda: len(stored(store_url, SITE, "table-07")) == 4, 10, "row 4")
            # an injected row that does chain: stored, until the table's signed head says no
            injected = rows[4].as_dict() | {"data": {"number": 1}}
            injected["hash"] = row_hash(injected["prev"], injected)
            c.publish(rows_topic, json.dumps({"v": 2, **injected}).encode())
            wait_for(lambda: len(stored(store_url, SITE, "table-07")) == 5, 10, "row 5")
            c.publish(f"tc/{SITE}/table-07/heads", head_payload(t7.sign(5).as_dict()))
            wait_for(lambda: "fork" in _alarms(store_url), 10, "fork alarm")
    finally:
        collector.stop()
    assert [r["hash"] for r in stored(store_url, SITE, "table-07")][:4] == [
        r.hash for r in rows[:4]
    ]
    store = Store.open(store_url)
    assert store.tables()[0].signed_seq == 0
    store.close()
    printed = [line for line in collector.lines if line.startswith("ALARM")]
    assert {line.split()[3].rstrip(":") for line in printed} == {
        "bad-signature",
        "chain",
        "malformed",
        "fork",
    }


def test_publisher_sigkilled_mid_publish_resumes_from_its_position(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, store_url: str
) -> None:
    """The publisher's process killed (SIGKILL) while a backlog is going out: started again,
    it resumes from the last position it saved; the collector stores every row exactly once
    (what was sent twice is dropped as a duplicate) and raises no alarm."""
    import subprocess
    import sys

    from tests.feed_publisher_proc import write_journal
    from tests.feed_rig import ROOT

    t7 = TableJournal("table-07")
    jdir, state = tmp_path / "journal", tmp_path / "state"
    jdir.mkdir()
    state.mkdir()
    pair = mosquitto_broker.make_client_cert("table-07")
    argv = [
        sys.executable,
        "-m",
        "tests.feed_publisher_proc",
        str(jdir),
        str(state),
        mosquitto_broker.host,
        str(mosquitto_broker.port),
        str(mosquitto_broker.ca_path),
        str(pair.cert_path),
        str(pair.key_path),
        SITE,
        "table-07",
    ]
    collector = CollectorThread(mosquitto_broker, store_url, write_keys(tmp_path / "k", t7))
    log = open(tmp_path / "pub.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=log)
    try:
        t7.rounds(20)
        t7.sign()
        write_journal(jdir, t7.rows, t7.heads)
        wait_for(lambda: len(stored(store_url, SITE, "table-07")) >= 60, 20, "first rows")
        t7.rounds(600)  # a backlog of 1800 rows
        t7.sign()
        write_journal(jdir, t7.rows, t7.heads)
        wait_for(lambda: len(stored(store_url, SITE, "table-07")) > 200, 20, "backlog moving")
        kill(proc)  # mid-publish
        got = len(stored(store_url, SITE, "table-07"))
        assert got < len(t7.rows), "the backlog was all out before the kill: no test"
        saved = json.loads((state / "feed.position").read_text())["row_seq"]
        # the position moves at the broker's PUBACK, which can come before the collector has
        # stored the row: every row the broker acknowledged reaches the collector all the same
        assert 0 < saved < len(t7.rows)
        wait_for(
            lambda: len(stored(store_url, SITE, "table-07")) >= saved,
            20,
            "every row the broker acknowledged before the kill",
        )
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=log)
        wait_for(
            lambda: len(stored(store_url, SITE, "table-07")) == len(t7.rows),
            60,
            "every row after the restart",
        )
        store = Store.open(store_url)
        wait_for(lambda: store.tables()[0].signed_seq == len(t7.rows), 10, "head matched")
        store.close()
    finally:
        kill(proc, 15)
        log.close()
        collector.stop()
    rows = stored(store_url, SITE, "table-07")
    assert [r["hash"] for r in rows] == [r.hash for r in t7.rows]
    assert _alarms(store_url) == []


def test_history_sent_again_after_the_retained_newest_head_raises_nothing(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, any_store_url: str
) -> None:
    """The docs' remedy for a lost feed (delete ``feed.position``: the table sends its journal
    again from row 1) to a collector that never had the older heads: the broker hands it the
    retained newest head first, then rows and heads from 1. Judged against the stored record,
    none of it is a ``rollback``."""
    store_url = any_store_url
    t = TableJournal("table-07")
    t.rounds(10)
    for seq in range(3, 31, 3):
        t.sign(seq)
    first = publisher(mosquitto_broker, t, t.table, tmp_path / "a")
    try:
        first.wake()
        wait_for(lambda: first.state().acked_head == 30, 20, "every head published")
    finally:
        first.stop()
    # nobody subscribed: the rows went to no one; head 30 and the status are retained
    collector = CollectorThread(mosquitto_broker, store_url, write_keys(tmp_path / "k", t))
    try:
        wait_for(lambda: _head_seq(store_url) == 30, 20, "the retained head 30 received first")
        again = publisher(mosquitto_broker, t, t.table, tmp_path / "b")  # no position: from 1
        try:
            again.wake()
            wait_for(lambda: len(stored(store_url, SITE, t.table)) == 30, 20, "30 rows stored")
            wait_for(lambda: again.state().acked_head == 30, 20, "heads sent again")
        finally:
            again.stop()
        wait_for(lambda: _signed_seq(store_url) == 30, 10, "head 30 matched")
    finally:
        collector.stop()
    assert _alarms(store_url) == []
    assert [r["hash"] for r in stored(store_url, SITE, t.table)] == [r.hash for r in t.rows]


def _table_record(store_url: str) -> tuple[int, int]:
    store = Store.open(store_url)
    try:
        recs = store.tables()
        return (recs[0].head_seq, recs[0].signed_seq) if recs else (0, 0)
    finally:
        store.close()


def _head_seq(store_url: str) -> int:
    return _table_record(store_url)[0]


def _signed_seq(store_url: str) -> int:
    return _table_record(store_url)[1]

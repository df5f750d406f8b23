"""100,000 hostile messages through a real Mosquitto to the real ``table-controller collect``
process, on SQLite and on PostgreSQL (docs/feed.md "Malformed messages"): the process never
exits, every hostile message is alarmed, and an honest table's rows sent after the poison are
all stored, in order, on the chain."""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from controller.feed.messages import row_payload
from controller.feed.store import Store
from controller.journal.chain import verify_rows
from tests.feed_hostile import mutated, poisons, random_bytes, structured
from tests.feed_journal import TableJournal
from tests.feed_rig import collect_process, kill, stored, wait_for, write_keys

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.services.mosquitto import MosquittoBroker

if importlib.util.find_spec("tests.services") is None:
    pytest.skip(
        "MISSING tests/services (the real-services fixtures): the feed's fuzz test needs them",
        allow_module_level=True,
    )

SITE = "site1"
EVIL = "evil-01"
#: The run's mix: hypothesis-drawn structured messages, byte mutations of them, random bytes.
STRUCTURED, MUTATED, RANDOM = 2_000, 48_000, 50_000
HONEST_EVERY = 10_000
WINDOW = 1_400


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'collector.sqlite'}"


class FastPublisher:
    """A paho client publishing QoS 1 without waiting for each PUBACK (many in flight)."""

    def __init__(self, broker: MosquittoBroker, identity: str) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.acked = 0
        self._lock = threading.Lock()
        self._connected = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"fuzz-{identity}", protocol=mqtt.MQTTv5
        )
        self.client.tls_set_context(broker.ssl_context(identity))
        self.client.max_inflight_messages_set(1000)
        self.client.on_connect = lambda *a: self._connected.set()
        self.client.on_publish = self._on_publish
        self.client.connect(broker.host, broker.port, keepalive=60)
        self.client.loop_start()
        if not self._connected.wait(15):
            raise TimeoutError(f"{identity}: no CONNACK within 15 s")
        self.sent = 0

    def _on_publish(self, *_: Any) -> None:
        with self._lock:
            self.acked += 1

    def publish(self, topic: str, payload: bytes) -> None:
        if self.sent - self.acked >= 900:  # a window under the in-flight maximum
            wait_for(lambda: self.sent - self.acked < 500, 60, "PUBACKs")
        info = self.client.publish(topic, payload, qos=1)
        if info.rc != 0:
            raise ConnectionError(f"publish {topic}: rc {info.rc}")
        self.sent += 1

    def drain(self, timeout: float) -> None:
        wait_for(lambda: self.acked >= self.sent, timeout, "every PUBACK")

    def close(self) -> None:
        self.client.disconnect()
        stopper = threading.Thread(target=self.client.loop_stop, daemon=True)
        stopper.start()
        stopper.join(10)


def _counts(store_url: str) -> tuple[int, list[str]]:
    store = Store.open(store_url)
    try:
        return _alarmed(store), [
            f"{a.table} {a.kind}: {a.detail}" for a in store.alarms() if a.table != EVIL
        ]
    finally:
        store.close()


def _alarmed(store: Store) -> int:
    return int(
        store.execute(
            "SELECT COALESCE(SUM(count), 0) FROM feed_alarms WHERE site = ? AND table_id = ?",
            (SITE, EVIL),
        )[0][0]
    )


def test_100000_hostile_messages_never_stop_the_collector(
    make_mosquitto_broker: Callable[..., MosquittoBroker], tmp_path: Path, any_store_url: str
) -> None:
    store_url = any_store_url
    broker = make_mosquitto_broker(site=SITE)
    honest, evil = TableJournal("table-07"), TableJournal(EVIL)
    keys = write_keys(tmp_path / "keys", honest, evil)
    hostile = [*poisons(), *structured(EVIL, STRUCTURED)]
    hostile += mutated(hostile, MUTATED) + random_bytes(RANDOM)
    assert len(hostile) >= 100_000
    log = tmp_path / "collect.log"
    proc = collect_process(broker, store_url, keys, log)
    bad = good = None
    started = time.monotonic()
    try:
        wait_for(
            lambda: b"subscribed" in log.read_bytes() or proc.poll() is not None,
            30,
            "the collector subscribed",
        )
        assert proc.poll() is None, log.read_text(errors="replace")
        bad, good = FastPublisher(broker, EVIL), FastPublisher(broker, "table-07")
        reader = Store.open(store_url)
        sent_rows = 0
        for i, (channel, payload) in enumerate(hostile):
            if i % 200 == 0 and i - _alarmed(reader) > WINDOW:
                # what the broker holds for the collector stays under its queue limit (1,000
                # queued beyond the 1,000 in flight): the collector's pace, not the test's
                wait_for(lambda i=i: i - _alarmed(reader) < WINDOW // 2, 60, "the collector")
                reader.rollback()
            bad.publish(f"tc/{SITE}/{EVIL}/{channel}", payload)
            if i % HONEST_EVERY == len(poisons()):  # right after the named poisons, and on
                for row in honest.rounds(1, 3):
                    good.publish(f"tc/{SITE}/table-07/rows", row_payload(row.as_dict()))
                    sent_rows += 1
        for row in honest.rounds(1, 3):
            good.publish(f"tc/{SITE}/table-07/rows", row_payload(row.as_dict()))
            sent_rows += 1
        reader.close()
        bad.drain(120)
        good.drain(30)

        def caught_up() -> bool:
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            return (
                _counts(store_url)[0] >= len(hostile)
                and len(stored(store_url, SITE, "table-07")) == sent_rows
            )

        try:
            wait_for(caught_up, 180, "every hostile message alarmed, every honest row stored")
        except TimeoutError:
            alarmed, others = _counts(store_url)
            raise AssertionError(
                f"{alarmed} of {len(hostile)} alarmed, honest rows"
                f" {len(stored(store_url, SITE, 'table-07'))} of {sent_rows}, other alarms"
                f" {others[:5]}; log: {log.read_text(errors='replace')[-2000:]}"
            ) from None
        elapsed = time.monotonic() - started
        assert proc.poll() is None, "the collector exited"
        alarmed, others = _counts(store_url)
        assert alarmed == len(hostile)
        assert others == []
        rows = stored(store_url, SITE, "table-07")
        assert [r["hash"] for r in rows] == [r.hash for r in honest.rows]
        assert verify_rows(rows).ok
        assert stored(store_url, SITE, EVIL) == []
        print(
            f"\nfuzz ({store_url.split(':')[0]}): {len(hostile)} hostile messages,"
            f" {alarmed} alarmed, {len(rows)} honest rows stored, 0 exits, {elapsed:.1f} s"
        )
    finally:
        for client in (bad, good):
            if client is not None:
                client.close()
        if proc.poll() is None:
            kill(proc, 15)
    assert proc.returncode == 0, log.read_text(errors="replace")[-3000:]


def _refuse_kind(store_url: str, kind: str) -> None:
    """Make the database itself refuse rows of ``kind`` (a row a store cannot hold, whatever
    the reason: the collector's own checks cannot foresee every one)."""
    store = Store.open(store_url)
    try:
        if store.dialect == "sqlite":
            store.execute(
                "CREATE TRIGGER refuse_kind BEFORE INSERT ON feed_rows WHEN"
                f" NEW.kind = '{kind}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        else:
            store.execute(
                f"ALTER TABLE feed_rows ADD CONSTRAINT refuse_kind CHECK (kind <> '{kind}')"
            )
        store.commit()
    finally:
        store.close()


def test_a_row_the_database_refuses_is_malformed_not_retried_forever(
    mosquitto_broker: MosquittoBroker, tmp_path: Path, any_store_url: str
) -> None:
    from tests.feed_rig import CollectorThread

    store_url = any_store_url
    honest, evil = TableJournal("table-07"), TableJournal(EVIL)
    _refuse_kind(store_url, "refused.kind")
    collector = CollectorThread(
        mosquitto_broker, store_url, write_keys(tmp_path / "keys", honest, evil)
    )
    bad = good = None
    try:
        bad, good = (
            FastPublisher(mosquitto_broker, EVIL),
            FastPublisher(mosquitto_broker, "table-07"),
        )
        for row in honest.rounds(1, 2):
            good.publish(f"tc/{SITE}/table-07/rows", row_payload(row.as_dict()))
        good.drain(10)
        # one batch: the refused row among honest rows of both tables
        bad.publish(
            f"tc/{SITE}/{EVIL}/rows",
            row_payload(evil.append("refused.kind", {"n": 1}, 1).as_dict()),
        )
        for row in honest.rounds(2, 2):
            good.publish(f"tc/{SITE}/table-07/rows", row_payload(row.as_dict()))
        bad.drain(10)
        good.drain(10)
        wait_for(
            lambda: len(stored(store_url, SITE, "table-07")) == 6, 30, "table-07's six rows stored"
        )
        wait_for(lambda: _counts(store_url)[0] == 1, 10, "the refused row alarmed")
        assert collector.thread.is_alive()
        rows = stored(store_url, SITE, "table-07")
        assert [r["hash"] for r in rows] == [r.hash for r in honest.rows]
        assert stored(store_url, SITE, EVIL) == []
        store = Store.open(store_url)
        try:
            (alarm,) = store.alarms()
        finally:
            store.close()
        assert (alarm.table, alarm.kind, alarm.count) == (EVIL, "malformed", 1)
        assert "store cannot hold it" in alarm.detail
        time_ok = time.monotonic() + 3  # acknowledged: not delivered (and alarmed) again
        while time.monotonic() < time_ok:
            assert _counts(store_url)[0] == 1
            time.sleep(0.3)
    finally:
        for client in (bad, good):
            if client is not None:
                client.close()
        collector.stop()

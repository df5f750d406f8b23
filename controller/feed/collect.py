"""``table-controller collect``: subscribe to a site, verify every table's messages and store
them (docs/feed.md "The collector").

paho's network thread only queues what arrives; this module's loop takes the queue in batches,
runs each message through the :class:`~controller.feed.verifier.Verifier`, commits the store, and
only then acknowledges the batch to the broker (MQTT 5 manual PUBACK). The session is persistent
(a fixed client id, ``clean_start`` false, a session expiry), so while the collector is down or
restarting the broker keeps its messages, and anything received but not committed is delivered
again. The collector needs no table's journal or secret: only the tables' public keys.
Alarms of a committed batch also go out (controller/feed/alarms.py): to syslog when configured,
and to ``tc/<site>/alarms`` on the broker.

On PostgreSQL several instances share a site (controller/feed/share.py, docs/feed.md "Many
collectors"): each has its own client id and session subscribed to the whole site (one session,
one subscription: each table's messages arrive in order), stores the tables it leases and keeps
what it leaves for :data:`REPLAY_S`, so the instance that takes a table over (from one that died
or offered it) replays what the broker gave it meanwhile. On SQLite one instance only: a second
one refuses to start (the file is locked).
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from controller.feed.alarms import AlarmEvent, AlarmSink, SyslogSink, alarm_topic
from controller.feed.broker import BrokerSettings, new_client
from controller.feed.keys import KeyRing
from controller.feed.messages import MessageError, decode_status, site_filter
from controller.feed.share import RENEW_S, Share
from controller.feed.store import Store, StoreError, TableRecord
from controller.feed.verifier import UNKNOWN, Verifier, VerifierSettings

if TYPE_CHECKING:
    import paho.mqtt.client as mqtt
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

log = logging.getLogger("controller.feed")

#: Messages verified per store transaction at most.
BATCH: Final = 500
TICK_S: Final = 1.0
#: How long the broker keeps the collector's session while it is away (seconds).
SESSION_EXPIRY_S: Final = 7 * 24 * 3600
#: Messages the collector lets the broker have in flight to it (MQTT 5 Receive Maximum).
RECEIVE_MAXIMUM: Final = 1000
BACKOFF_S: Final = (0.5, 15.0)
#: How often the collector records its own broker connection in the store (the floor page
#: reads it: docs/feed.md "The floor page"), and at once whenever it changes.
HEALTH_S: Final = 2.0
#: How long an instance of many keeps the messages of tables it does not lease (seconds): the
#: one that takes a table over replays them. Longer than a takeover (share.LEASE_S + RENEW_S)
#: plus how far behind the broker a dead instance may have been.
REPLAY_S: Final = 60.0
#: At most this many messages kept for replay (the oldest dropped first): 60 s of 4,000
#: messages a second, about 250 MB at the floor's 1 kB a message; a floor sends far fewer.
REPLAY_KEPT: Final = 240_000


@dataclass(frozen=True)
class CollectorSettings:
    """Everything ``collect`` is told on its command line."""

    broker: BrokerSettings
    site: str
    store_url: str
    keys_dir: Path
    client_id: str
    gap_timeout_s: float = 60.0
    silence_s: float = 900.0
    coalesce_s: float = 60.0
    #: Where alarms also go as RFC 5424 syslog: ``udp://HOST:PORT``, ``HOST:PORT`` or a local
    #: socket path (``/dev/log``); None: nowhere (docs/feed.md "Alarms out").
    syslog: str | None = None


#: Alarms kept for the broker while it is away (the oldest dropped first; all are stored).
ALARMS_KEPT: Final = 10_000


@dataclass(frozen=True)
class _Message:
    generation: int
    mid: int
    qos: int
    topic: str
    payload: bytes


class Collector:
    """The subscriber, the verifier and the store, run until ``stop`` is set."""

    def __init__(self, settings: CollectorSettings, *, out: Callable[[str], None] = print) -> None:
        self.settings = settings
        self._out = out
        self._lock_fd: int | None = None
        self.store = Store.open(settings.store_url)
        if self.store.dialect == "sqlite":
            self._lock_fd = _single_instance(self.store)
        #: The share of the site's tables this instance serves (PostgreSQL), else None: all.
        self.share = (
            Share(self.store, settings.site, settings.client_id, settings.client_id)
            if self.store.dialect == "postgresql"
            else None
        )
        #: Messages of tables this instance does not lease: (when left, message), for replay.
        self._left: deque[tuple[float, _Message]] = deque(maxlen=REPLAY_KEPT)
        #: Tables seen in topics (the lease candidates besides the keys and the store's).
        self._seen: set[str] = set()
        self._first_renewal = True
        self.keys = KeyRing(settings.keys_dir)
        self.verifier = Verifier(
            self.store,
            self.keys,
            VerifierSettings(
                settings.site, settings.gap_timeout_s, settings.silence_s, settings.coalesce_s
            ),
            on_alarm=out,
        )
        self._sinks: list[AlarmSink] = []
        if settings.syslog:
            self._sinks.append(SyslogSink(settings.syslog))
        #: Committed alarms not yet handed to the broker (``tc/<site>/alarms``, QoS 1).
        self._alarms_out: deque[AlarmEvent] = deque(maxlen=ALARMS_KEPT)
        self._inbox: queue.SimpleQueue[_Message] = queue.SimpleQueue()
        self._generation = 0
        self._client: mqtt.Client | None = None
        self._connected = threading.Event()
        self._lost = threading.Event()
        self.connected_once = threading.Event()
        #: The broker connection last recorded in the store, and when (monotonic).
        self._health: tuple[bool, float] | None = None

    # -- paho's thread ----------------------------------------------------------------------

    def _callbacks(self, client: mqtt.Client, generation: int) -> None:
        # paho's VERSION2 callbacks (controller/feed/broker.py new_client)
        def on_connect(
            c: mqtt.Client,
            u: object,
            flags: mqtt.ConnectFlags,
            rc: ReasonCode,
            props: Properties | None,
        ) -> None:
            if rc.is_failure:
                log.warning("collector: broker refused the connection: %s", rc)
                self._lost.set()
                return
            c.subscribe(site_filter(self.settings.site), qos=1)

        def on_subscribe(
            c: mqtt.Client, u: object, mid: int, rcs: list[ReasonCode], props: Properties | None
        ) -> None:
            if any(rc.is_failure for rc in rcs):
                log.warning("collector: subscription refused: %s", rcs)
                self._lost.set()
                return
            self._out(f"collector: subscribed to {site_filter(self.settings.site)}")
            self._connected.set()
            self.connected_once.set()

        def on_disconnect(
            c: mqtt.Client,
            u: object,
            flags: mqtt.DisconnectFlags,
            rc: ReasonCode,
            props: Properties | None,
        ) -> None:
            self._connected.clear()
            self._lost.set()

        def on_message(c: mqtt.Client, u: object, msg: mqtt.MQTTMessage) -> None:
            self._inbox.put(_Message(generation, msg.mid, msg.qos, msg.topic, bytes(msg.payload)))

        client.on_connect = on_connect
        client.on_disconnect = on_disconnect
        client.on_subscribe = on_subscribe
        client.on_message = on_message

    def _connect(self) -> bool:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        s = self.settings
        self._generation += 1
        client = new_client(s.broker, s.client_id, manual_ack=True)
        self._callbacks(client, self._generation)
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        props.ReceiveMaximum = RECEIVE_MAXIMUM
        self._lost.clear()
        try:
            client.connect(
                s.broker.host, s.broker.port, keepalive=30, clean_start=False, properties=props
            )
        except (OSError, ssl.SSLError, ValueError) as exc:
            log.warning("collector: cannot reach %s: %s", s.broker.url, exc)
            return False
        client.loop_start()
        self._client = client
        return True

    def _disconnect(self) -> None:
        client, self._client = self._client, None
        self._connected.clear()
        if client is None:
            return
        try:
            client.disconnect()
        except (OSError, ValueError):
            pass
        stopper = threading.Thread(target=client.loop_stop, daemon=True)
        stopper.start()
        stopper.join(5.0)

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> int:
        s = self.settings
        self._out(
            f"collector: site {s.site}, broker {s.broker.url}, store {self.store.dialect},"
            f" {len(self.keys.known())} table keys in {s.keys_dir}"
        )
        backoff = BACKOFF_S[0]
        next_tick = next_renewal = time.monotonic()
        try:
            while not stop.is_set():
                self._report_health()
                if self._client is None:
                    if not self._connect():
                        self._pause(stop, backoff)
                        backoff = min(backoff * 2, BACKOFF_S[1])
                        continue
                if self._lost.is_set():
                    self._disconnect()
                    self._pause(stop, backoff)
                    backoff = min(backoff * 2, BACKOFF_S[1])
                    continue
                if self._connected.is_set():
                    backoff = BACKOFF_S[0]
                batch = self._take(0.2)
                now = time.monotonic()
                tick = now >= next_tick
                if tick:
                    next_tick = now + TICK_S
                if self.share is not None and now >= next_renewal:
                    try:
                        replay = self._renew()
                    except StoreError as exc:
                        self._store_failed(exc, stop, backoff)
                        backoff = min(backoff * 2, BACKOFF_S[1])
                        continue
                    next_renewal = now + RENEW_S
                    batch = replay + batch
                try:
                    self._store_batch(batch, tick)
                except StoreError as exc:
                    if not batch or not self.store.ping():
                        self._store_failed(exc, stop, backoff)
                        backoff = min(backoff * 2, BACKOFF_S[1])
                        continue
                    # the database answers: a message of the batch is one it cannot hold
                    log.warning("collector: batch refused (%s); storing it message by message", exc)
                    try:
                        self._one_by_one(batch)
                    except StoreError as again:
                        self._store_failed(again, stop, backoff)
                        backoff = min(backoff * 2, BACKOFF_S[1])
                        continue
                self._ack(batch)
                self._publish_alarms()
        finally:
            self._publish_alarms()
            self._disconnect()
            self._report_health(stopping=True)
            if self.share is not None:
                try:
                    self.share.leave()
                except StoreError as exc:
                    log.warning("collector: could not end its membership: %s", exc)
            c = self.verifier.counters
            self._out(
                f"collector stopped: {c.messages} messages, {c.rows_stored} rows stored,"
                f" {c.duplicates} duplicates, {c.heads_stored} heads, {c.refused} refused,"
                f" {c.alarms} alarms"
            )
            self.store.close()
            if self._lock_fd is not None:
                os.close(self._lock_fd)
            for sink in self._sinks:
                sink.close()
        return 0

    def _pause(self, stop: threading.Event, seconds: float) -> None:
        """Wait ``seconds`` (or until ``stop``) before trying the broker again, still saying
        every :data:`HEALTH_S` that it is away and keeping its membership and leases alive
        every :data:`RENEW_S`: a broker outage is not this instance's death, and instances
        that all lost the broker must not adopt one another's tables."""
        deadline = time.monotonic() + seconds
        while not stop.is_set():
            self._keep_leases()
            left = deadline - time.monotonic()
            if left <= 0:
                return
            stop.wait(min(left, HEALTH_S, RENEW_S))
            self._report_health()

    def _keep_leases(self) -> None:
        if self.share is None:
            return
        try:
            self.share.keep_alive(time.time_ns())
        except StoreError as exc:
            log.warning("collector: cannot renew its leases while the broker is away: %s", exc)
            self._rollback_quietly()

    def _rollback_quietly(self) -> None:
        """After a write the store refused: undo what is left of it (a store that cannot even
        do that is found again by the next write)."""
        try:
            self.store.rollback()
        except StoreError:
            pass

    def _report_health(self, *, stopping: bool = False) -> None:
        """Record in the store whether this collector holds the broker, when it changes and
        every :data:`HEALTH_S` otherwise: while it does not, the floor page shows the tables
        ``unknown`` rather than offline. A store that cannot take it is left for the batch."""
        connected = self._connected.is_set() and not stopping
        now = time.monotonic()
        last = self._health
        if not stopping and last is not None and last[0] == connected and now - last[1] < HEALTH_S:
            return
        detail = "stopped" if stopping else ("subscribed" if connected else "broker unreachable")
        try:
            self.store.set_health(
                self.settings.client_id, self.settings.site, connected, time.time_ns(), detail
            )
            self.store.commit()
        except StoreError as exc:
            log.warning("collector: cannot record its health: %s", exc)
            self._rollback_quietly()
            return
        self._health = (connected, now)

    # -- many instances (PostgreSQL) --------------------------------------------------------

    def _renew(self) -> list[_Message]:
        """Renew this instance's leases, adopt a dead instance's, claim its share, take what
        another offers; the kept messages of every table gained, to store before the rest."""
        share = self.share
        assert share is not None
        self.store.rollback()
        universe = set(self.keys.known()) | self._seen
        universe |= {t.table for t in self.verifier.table_records()}
        now_ns = time.time_ns()
        renewal = share.renew(now_ns, universe, claim=not self._first_renewal)
        self._first_renewal = False
        gained = set(renewal.gained)
        if renewal.offered:
            gained |= share.take_offered(now_ns, renewal.offered)
        for dead, tables in renewal.adopted:
            self._out(f"collector: took over {len(tables)} tables of {dead}, which stopped")
        if renewal.lost:
            log.warning("collector: leases lost (renewed too late?): %s", sorted(renewal.lost))
        self.verifier.scope = set(share.held)
        if not gained and not renewal.lost:
            return []
        # what another instance stored meanwhile is the record now
        self.verifier.reload()
        now = time.monotonic()
        cutoff = now - REPLAY_S
        records = {r.table: r for r in self.verifier.table_records()}
        wall_ns = time.time_ns()
        # acknowledged when they were left: generation -1 is never acknowledged again
        replay = [
            replace(m, generation=-1)
            for when, m in self._left
            if when >= cutoff
            and _table_of(m.topic) in gained
            and not _judged(m, records.get(_table_of(m.topic) or ""), wall_ns - (now - when) * 1e9)
        ]
        self._left = deque(
            ((w, m) for w, m in self._left if _table_of(m.topic) not in gained),
            maxlen=REPLAY_KEPT,
        )
        return replay

    def _mine(self, batch: list[_Message]) -> list[_Message]:
        """The batch's messages of tables this instance leases (their leases locked until the
        commit); the others kept for replay."""
        if self.share is None:
            return batch
        held = self.share.locked()
        self.verifier.scope = held
        now = time.monotonic()
        mine = []
        for msg in batch:
            table = _table_of(msg.topic)
            if table is None:
                continue  # the collectors' own alarms topic
            self._seen.add(table)
            if table in held:
                mine.append(msg)
            else:
                self._left.append((now, msg))
        while self._left and self._left[0][0] < now - REPLAY_S:
            self._left.popleft()
        return mine

    def _store_batch(self, batch: list[_Message], tick: bool) -> None:
        """Verify and store ``batch`` in one transaction (any exception is a StoreError)."""
        try:
            with self.store.batch():
                for msg in self._mine(batch):
                    self.verifier.handle(msg.topic, msg.payload)
                if tick:
                    self.verifier.tick()
                self.verifier.flush()
            self.store.commit()
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - never out of the loop: the batch is retried
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc
        self._committed()

    def _committed(self) -> None:
        """The batch's alarms are stored: to syslog now, to the broker's queue."""
        for event in self.verifier.take_events():
            for sink in self._sinks:
                sink.send(event)
            self._alarms_out.append(event)

    def _publish_alarms(self) -> None:
        """Hand the committed alarms to paho for ``tc/<site>/alarms`` (QoS 1) while connected;
        they wait here while the broker is away."""
        client = self._client
        if client is None or not self._connected.is_set():
            return
        topic = alarm_topic(self.settings.site)
        while self._alarms_out:
            event = self._alarms_out[0]
            info = client.publish(topic, event.as_json(), qos=1)
            if info.rc != 0:  # MQTT_ERR_SUCCESS; not connected or paho's queue full
                log.warning("collector: alarm not published to %s (paho rc %s)", topic, info.rc)
                return
            self._alarms_out.popleft()

    def _one_by_one(self, batch: list[_Message]) -> None:
        """After a batch the database refused while it still answers: each message in its own
        transaction; one refused twice is ``malformed`` for its table (acknowledged, nothing of
        it stored), so one bad row never makes the broker deliver the batch forever. A
        StoreError out of here is the store's own failure."""
        self.store.rollback()
        self.verifier.reload()
        for msg in batch:
            for _ in range(2):
                try:
                    self._store_batch([msg], False)
                    break
                except StoreError as exc:
                    problem = exc
                    self.store.rollback()
                    self.verifier.reload()
            else:
                if not self.store.ping():
                    raise problem
                self.verifier.refuse_malformed(msg.topic, f"the store cannot hold it: {problem}")
                self.verifier.flush()
                self.store.commit()
                self._committed()

    def _take(self, wait: float) -> list[_Message]:
        try:
            batch = [self._inbox.get(timeout=wait)]
        except queue.Empty:
            return []
        while len(batch) < BATCH:
            try:
                batch.append(self._inbox.get_nowait())
            except queue.Empty:
                break
        return batch

    def _ack(self, batch: list[_Message]) -> None:
        client = self._client
        if client is None:
            return
        for msg in batch:
            # a message from an earlier connection is not this connection's to acknowledge:
            # the broker delivers it again (and the store drops it as a duplicate)
            if msg.qos > 0 and msg.generation == self._generation:
                client.ack(msg.mid, msg.qos)

    def _store_failed(self, exc: StoreError, stop: threading.Event, backoff: float) -> None:
        """The store could not take the batch: nothing of it is acknowledged; reconnecting
        makes the broker deliver it again once the store is back."""
        log.error("collector: store failed: %s", exc)
        self._out(f"collector: store failed ({exc}); retrying")
        self._rollback_quietly()
        self._disconnect()
        while True:  # drop what was queued: it is delivered again after reconnecting
            try:
                self._inbox.get_nowait()
            except queue.Empty:
                break
        stop.wait(backoff)
        try:
            self.verifier.reload()
        except StoreError as again:
            log.error("collector: store still failing: %s", again)


def _judged(msg: _Message, rec: TableRecord | None, arrived_ns: float) -> bool:
    """True for a kept ``status`` that the instance which held the table judged already: it
    is the status the store holds, or it arrived before the table was last heard (rows, heads
    and online statuses are stored in the order the table sent them, so that instance had
    judged it). Replayed again it would be judged against newer rows: a clean stop before a
    new session read as going offline in the new session's round. Rows and heads are replayed
    whole: a second copy is a duplicate."""
    if rec is None or not msg.topic.endswith("/status"):
        return False
    try:
        status = decode_status(msg.payload)
    except MessageError:
        return False  # refused when replayed, as it was when it arrived
    if (status["state"], status["ts"]) == (rec.status, rec.status_ts):
        return True
    return rec.last_seen_ns is not None and arrived_ns < rec.last_seen_ns


def _table_of(topic: str) -> str | None:
    """The table a message is about (the lease it falls under): ``tc/<site>/<table>/<channel>``;
    a topic of any other shape falls under the verifier's unknown table (it is refused there,
    once); None for the collectors' own ``tc/<site>/alarms``."""
    parts = topic.split("/")
    if len(parts) == 3 and parts[2] == "alarms":
        return None
    return parts[2] if len(parts) == 4 and parts[2] else UNKNOWN


def _single_instance(store: Store) -> int:
    """Lock the SQLite store's file for this instance (``<file>.lock``): a second collector on
    the same file refuses to start. Returns the lock's descriptor (closed at exit)."""
    path = store.path_of()
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(
            f"another collector is running on {path}: a SQLite store serves one collector"
            ' (several instances need PostgreSQL, docs/feed.md "Many collectors")'
        ) from None
    return fd

"""The table's publisher: the journal to the casino's broker (docs/design.md "Host feed (MQTT)").

The journal is the outbox. On its own thread the publisher reads the rows (and signed heads)
after the last ones the broker acknowledged, publishes them in order with QoS 1, and records the
acknowledged position durably (controller/feed/position.py). It never touches the loop: the loop
only wakes it after a commit (:meth:`Publisher.wake`, an Event) and reads its state
(:meth:`Publisher.state`, an immutable snapshot). A broker that is down, slow or refusing costs
the table nothing but a growing backlog, which is sent when the broker is back.

Each connection uses a fresh paho client with a clean session: paho would re-send its own queue
on reconnect, and the position, not paho, decides what is sent. Delivery is therefore at least
once; the collector drops duplicates by (table, seq). The MQTT will publishes ``offline`` on
``status`` when the connection is lost; ``online`` is published on connect and repeated every
``heartbeat_s`` so the collector can tell an idle table from a silent one.
"""

from __future__ import annotations

import collections
import functools
import logging
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypedDict, Unpack

from controller.config.profile import FeedSettings
from controller.feed.broker import BrokerSettings, new_client, parse_broker_url
from controller.feed.messages import head_payload, row_payload, status_payload, topic
from controller.feed.position import (
    Position,
    PositionError,
    load_position,
    save_position,
)

if TYPE_CHECKING:  # paho is the feed extra's: imported where a client is made (broker.py)
    import paho.mqtt.client as mqtt
    from paho.mqtt.properties import Properties
    from paho.mqtt.reasoncodes import ReasonCode

log = logging.getLogger("controller.feed")

#: Rows read from the journal at a time.
BATCH: Final = 200
#: Seconds between two writes of the position file (its fsync is off the loop, but cheap is
#: better on an SD card).
SAVE_EVERY_S: Final = 1.0
#: Seconds an unacknowledged message may wait before the connection is taken for dead.
ACK_TIMEOUT_S: Final = 30.0
#: Reconnection back-off: first wait, longest wait (seconds).
BACKOFF_S: Final = (0.5, 30.0)
KEEPALIVE_S: Final = 30
#: Seconds a stopping publisher keeps sending the backlog before it says ``offline``.
DRAIN_S: Final = 3.0


class OutboxRow(Protocol):
    """A journal row as the outbox yields it (controller/journal/chain.py Row)."""

    @property
    def seq(self) -> int: ...
    @property
    def hash(self) -> str: ...
    def as_dict(self) -> dict[str, object]: ...


class OutboxHead(Protocol):
    """A signed head as the outbox yields it (controller/journal/heads.py SignedHead)."""

    @property
    def seq(self) -> int: ...
    def as_dict(self) -> Mapping[str, object]: ...


class Outbox(Protocol):
    """What the publisher reads: the journal on a read-only connection of its own."""

    def rows_after(self, seq: int, limit: int) -> Sequence[OutboxRow]: ...
    def heads_after(self, seq: int, limit: int) -> Sequence[OutboxHead]: ...
    def close(self) -> None: ...


class Derived(Protocol):
    """Messages read from the rows the publisher sends (coded events, meters: wired by the
    application from controller/floor). Called on the publisher's thread only."""

    def after_row(self, row: dict[str, object]) -> list[tuple[Literal["events", "meters"], bytes]]:
        """The messages ``row`` (as :meth:`OutboxRow.as_dict` gives it) raises."""
        ...

    def idle(self) -> list[tuple[Literal["events", "meters"], bytes]]:
        """Messages due when the backlog is sent (the meters, if they changed)."""
        ...

    def meters_now(self) -> list[tuple[Literal["events", "meters"], bytes]]:
        """The meters as folded so far (the host's ``meters`` command)."""
        ...


#: Rows one ``replay`` may re-publish (the host asks again for more).
REPLAY_MAX: Final = 10_000
#: Seconds between two counts of dropped commands handed to the table (a flood).
FLOOD_REPORT_S: Final = 10.0


@dataclass(frozen=True)
class CommandLink:
    """The host's commands (docs/host-commands.md): the publisher subscribes to
    ``tc/<site>/<table>/cmd`` and hands each message that the flood bound admits to
    ``received`` (which posts it to the loop: nothing is read here); ``flooded`` gets the count
    of those dropped, at most every :data:`FLOOD_REPORT_S`."""

    received: Callable[[bytes], None]
    flooded: Callable[[int], None]
    per_minute: int


class FloodGate:
    """A token bucket: ``per_minute`` commands a minute (a burst of as many); the rest are
    dropped before they are read and counted. Called from the publisher's thread; the count is
    taken (:meth:`take_dropped`) from the same thread."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._tokens = float(per_minute)
        self._at = clock()
        self._lock = threading.Lock()
        self.dropped = 0

    def admit(self) -> bool:
        with self._lock:
            now = self._clock()
            self._tokens = min(
                float(self.per_minute), self._tokens + (now - self._at) * self.per_minute / 60.0
            )
            self._at = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            self.dropped += 1
            return False

    def take_dropped(self) -> int:
        with self._lock:
            n, self.dropped = self.dropped, 0
            return n


FeedStateName = Literal["starting", "connecting", "connected", "down", "refused", "stopped"]


@dataclass(frozen=True)
class FeedState:
    """What ``status`` shows about the feed; replaced whole, so any thread may read it."""

    state: FeedStateName = "starting"
    acked_seq: int = 0
    acked_head: int = 0
    sent_seq: int = 0
    error: str = ""
    connects: int = 0
    published: int = 0

    @property
    def connected(self) -> bool:
        return self.state == "connected"

    def describe(self, journal_seq: int) -> str:
        """``connected, backlog N, acked seq S`` (``down (why)`` when not connected)."""
        word = "connected" if self.connected else "down"
        if not self.connected and self.error:
            word += f" ({self.state}: {self.error})"
        elif not self.connected:
            word += f" ({self.state})"
        backlog = max(0, journal_seq - self.acked_seq)
        return f"{word}, backlog {backlog}, acked seq {self.acked_seq}"


class _StateChange(TypedDict, total=False):
    """The fields of :class:`FeedState` one change replaces (the others are kept)."""

    state: FeedStateName
    acked_seq: int
    acked_head: int
    sent_seq: int
    error: str
    connects: int
    published: int


@dataclass(frozen=True)
class PublisherSettings:
    """The publisher's part of the profile's ``[feed]``."""

    broker: BrokerSettings
    site: str
    table: str
    position_path: Path
    heartbeat_s: float = 60.0
    window: int = 20
    #: Seconds from the TCP connection to the broker's CONNACK before the attempt is given up.
    connack_timeout_s: float = 10.0


@dataclass
class _Sent:
    kind: Literal["row", "head", "status", "events", "meters"]
    seq: int
    hash: str
    at: float
    acked: bool = False


class Publisher:
    """Publishes a journal to a broker on a thread of its own (see the module docstring)."""

    def __init__(
        self,
        settings: PublisherSettings,
        open_outbox: Callable[[], Outbox],
        *,
        wall_ns: Callable[[], int] = time.time_ns,
        derived: Derived | None = None,
        commands: CommandLink | None = None,
    ) -> None:
        self.settings = settings
        self.commands = commands
        self.flood = FloodGate(commands.per_minute) if commands is not None else None
        self._flood_reported = time.monotonic()
        #: What the loop asked to send: replies, row ranges to re-publish, meters now.
        self._replies: collections.deque[bytes] = collections.deque(maxlen=100)
        self._replays: collections.deque[tuple[int, int]] = collections.deque(maxlen=10)
        self._meters_asked = False
        self._open_outbox = open_outbox
        self._derived = derived
        self._wall_ns = wall_ns
        self._state = FeedState()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._topics: dict[str, str] = {
            "rows": topic(settings.site, settings.table, "rows"),
            "heads": topic(settings.site, settings.table, "heads"),
            "status": topic(settings.site, settings.table, "status"),
            "events": topic(settings.site, settings.table, "events"),
            "meters": topic(settings.site, settings.table, "meters"),
            "cmd": topic(settings.site, settings.table, "cmd"),
            "reply": topic(settings.site, settings.table, "reply"),
        }
        self._position = Position()  # acknowledged by the broker
        self._saved = Position()  # on disk
        self._saved_at = float("-inf")
        self._stop_at = float("inf")

    # -- what other threads call ------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="feed-publisher", daemon=True)
        self._thread.start()

    def wake(self, _row: object = None) -> None:
        """Rows or heads were committed (the journal's commit listener, on the loop thread):
        sets an Event, no I/O."""
        self._wake.set()

    def state(self) -> FeedState:
        return self._state

    def send_reply(self, payload: bytes) -> None:
        """A reply to the host (the loop): sent on ``.../reply`` by the publisher's thread."""
        self._replies.append(payload)
        self._wake.set()

    def request_replay(self, first: int, last: int) -> None:
        """Re-publish rows ``first``..``last`` (the host's ``replay``; at most
        :data:`REPLAY_MAX`)."""
        self._replays.append((first, min(last, first + REPLAY_MAX - 1)))
        self._wake.set()

    def request_meters(self) -> None:
        """Publish the meters now (the host's ``meters``)."""
        self._meters_asked = True
        self._wake.set()

    def stop(self, timeout: float = 8.0) -> None:
        """Send what is left for a few seconds (:data:`DRAIN_S`), say ``offline``, save the
        position and end the thread (waits at most ``timeout``)."""
        self._stop_at = time.monotonic()
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("feed publisher did not stop within %.0f s", timeout)

    def _stop_deadline(self) -> float:
        """When a stopping publisher gives up sending (infinity while not stopping)."""
        return self._stop_at + DRAIN_S if self._stop.is_set() else float("inf")

    def _set(self, **changes: Unpack[_StateChange]) -> None:
        self._state = replace(self._state, **changes)

    # -- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = BACKOFF_S[0]
        outbox: Outbox | None = None
        try:
            while not self._stop.is_set():
                ok = False
                try:
                    if outbox is None:
                        outbox = self._open_outbox()
                        self._position = self._saved = self._checked_position(outbox)
                        self._set(
                            acked_seq=self._position.row_seq,
                            acked_head=self._position.head_seq,
                            sent_seq=self._position.row_seq,
                        )
                    ok = _Session(self, outbox).run()
                except ImportError as exc:
                    self._set(state="down", error=f"{exc}: pip install 'table-controller[feed]'")
                    self._stop.wait()  # nothing to retry: the state says why until stop
                    break
                except Exception as exc:  # noqa: BLE001 - a journal read failed: retried
                    log.warning("feed: %s", exc)
                    self._set(state="down", error=f"journal: {exc}")
                    if outbox is not None:
                        self._save(force=True)
                        outbox.close()
                    outbox = None
                if self._stop.is_set():
                    break
                backoff = BACKOFF_S[0] if ok else min(backoff * 2, BACKOFF_S[1])
                self._stop.wait(backoff)
        finally:
            if outbox is not None:
                self._save(force=True)
                outbox.close()
            self._set(state="stopped")

    def _checked_position(self, outbox: Outbox) -> Position:
        """The stored position if the journal still holds the row it names; else the start
        (the journal was replaced or rolled back: the collector must see it all again)."""
        path = self.settings.position_path
        try:
            pos = load_position(path)
        except PositionError as exc:
            log.warning("feed: %s; sending the journal from its first row", exc)
            return Position()
        if pos.row_seq == 0:
            return pos
        rows = outbox.rows_after(pos.row_seq - 1, 1)
        if not rows or rows[0].seq != pos.row_seq or rows[0].hash != pos.row_hash:
            log.warning(
                "feed: the journal no longer holds row %d as acknowledged; sending it"
                " from its first row",
                pos.row_seq,
            )
            return Position()
        return pos

    def _acked(self, pos: Position) -> None:
        self._position = pos
        self._set(acked_seq=pos.row_seq, acked_head=pos.head_seq)
        self._save()

    def _save(self, force: bool = False) -> None:
        now = time.monotonic()
        if self._position == self._saved or (not force and now - self._saved_at < SAVE_EVERY_S):
            return
        try:
            save_position(self.settings.position_path, self._position)
            self._saved, self._saved_at = self._position, now
        except OSError as exc:
            log.warning("feed: cannot save the position: %s", exc)


def _after_row(
    derived: Derived, row: dict[str, object]
) -> list[tuple[Literal["events", "meters"], bytes]]:
    return derived.after_row(row)


class _Session:
    """One connection: connect, publish the backlog in order, follow the journal, until the
    connection drops or the publisher stops. Runs on the publisher's thread only."""

    def __init__(self, pub: Publisher, outbox: Outbox) -> None:
        self.pub = pub
        self.outbox = outbox
        s = pub.settings
        self.client = new_client(s.broker, f"tc-{s.site}-{s.table}")
        self.client.will_set(
            pub._topics["status"], status_payload("offline", pub._wall_ns()), qos=1, retain=True
        )
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self.connack: ReasonCode | None = None
        self.receive_max = 65535
        self.closed = False
        self.refused = ""
        self.sent: collections.OrderedDict[int, _Sent] = collections.OrderedDict()
        self.rows: collections.deque[_Sent] = collections.deque()
        self.heads: collections.deque[_Sent] = collections.deque()
        self.next_row = pub._position.row_seq
        self.next_head = pub._position.head_seq
        self.buffer: collections.deque[OutboxRow] = collections.deque()
        self.heartbeat_at = 0.0

    # paho callbacks: called from client.loop() on this same thread

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        rc: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self.connack = rc
        if self.pub.commands is not None and not rc.is_failure:
            client.subscribe(self.pub._topics["cmd"], qos=1)
        # paho sets an MQTT 5 property as an attribute only when the CONNACK carries it
        maximum = getattr(properties, "ReceiveMaximum", None)
        if isinstance(maximum, int) and maximum > 0:
            self.receive_max = maximum

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        rc: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self.closed = True
        if rc.is_failure:
            self.pub._set(error=f"disconnected: {rc}")

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        """A command (this thread, from client.loop): bounded, handed on unread."""
        pub = self.pub
        if pub.commands is None or pub.flood is None or message.topic != pub._topics["cmd"]:
            return
        if pub.flood.admit():
            pub.commands.received(bytes(message.payload[:8192]))

    def _extras(self) -> None:
        """What the loop asked for: replies, a replay, the meters; a flood's count."""
        pub = self.pub
        while pub._replies:
            self.client.publish(pub._topics["reply"], pub._replies.popleft(), qos=1)
        if pub._meters_asked:
            pub._meters_asked = False
            for channel, payload in self._derive(lambda d: d.meters_now()):
                self._publish(channel, self.next_row, "", payload)
        while pub._replays:
            first, last = pub._replays.popleft()
            seq = first - 1
            while seq < last:
                rows = self.outbox.rows_after(seq, min(BATCH, last - seq))
                if not rows:
                    break
                for row in rows:
                    if row.seq > last:
                        break
                    # untracked: the position is the live stream's; the collector drops
                    # duplicates by (table, seq)
                    self.client.publish(pub._topics["rows"], row_payload(row.as_dict()), qos=1)
                    seq = row.seq
                    self.client.loop(0.0)
                else:
                    continue
                break
        if pub.commands is not None and pub.flood is not None:
            now = time.monotonic()
            if now - pub._flood_reported >= FLOOD_REPORT_S:
                dropped = pub.flood.take_dropped()
                pub._flood_reported = now
                if dropped:
                    pub.commands.flooded(dropped)

    def _on_publish(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        rc: ReasonCode,
        properties: Properties,
    ) -> None:
        sent = self.sent.pop(mid, None)
        if sent is None:
            return
        if rc.is_failure:
            # MQTT 5 PUBACK with a failure reason (0x87 not authorized: the ACL refused it)
            self.refused = f"broker refused {sent.kind} {sent.seq}: {rc}"
            return
        sent.acked = True

    # the session

    def run(self) -> bool:
        """True when a connection was made (the back-off starts again from its shortest)."""
        pub = self.pub
        pub._set(state="connecting")
        b = pub.settings.broker
        try:
            self.client.connect(b.host, b.port, keepalive=KEEPALIVE_S, clean_start=True)
        except (OSError, ssl.SSLError, ValueError) as exc:
            pub._set(state="down", error=f"{b.url}: {exc}")
            return False
        try:
            return self._serve()
        finally:
            self._close()

    def _serve(self) -> bool:
        pub = self.pub
        deadline = time.monotonic() + pub.settings.connack_timeout_s
        # a stop while connecting still waits a little: a table shut down right after it
        # started (or restarted) sends its backlog if the broker is there
        while (
            self.connack is None
            and not self.closed
            and time.monotonic() < min(deadline, pub._stop_deadline())
        ):
            self.client.loop(0.1)
        if self.connack is None or self.connack.is_failure:
            why = "no CONNACK" if self.connack is None else f"connection refused: {self.connack}"
            pub._set(state="refused" if self.connack is not None else "down", error=why)
            return False
        pub._set(state="connected", error="", connects=pub.state().connects + 1)
        window = max(1, min(pub.settings.window, self.receive_max))
        self._heartbeat()
        while not pub._stop.is_set():
            self._advance()
            if self.refused:
                pub._set(state="refused", error=self.refused)
                return False
            if self.closed:
                pub._set(state="down", error=pub.state().error or "connection lost")
                return True
            self._fill(window)
            self._extras()
            if self.sent:
                oldest = next(iter(self.sent.values()))
                if time.monotonic() - oldest.at > ACK_TIMEOUT_S:
                    pub._set(state="down", error=f"no PUBACK within {ACK_TIMEOUT_S:.0f} s")
                    return True
                rc = self.client.loop(0.05)
            else:
                pub._wake.wait(min(0.5, max(0.0, self.heartbeat_at - time.monotonic())))
                pub._wake.clear()
                rc = self.client.loop(0.0)
            if rc != 0:
                self.closed = True
            if time.monotonic() >= self.heartbeat_at:
                self._heartbeat()
        self._goodbye(window)
        return True

    def _fill(self, window: int) -> None:
        """Publish rows, then heads no newer than the rows sent, while the window has room."""
        while len(self.sent) < window:
            if not self.buffer:
                self.buffer.extend(self.outbox.rows_after(self.next_row, BATCH))
            if self.buffer:
                row = self.buffer.popleft()
                if row.seq != self.next_row + 1 and self.next_row:
                    log.warning("feed: the journal skips from row %d to %d", self.next_row, row.seq)
                as_dict = row.as_dict()
                self._publish("row", row.seq, row.hash, row_payload(as_dict))
                self.next_row = row.seq
                for channel, payload in self._derive(functools.partial(_after_row, row=as_dict)):
                    self._publish(channel, row.seq, "", payload)
                continue
            for channel, payload in self._derive(lambda d: d.idle()):
                self._publish(channel, self.next_row, "", payload)
            heads = [
                h
                for h in self.outbox.heads_after(self.next_head, window - len(self.sent))
                if h.seq <= self.next_row
            ]
            if not heads:
                return
            for head in heads:
                self._publish("head", head.seq, "", head_payload(head.as_dict()))
                self.next_head = head.seq

    def _derive(
        self, ask: Callable[[Derived], list[tuple[Literal["events", "meters"], bytes]]]
    ) -> list[tuple[Literal["events", "meters"], bytes]]:
        """The derived messages, or none: a failure there (a journal read while folding) is
        logged and never stops the rows, which are the record."""
        derived = self.pub._derived
        if derived is None:
            return []
        try:
            return ask(derived)
        except Exception as exc:  # noqa: BLE001 - the rows go on whatever the derivation does
            log.warning("feed: events and meters: %s: %s", type(exc).__name__, exc)
            return []

    def _publish(
        self,
        kind: Literal["row", "head", "status", "events", "meters"],
        seq: int,
        hash_: str,
        payload: bytes,
    ) -> None:
        channel = {"row": "rows", "head": "heads"}.get(kind, kind)
        # rows and events are a stream; heads, status and meters the newest value (retained)
        retain = kind not in ("row", "events")
        info = self.client.publish(self.pub._topics[channel], payload, qos=1, retain=retain)
        entry = _Sent(kind, seq, hash_, time.monotonic())
        self.sent[info.mid] = entry
        if kind == "row":
            self.rows.append(entry)
        elif kind == "head":
            self.heads.append(entry)
        self.pub._set(
            sent_seq=self.next_row if kind != "row" else seq,
            published=self.pub.state().published + 1,
        )

    def _advance(self) -> None:
        """Move the acknowledged position over the acknowledged prefix of what was sent."""
        pos = self.pub._position
        row_seq, row_hash, head_seq = pos.row_seq, pos.row_hash, pos.head_seq
        while self.rows and self.rows[0].acked:
            done = self.rows.popleft()
            row_seq, row_hash = done.seq, done.hash
        while self.heads and self.heads[0].acked:
            head_seq = self.heads.popleft().seq
        new = Position(row_seq, row_hash, head_seq)
        if new != pos:
            self.pub._acked(new)
        else:
            self.pub._save()

    def _heartbeat(self) -> None:
        self._publish("status", 0, "", status_payload("online", self.pub._wall_ns()))
        self.heartbeat_at = time.monotonic() + self.pub.settings.heartbeat_s

    def _goodbye(self, window: int) -> None:
        """Stopping: send what the journal still holds for up to :data:`DRAIN_S` (a clean
        shutdown leaves no backlog when the broker keeps up), then ``offline``."""
        deadline = self.pub._stop_deadline()
        while not self.closed and not self.refused and time.monotonic() < deadline:
            self._advance()
            self._fill(window)
            if not self.sent:
                break
            self.client.loop(0.05)
        self._publish("status", 0, "", status_payload("offline", self.pub._wall_ns()))
        deadline = time.monotonic() + 1.0
        while self.sent and not self.closed and time.monotonic() < deadline:
            self.client.loop(0.05)
        self._advance()

    def _close(self) -> None:
        try:
            self.client.disconnect()
            self.client.loop(0.0)
        except (OSError, ValueError):
            pass
        try:
            sock = self.client.socket()
            if sock is not None:
                sock.close()
        except OSError:
            pass


def publisher_for(
    feed: FeedSettings,
    state_dir: Path,
    open_outbox: Callable[[], Outbox],
    derived: Derived | None = None,
    commands: CommandLink | None = None,
) -> Publisher:
    """The publisher a profile's ``[feed]`` asks for (paths relative to ``state_dir``)."""
    position = Path(feed.position_path)
    broker = parse_broker_url(feed.broker, ca=feed.ca, cert=feed.cert, key=feed.key)
    settings = PublisherSettings(
        broker,
        feed.site,
        feed.table,
        position if position.is_absolute() else state_dir / position,
        heartbeat_s=feed.heartbeat_s,
        window=feed.window,
    )
    return Publisher(settings, open_outbox, derived=derived, commands=commands)

"""Serial card shoe driver: a pySerial reader thread speaking the reference shoe protocol,
revision 3 (docs/design.md: a session id in every frame, heartbeats outside the sequence).

The thread decodes frames, applies the session and sequence rules, posts ``drivers.shoe_events``
onto the controller's queue and answers the shoe. DURABILITY: it never acknowledges a frame the
controller has not journaled and handed back with ``acknowledge(sid, seq)``; after a restart the
controller resumes from its journal with ``$NAK,next,SID`` and a shoe cannot resend a frame it
was told was accepted. Heartbeats are the driver's alone: they feed the watchdog and, when
their LAST names a frame never received, bring a ``$NAK``; they are never posted, journaled or
acknowledged. A ``$HELO`` of another protocol revision (or none) is refused (``bad_revision``).
"""

from __future__ import annotations

import collections
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import serial

from drivers.errors import DriverError
from drivers.shoe_events import (
    ShoeFrameAccepted,
    ShoeFrameRefused,
    ShoeLinkChanged,
    ShoeSession,
    ShoeWatchdog,
)
from drivers.shoe_protocol import (
    REVISION,
    BadFrame,
    Decision,
    Frame,
    FrameDecoder,
    SequenceTracker,
    SessionPosition,
    ShoeProtocolError,
    Verdict,
    check_sid,
    encode,
    helo_revision,
    next_seq,
    seq_distance,
)

__all__ = ["DEFAULT_BAUD", "SerialPort", "SerialShoe", "ShoeStats"]

DEFAULT_BAUD = 115200  # docs/design.md: the baud rate is a profile setting, 115200 by default


class SerialPort(Protocol):
    """The few pySerial methods the driver uses (so a test may hand in another transport)."""

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes, /) -> int | None: ...

    def close(self) -> None: ...


Opener = Callable[[str, int, float, float], SerialPort]


def _open_pyserial(url: str, baud: int, read_timeout: float, write_timeout: float) -> SerialPort:
    # serial_for_url so that loop://, socket:// and pty paths all work (docs/design.md "Serial I/O")
    port: SerialPort = serial.serial_for_url(
        url, baudrate=baud, timeout=read_timeout, write_timeout=write_timeout
    )
    return port


@dataclass(frozen=True, slots=True)
class ShoeStats:
    """Counters since start(); read by the console and the tests."""

    accepted: int
    refused: int
    repeats: int
    foreign: int
    gaps: int
    heartbeats: int
    lost: int
    bad_revision: int
    sessions: int
    acks_sent: int
    naks_sent: int
    stale_acks: int
    reconnects: int
    write_timeouts: int
    post_errors: int
    sid: str | None
    expected_seq: int | None
    durable_seq: int | None
    link_up: bool


class SerialShoe:
    """Reads a card shoe on ``url`` and posts events through ``post`` (from its own thread).

    ``resume`` is the journaled session position: the driver accepts that session's frames
    from ``resume.next_seq`` on and sends ``$NAK,next_seq,SID`` whenever the port opens.
    """

    def __init__(
        self,
        url: str,
        post: Callable[[object], None],
        *,
        baud: int = DEFAULT_BAUD,
        resume: SessionPosition | None = None,
        watchdog_s: float = 3.0,
        read_timeout_s: float = 0.05,
        write_timeout_s: float = 0.5,
        backoff_initial_s: float = 0.1,
        backoff_max_s: float = 2.0,
        opener: Opener | None = None,
    ) -> None:
        if resume is not None and not isinstance(resume, SessionPosition):
            raise ShoeProtocolError(f"resume must be a SessionPosition, not {resume!r}")
        for name, value in (
            ("watchdog_s", watchdog_s),
            ("read_timeout_s", read_timeout_s),
            ("write_timeout_s", write_timeout_s),
            ("backoff_initial_s", backoff_initial_s),
            ("backoff_max_s", backoff_max_s),
        ):
            if not value > 0:
                raise DriverError(f"{name} must be positive, got {value!r}")
        if isinstance(baud, bool) or not isinstance(baud, int) or baud <= 0:
            raise DriverError(f"baud must be a positive integer, got {baud!r}")
        self._url = url
        self._post = post
        self._baud = baud
        self._watchdog_s = watchdog_s
        self._read_timeout = read_timeout_s
        self._write_timeout = write_timeout_s
        self._backoff_initial = backoff_initial_s
        self._backoff_max = max(backoff_max_s, backoff_initial_s)
        self._open = opener or _open_pyserial

        self._tracker = SequenceTracker(resume)
        # The first SEQ of the current session not yet journaled: what the next acknowledge()
        # may cover from. The journal holds everything of the resumed session before next_seq.
        self._floor: int | None = None if resume is None else resume.next_seq
        self._durable: int | None = None if resume is None else (resume.next_seq - 1) % 10000
        # What resync() restores if a new session's $HELO cannot be journaled: the previous
        # position, floor and journaled SEQ, and the HELO's SEQ.
        self._undo_session: tuple[SessionPosition | None, int | None, int | None, int] | None = None
        self._ack_requests: queue.SimpleQueue[tuple[str, int]] = queue.SimpleQueue()
        self._resync_requests: queue.SimpleQueue[int] = queue.SimpleQueue()
        # Guards the session state (tracker, floor, durable) and writes, shared by the reader
        # thread and acknowledge() on the controller's loop thread.
        self._state_lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._port: SerialPort | None = None
        self._write_error: str | None = None
        self._decoder = FrameDecoder()
        self._counts: collections.Counter[str] = collections.Counter()
        self._link_up = False
        self._down_reported = False
        self._watchdog_ok: bool | None = None
        self._last_valid = time.monotonic()

    # -- controller side -------------------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread; it opens the port (retrying with back-off)."""
        if self._thread is not None:
            raise DriverError("SerialShoe already started")
        self._last_valid = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=f"shoe:{self._url}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop the thread and close the port; True if the thread ended within ``timeout``."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def acknowledge(self, sid: str, seq: int) -> None:
        """The controller journaled (and synced) every frame of session ``sid`` up to ``seq``:
        send ``$ACK,seq,sid``.

        Thread-safe. An acknowledgement of another session, or of a SEQ this driver has not
        delivered (or has rewound), is never sent (counted in ``stats().stale_acks``).
        """
        check_sid(sid)
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < 10000:
            raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
        self._ack_requests.put((sid, seq))
        # Send it now from this thread when the reader is not busy with the shared state (it is
        # usually blocked in read()); otherwise the reader sends it on its next turn (<= 50 ms).
        if self._state_lock.acquire(blocking=False):
            try:
                if self._port is not None:
                    self._send_acks()
            finally:
                self._state_lock.release()

    def resync(self, seq: int) -> None:
        """The controller could not journal frame ``seq`` (e.g. the disk is full): forget that it
        and anything after it were accepted, so the shoe's resend is delivered again in order.

        Thread-safe; the reader thread rewinds its expected SEQ to ``seq`` and sends
        ``$NAK,seq,SID``. The controller ignores frames other than ``seq`` that were already
        queued until ``seq`` comes again. When ``seq`` is a new session's ``$HELO`` that was not
        journaled, the reader goes back to the previous session, so the shoe's silence resend
        of that HELO starts the session again (the controller ignores frames until it does).
        """
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < 10000:
            raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
        self._resync_requests.put(seq)

    def stats(self) -> ShoeStats:
        """A snapshot of the counters (refused frames included)."""
        c = self._counts
        return ShoeStats(
            accepted=c["accepted"],
            refused=c["refused"],
            repeats=c["repeats"],
            foreign=c["foreign"],
            gaps=c["gaps"],
            heartbeats=c["heartbeats"],
            lost=c["lost"],
            bad_revision=c["bad_revision"],
            sessions=c["sessions"],
            acks_sent=c["acks_sent"],
            naks_sent=c["naks_sent"],
            stale_acks=c["stale_acks"],
            reconnects=c["reconnects"],
            write_timeouts=c["write_timeouts"],
            post_errors=c["post_errors"],
            sid=self._tracker.sid,
            expected_seq=self._tracker.expected,
            durable_seq=self._durable,
            link_up=self._link_up,
        )

    # -- reader thread ---------------------------------------------------------------------

    def _run(self) -> None:
        backoff = self._backoff_initial
        try:
            while not self._stop.is_set():
                if self._port is None:
                    if not self._connect():
                        self._check_watchdog()
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, self._backoff_max)
                        continue
                    backoff = self._backoff_initial
                with self._state_lock:
                    self._send_acks()
                    self._do_resyncs()
                try:
                    data = self._read()
                except (serial.SerialException, OSError) as exc:
                    self._drop_link(f"{type(exc).__name__}: {exc}")
                    continue
                with self._state_lock:
                    for item in self._decoder.feed(data):
                        self._handle(item)  # received frames are handled even if a write fails
                if self._write_error is not None:
                    self._drop_link(self._write_error)
                self._check_watchdog()
        finally:
            self._close_port()

    def _connect(self) -> bool:
        try:
            self._port = self._open(self._url, self._baud, self._read_timeout, self._write_timeout)
        except (serial.SerialException, OSError, ValueError) as exc:
            if not self._down_reported:  # once per outage, not once per retry
                self._down_reported = True
                # pySerial repeats the path and the errno in its text: the errno's words suffice
                errno = exc.errno if isinstance(exc, OSError) else None
                why = os.strerror(errno) if errno else str(exc)
                self._emit(
                    ShoeLinkChanged(False, f"cannot open {self._url}: {why}", time.monotonic_ns())
                )
            return False
        if self._counts["opens"]:
            self._counts["reconnects"] += 1
        self._counts["opens"] += 1
        self._link_up = True
        self._down_reported = False
        self._decoder = FrameDecoder()  # a partial frame from before the outage is gone
        self._emit(ShoeLinkChanged(True, "opened", time.monotonic_ns()))
        with self._state_lock:
            position = self._tracker.position
            if position is not None:
                # resume (journal) or replug: a shoe of this session resends from what we need;
                # a shoe of another session ignores it and brings its $HELO by its silence resend
                self._send_nak(position)
        if self._write_error is not None:
            self._drop_link(self._write_error)
            return False
        return True

    def _drop_link(self, reason: str) -> None:
        self._close_port()
        self._write_error = None
        if self._link_up:
            self._link_up = False
            self._down_reported = True
            self._emit(ShoeLinkChanged(False, reason, time.monotonic_ns()))

    def _close_port(self) -> None:
        with self._state_lock:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass  # the device is already gone; nothing left to release

    def _read(self) -> bytes:
        assert self._port is not None
        # read(1) returns as soon as a byte arrives (or after the short timeout); the rest of a
        # burst is then taken without waiting. No reliance on inter_byte_timeout (broken in 3.5).
        data = self._port.read(1)
        if data:
            waiting = self._port.in_waiting
            if waiting:
                data += self._port.read(waiting)
        return data

    def _write(self, frame: bytes) -> None:
        """Write one frame; a failure is recorded, the caller drops the link after its batch."""
        if self._port is None or self._write_error is not None:
            return
        try:
            self._port.write(frame)
        except serial.SerialTimeoutException:
            # the shoe is not reading: ACKs are cumulative and NAKs recur, so just count it
            self._counts["write_timeouts"] += 1
        except (serial.SerialException, OSError) as exc:
            self._write_error = f"write failed: {type(exc).__name__}: {exc}"

    def _send_nak(self, position: SessionPosition) -> None:
        self._write(encode("NAK", position.next_seq, position.sid))
        self._counts["naks_sent"] += 1

    def _send_durable_ack(self) -> None:
        """``$ACK`` of the last journaled SEQ of the current session, if any: the answer to a
        repeat (docs/design.md: acknowledge it) and to the controller's acknowledge(). Never
        beyond the journal."""
        sid = self._tracker.sid
        if sid is not None and self._durable is not None:
            self._write(encode("ACK", self._durable, sid))
            self._counts["acks_sent"] += 1

    def _send_acks(self) -> None:
        """Turn the controller's acknowledge() calls into cumulative ``$ACK`` frames."""
        latest: int | None = None
        while True:
            try:
                sid, seq = self._ack_requests.get_nowait()
            except queue.Empty:
                break
            expected = self._tracker.expected
            if (
                sid != self._tracker.sid
                or self._floor is None
                or expected is None
                or seq_distance(seq, self._floor) >= seq_distance(expected, self._floor)
            ):
                # another session's frame (the shoe has power-cycled since: an ACK would cover
                # the new session's unjournaled frames), or a SEQ not delivered / rewound
                self._counts["stale_acks"] += 1
                continue
            latest = seq
            self._floor = next_seq(seq)
        if latest is not None:
            self._durable = latest
            self._send_durable_ack()

    def _do_resyncs(self) -> None:
        """Carry out resync() requests (reader thread): rewind and NAK."""
        while True:
            try:
                seq = self._resync_requests.get_nowait()
            except queue.Empty:
                return
            position = self._tracker.position
            if position is None:
                continue
            undo = self._undo_session
            if undo is not None and self._durable is None and seq == undo[3]:
                # the new session's $HELO never reached the journal: forget the session, so
                # the shoe's resend of its HELO (never acknowledged) starts it again. No NAK:
                # it would name the old SID, which the shoe ignores; its silence resend comes.
                previous, self._floor, self._durable, _ = undo
                self._tracker = SequenceTracker(previous)
                self._undo_session = None
                self._counts["resyncs"] += 1
                continue
            self._tracker.rewind(seq)
            self._counts["resyncs"] += 1
            self._send_nak(SessionPosition(position.sid, seq))

    def _handle(self, item: Frame | BadFrame) -> None:
        now_ns = time.monotonic_ns()
        if isinstance(item, BadFrame):
            position = self._tracker.nak_for_bad_frame()
            expected = None if position is None else position.next_seq
            self._refuse(
                item.reason.value, item.raw, expected, item.detail, position is not None, now_ns
            )
            if position is not None:
                self._send_nak(position)
            return
        decision = self._tracker.classify(item)
        verdict = decision.verdict
        if verdict is Verdict.ACCEPT:
            self._feed_watchdog(now_ns)
            self._accept(decision, now_ns)
        elif verdict is Verdict.HEARTBEAT:
            # revision 3: outside the sequence; it feeds the watchdog and nothing else (never
            # posted, journaled or acknowledged: an idle link is quiet)
            self._feed_watchdog(now_ns)
            self._counts["heartbeats"] += 1
        elif verdict is Verdict.LOST:
            # the heartbeat's LAST is beyond what we accepted: frames were lost on the wire
            self._feed_watchdog(now_ns)
            self._counts["heartbeats"] += 1
            self._counts["lost"] += 1
            self._refuse(
                verdict.value,
                item.raw,
                decision.expected,
                f"heartbeat: the shoe sent up to SEQ {item.seq}",
                decision.nak is not None,
                now_ns,
            )
            if decision.nak is not None and self._tracker.sid is not None:
                self._send_nak(SessionPosition(self._tracker.sid, decision.nak))
        elif verdict is Verdict.BAD_REVISION:
            # no session, no reply, no watchdog: none of this shoe's frames is ever accepted
            self._counts["bad_revision"] += 1
            revision = helo_revision(item)
            named = (
                "names no protocol revision" if revision is None else f"speaks revision {revision}"
            )
            self._refuse(
                verdict.value,
                item.raw,
                decision.expected,
                f"the shoe (session {item.sid}) {named}; this controller speaks revision"
                f" {REVISION}",
                False,
                now_ns,
            )
        elif verdict is Verdict.REPEAT:
            self._feed_watchdog(now_ns)
            self._counts["repeats"] += 1
            self._send_durable_ack()  # docs/design.md: acknowledge it (never beyond the journal)
        elif verdict is Verdict.GAP:
            self._feed_watchdog(now_ns)
            self._counts["gaps"] += 1
            self._refuse(
                "gap",
                item.raw,
                decision.expected,
                f"SEQ {item.seq}",
                decision.nak is not None,
                now_ns,
            )
            if decision.nak is not None and self._tracker.sid is not None:
                self._send_nak(SessionPosition(self._tracker.sid, decision.nak))
        elif verdict is Verdict.FOREIGN:
            # docs/design.md: discarded without a reply; the shoe's silence resend brings its $HELO
            self._counts["foreign"] += 1
            self._refuse(
                verdict.value,
                item.raw,
                decision.expected,
                f"SID {item.sid}, current {self._tracker.sid}",
                False,
                now_ns,
            )
        else:
            self._refuse(verdict.value, item.raw, decision.expected, item.type, False, now_ns)

    def _accept(self, decision: Decision, now_ns: int) -> None:
        frame = decision.frame
        event: ShoeSession | ShoeFrameAccepted
        if decision.new_session:
            event = ShoeSession(
                frame.sid,
                frame.fields[0],
                frame.fields[1],
                frame.seq,
                frame.raw,
                now_ns,
                decision.previous,
            )
        else:
            event = ShoeFrameAccepted(
                frame.type, frame.seq, frame.sid, frame.fields, frame.raw, now_ns, frame.known
            )
        if not self._emit(event):
            # the controller never got it: expect it again so the shoe's resend is accepted
            if decision.new_session:
                self._tracker = SequenceTracker(decision.previous)
            else:
                self._tracker.rewind(frame.seq)
            return
        if decision.new_session:
            self._counts["sessions"] += 1
            self._undo_session = (decision.previous, self._floor, self._durable, frame.seq)
            self._floor = frame.seq
            self._durable = None  # nothing of the new session is journaled yet
        self._counts["accepted"] += 1

    def _refuse(
        self, reason: str, raw: bytes, expected: int | None, detail: str, nak: bool, now_ns: int
    ) -> None:
        self._counts["refused"] += 1
        self._emit(ShoeFrameRefused(reason, raw, expected, detail, nak, now_ns))

    def _emit(self, event: object) -> bool:
        try:
            self._post(event)
        except Exception:  # the reader thread must outlive a failing consumer
            self._counts["post_errors"] += 1
            return False
        return True

    def _feed_watchdog(self, now_ns: int) -> None:
        # docs/design.md: any valid frame of the current session feeds the watchdog
        now = now_ns / 1e9
        silent = now - self._last_valid
        self._last_valid = now
        if self._watchdog_ok is not True:
            self._watchdog_ok = True
            self._emit(ShoeWatchdog(True, silent, now_ns))

    def _check_watchdog(self) -> None:
        # docs/design.md: no valid frame for more than 3 s (3 heartbeats) is a fault
        now_ns = time.monotonic_ns()
        silent = now_ns / 1e9 - self._last_valid
        if silent > self._watchdog_s and self._watchdog_ok is not False:
            self._watchdog_ok = False
            self._emit(ShoeWatchdog(False, silent, now_ns))

"""Serial card shoe driver: a pySerial reader thread speaking the reference shoe protocol.

The thread decodes frames, applies the sequence rules, posts ``drivers.shoe_events`` onto the
controller's queue and answers the shoe. DURABILITY: it never sends ``$ACK`` for a frame before
the controller has journaled it and called ``acknowledge(seq)`` (DESIGN.md "Durability").
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Callable, Sequence
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
    SEQ_MOD,
    BadFrame,
    Decision,
    Frame,
    FrameDecoder,
    SequenceTracker,
    ShoeProtocolError,
    Verdict,
    encode,
    seq_distance,
)

__all__ = ["SerialPort", "SerialShoe", "ShoeStats"]


class SerialPort(Protocol):
    """The few pySerial methods the driver uses (so a test may hand in another transport)."""

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int = 1) -> bytes: ...

    def write(self, data: bytes, /) -> int | None: ...

    def close(self) -> None: ...


Opener = Callable[[str, int, float, float], SerialPort]


def _open_pyserial(url: str, baud: int, read_timeout: float, write_timeout: float) -> SerialPort:
    # serial_for_url so that loop://, socket:// and pty paths all work (STYLE.md "Serial I/O")
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
    held: int
    gaps: int
    acks_sent: int
    naks_sent: int
    stale_acks: int
    reconnects: int
    write_timeouts: int
    post_errors: int
    expected_seq: int | None
    link_up: bool


class SerialShoe:
    """Reads a card shoe on ``url`` and posts events through ``post`` (from its own thread)."""

    def __init__(
        self,
        url: str,
        post: Callable[[object], None],
        *,
        baud: int = 9600,
        resume_seq: int | None = None,
        known_session: Sequence[bytes] | None = None,
        watchdog_s: float = 3.0,
        read_timeout_s: float = 0.05,
        write_timeout_s: float = 0.5,
        backoff_initial_s: float = 0.1,
        backoff_max_s: float = 2.0,
        opener: Opener | None = None,
    ) -> None:
        if resume_seq is not None and (
            isinstance(resume_seq, bool) or not isinstance(resume_seq, int)
            or not 0 <= resume_seq < SEQ_MOD
        ):
            raise ShoeProtocolError(f"resume_seq {resume_seq!r} is not an integer 0-9999")
        for name, value in (
            ("watchdog_s", watchdog_s),
            ("read_timeout_s", read_timeout_s),
            ("write_timeout_s", write_timeout_s),
            ("backoff_initial_s", backoff_initial_s),
            ("backoff_max_s", backoff_max_s),
        ):
            if not value > 0:
                raise DriverError(f"{name} must be positive, got {value!r}")
        self._url = url
        self._post = post
        self._baud = baud
        self._watchdog_s = watchdog_s
        self._read_timeout = read_timeout_s
        self._write_timeout = write_timeout_s
        self._backoff_initial = backoff_initial_s
        self._backoff_max = max(backoff_max_s, backoff_initial_s)
        self._open = opener or _open_pyserial

        if known_session and resume_seq is None:
            raise ShoeProtocolError("known_session needs resume_seq (both come from the journal)")
        # known_session: the journaled $HELO and the frames accepted after it, so that a shoe
        # resending that HELO after our restart is recognised as the same session, not a new one
        self._tracker = SequenceTracker(resume_seq, known_session)
        # Accepted frames awaiting the controller's acknowledge(), oldest first: (session, seq).
        self._pending: collections.deque[tuple[int, int]] = collections.deque()
        self._session = 0
        # The journal holds everything before resume_seq, so repeats may be acknowledged to it.
        self._last_acked: int | None = None if resume_seq is None else (resume_seq - 1) % SEQ_MOD
        self._ack_requests: queue.SimpleQueue[int] = queue.SimpleQueue()
        # Guards the sequence state (tracker, pending ACKs, session) and writes, shared by the
        # reader thread and acknowledge() on the controller's loop thread.
        self._state_lock = threading.RLock()
        self._resync_requests: queue.SimpleQueue[int] = queue.SimpleQueue()
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

    def acknowledge(self, seq: int) -> None:
        """The controller journaled (and synced) the frame ``seq``: the thread sends ``$ACK``.

        Thread-safe; call it in the order events were posted. Unknown or stale SEQs are ignored
        (counted in ``stats().stale_acks``).
        """
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < SEQ_MOD:
            raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
        self._ack_requests.put(seq)
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

        Thread-safe; the reader thread rewinds its expected SEQ to ``seq``, drops the pending
        acknowledgements from ``seq`` on, and sends ``$NAK,seq``. The controller ignores frames
        other than ``seq`` that were already queued until ``seq`` comes again.
        """
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < SEQ_MOD:
            raise ShoeProtocolError(f"SEQ {seq!r} is not an integer 0-9999")
        self._resync_requests.put(seq)

    def stats(self) -> ShoeStats:
        """A snapshot of the counters (refused frames included)."""
        c = self._counts
        return ShoeStats(
            accepted=c["accepted"],
            refused=c["refused"],
            repeats=c["repeats"],
            held=c["held"],
            gaps=c["gaps"],
            acks_sent=c["acks_sent"],
            naks_sent=c["naks_sent"],
            stale_acks=c["stale_acks"],
            reconnects=c["reconnects"],
            write_timeouts=c["write_timeouts"],
            post_errors=c["post_errors"],
            expected_seq=self._tracker.expected,
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
                self._emit(ShoeLinkChanged(False, f"open failed: {exc}", time.monotonic_ns()))
            return False
        if self._counts["opens"]:
            self._counts["reconnects"] += 1
        self._counts["opens"] += 1
        self._link_up = True
        self._down_reported = False
        self._decoder = FrameDecoder()  # a partial frame from before the outage is gone
        self._emit(ShoeLinkChanged(True, "opened", time.monotonic_ns()))
        expected = self._tracker.expected
        if expected is not None:
            self._send_nak(expected)  # resume (journal) or replug: resend from what we need
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

    def _send_nak(self, seq: int) -> None:
        self._write(encode("NAK", seq))
        self._counts["naks_sent"] += 1

    def _send_ack(self, seq: int) -> None:
        self._write(encode("ACK", seq))
        self._counts["acks_sent"] += 1

    def _send_acks(self) -> None:
        """Turn the controller's acknowledge() calls into cumulative ``$ACK`` frames."""
        if self._tracker.holding:
            return  # the shoe may have powered up: an ACK now could cover its new frames
        latest: int | None = None
        while True:
            try:
                seq = self._ack_requests.get_nowait()
            except queue.Empty:
                break
            index = next((i for i, (_, s) in enumerate(self._pending) if s == seq), None)
            if index is None:
                self._counts["stale_acks"] += 1
                continue
            for _ in range(index):
                self._pending.popleft()
            session, _ = self._pending.popleft()
            if session == self._session:
                latest = seq  # an old session's shoe is gone: never ACK its SEQs to the new one
        if latest is not None:
            self._last_acked = latest
            self._send_ack(latest)

    def _do_resyncs(self) -> None:
        """Carry out resync() requests (reader thread): rewind, drop pending ACKs, NAK."""
        while True:
            try:
                seq = self._resync_requests.get_nowait()
            except queue.Empty:
                return
            # Pending entries are in acceptance order: drop the one for ``seq`` and all after.
            index = next((i for i, (_, s) in enumerate(self._pending) if s == seq), None)
            if index is not None:
                while len(self._pending) > index:
                    self._pending.pop()
            self._tracker.rewind(seq)
            self._counts["resyncs"] += 1
            self._send_nak(seq)

    def _handle(self, item: Frame | BadFrame) -> None:
        now_ns = time.monotonic_ns()
        if isinstance(item, BadFrame):
            nak = self._tracker.nak_for_bad_frame()
            self._refuse(item.reason.value, item.raw, nak, item.detail, nak is not None, now_ns)
            if nak is not None:
                self._send_nak(nak)
            return
        self._feed_watchdog(now_ns)
        decision = self._tracker.classify(item, now_ns / 1e9)
        verdict = decision.verdict
        if verdict is Verdict.ACCEPT:
            self._accept(decision, now_ns)
            if decision.nak is not None:
                self._send_nak(decision.nak)  # a held HELO proved a power-up: resend after it
        elif verdict is Verdict.HELD:
            self._counts["held"] += 1
            if decision.nak is not None:
                self._send_nak(decision.nak)
        elif verdict is Verdict.CONFLICT:
            self._refuse("conflict", item.raw, decision.expected,
                         f"SEQ {item.seq} differs from the frame accepted there", False, now_ns)
        elif verdict is Verdict.REPEAT:
            self._counts["repeats"] += 1
            if self._last_acked is not None and self._tracker.accepted_here(item):
                # acknowledge the repeat itself if it is journaled, else what is: never beyond
                journaled = seq_distance(self._last_acked, item.seq) < SEQ_MOD // 2
                self._send_ack(item.seq if journaled else self._last_acked)
            # A "repeat" this run never accepted (after a restart the tracker knows no earlier
            # frames) is not acknowledged: it may come from a shoe that powered up while we were
            # down and lost its HELO, and a cumulative ACK would make it drop frames nobody
            # journaled (bench/crash_trials.py). The shoe resends; the resume NAK's frame, once
            # journaled, is acknowledged cumulatively.
        elif verdict is Verdict.GAP:
            self._counts["gaps"] += 1
            self._refuse("gap", item.raw, decision.expected, f"SEQ {item.seq}",
                         decision.nak is not None, now_ns)
            if decision.nak is not None:
                self._send_nak(decision.nak)
        else:
            self._refuse(verdict.value, item.raw, decision.expected, item.type, False, now_ns)

    def _accept(self, decision: Decision, now_ns: int) -> None:
        frame = decision.frame
        event: ShoeSession | ShoeFrameAccepted
        if decision.new_session:
            self._session += 1
            self._last_acked = None
            event = ShoeSession(frame.fields[0], frame.fields[1], frame.seq, frame.raw, now_ns)
        else:
            event = ShoeFrameAccepted(
                frame.type, frame.seq, frame.fields, frame.raw, now_ns, frame.known
            )
        if not self._emit(event):
            # the controller never got it: expect it again so the shoe's resend is accepted
            self._tracker.rewind(frame.seq)
            return
        self._counts["accepted"] += 1
        self._pending.append((self._session, frame.seq))

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
        now = now_ns / 1e9
        silent = now - self._last_valid
        self._last_valid = now
        if self._watchdog_ok is not True:
            self._watchdog_ok = True
            self._emit(ShoeWatchdog(True, silent, now_ns))

    def _check_watchdog(self) -> None:
        # DESIGN.md: no valid frame for more than 3 s (3 heartbeats) is a fault
        now_ns = time.monotonic_ns()
        silent = now_ns / 1e9 - self._last_valid
        if silent > self._watchdog_s and self._watchdog_ok is not False:
            self._watchdog_ok = False
            self._emit(ShoeWatchdog(False, silent, now_ns))

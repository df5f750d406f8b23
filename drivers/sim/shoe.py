"""Simulated card shoe: the reference shoe protocol's shoe side (revision 3), with faults on demand.

It shuffles N decks, places the cover card, and speaks docs/design.md "Reference shoe protocol,
revision 3" on a serial port or on a pseudo-terminal it creates. At every power-up it draws a
new session id and names the revision in its ``$HELO``; it keeps every sequenced frame until it
is acknowledged (across a cable pull too), never drops one, and locks its card gate with
``$FLT,FULL`` when its buffer is full. Heartbeats (``$HBT,LAST,SID``) take no SEQ and are never
held or resent. The stimulus
methods (``deal``, ``inject``...) are for tests and technicians; production code never calls
them. The shuffle uses ``random.Random(seed)``: reproducible, fine for a simulator, never for
play. With ``state_path`` the shoe keeps its state (cards, session, frames held) in a file, so a
controller process that restarts finds the same powered-on shoe (docs/shoe-protocol.md).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import json
import os
import random
import select
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import serial

from drivers.errors import DriverError
from drivers.shoe_protocol import (
    CARD_RE,
    REVISION,
    SEQ_MOD,
    Frame,
    FrameDecoder,
    encode,
    is_sid,
    next_seq,
)

__all__ = ["FAULTS", "SimShoe", "SimShoeError", "SimShoeStatus", "build_shoe", "main", "new_sid"]

RANKS = "A23456789TJQK"
SUITS = "SHDC"
COVER = "COVER"  # a cover card in the dealing stack
RECEIVED_MAX = 4096  # ACK/NAK frames remembered in ``received`` (the newest)
MIN_KEEP = 64  # docs/design.md: the shoe holds at least 64 unacknowledged frames
DEFAULT_BAUD = 115200  # docs/design.md: 115200 by default
DISCONNECT_S = 1.0  # how long the ``disconnect`` fault keeps the cable out
STATE_VERSION = 2  # 2: protocol revision 3 (a state file of revision 2 is set aside)

#: The shoe faults a technician or a test can inject, one vocabulary for the console's
#: ``sim shoe fault KIND``, the standalone emulator's ``fault KIND`` and the docs.
FAULTS: dict[str, str] = {
    "checksum": "the next new sequenced frame goes out once with a wrong checksum",
    "drop": "the next new sequenced frame is not sent at first (recovered by the NAK of a gap"
    " or of the next heartbeat, or the silence resend)",
    "duplicate": "the next new sequenced frame is sent twice",
    "garbage": "a burst of bytes that are not a frame",
    "disconnect": f"the cable is pulled for {DISCONNECT_S:g} s (frames held are kept)",
    "power": "a power cycle: frames held are lost, a new session id, a new $HELO",
    "unread": "the next card leaves the shoe unread: $FLT,seq,SID,UNREAD",
    "foreign": "a card beyond the shoe's composition (a face none of whose copies is left)",
    "faceup": "a card found face up: $FLT,seq,SID,FACEUP, then its $CARD (an extension)",
    "jam": "$FLT,seq,SID,JAM",
    "door": "$FLT,seq,SID,DOOR",
    "clear": "$FLT,seq,SID,CLR: the shoe's faults are cleared",
}


class SimShoeError(DriverError, RuntimeError):
    """The simulated shoe cannot do what was asked (empty shoe, gate locked, bad argument)."""


def build_shoe(decks: int, rng: random.Random, cover_from_end: Sequence[int]) -> list[str]:
    """Shuffled ``decks`` x 52 cards with a cover card ``k`` cards from the end for each k."""
    if not 1 <= decks <= 16:
        raise SimShoeError(f"decks must be 1-16, got {decks}")
    cards = [rank + suit for _ in range(decks) for suit in SUITS for rank in RANKS]
    rng.shuffle(cards)
    for k in sorted(cover_from_end):
        if not 1 <= k < len(cards):
            raise SimShoeError(f"cover card position {k} from the end is outside the shoe")
        cards.insert(len(cards) - k, COVER)
    return cards


def new_sid(previous: str | None = None, randbytes: Callable[[int], bytes] = os.urandom) -> str:
    """A session id drawn at power-up: 8 upper-case hex digits, never ``00000000`` and never
    the previous session's (from the operating system's random source, not the shuffle's seed:
    two simulated shoes built with one seed still have different sessions)."""
    while True:
        sid = randbytes(4).hex().upper()
        if is_sid(sid) and sid != previous:
            return sid


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return "unknown"


class _Link(Protocol):
    def read(self, timeout: float) -> bytes: ...

    def write(self, data: bytes) -> bool: ...

    def close(self) -> None: ...


class _PtyLink:
    """The master end of a pseudo-terminal; the slave is kept open (raw) so it never hangs up.

    ``close`` waits for a read in progress (at most its timeout): closed under a read, the fd's
    number could be reused by the next link's pty before the read used it, and the old read
    would then take the new link's bytes or block on its slave."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # no echo, no CR/LF translation before the controller opens it
        os.set_blocking(self.master, False)
        self.slave_path = os.ttyname(self.slave)
        self._reading = threading.Lock()
        self._closed = False

    def read(self, timeout: float) -> bytes:
        with self._reading:
            if self._closed:
                raise OSError("the link is closed")
            ready, _, _ = select.select([self.master], [], [], timeout)
            if not ready:
                return b""
            try:
                return os.read(self.master, 4096)
            except BlockingIOError:
                return b""

    def write(self, data: bytes) -> bool:
        """Write all of ``data``; False if nobody read the slave for 0.2 s (bytes lost)."""
        view = memoryview(data)
        deadline = time.monotonic() + 0.2
        while view:
            try:
                view = view[os.write(self.master, view) :]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self.master], [], left)[1]:
                    return False
        return True

    def close(self) -> None:
        with self._reading:
            if self._closed:
                return
            self._closed = True
            for fd in (self.master, self.slave):
                with contextlib.suppress(OSError):
                    os.close(fd)


class _SerialLink:
    """A real serial port (a technician's USB adapter) or any pySerial URL."""

    def __init__(self, url: str, baud: int) -> None:
        self.port = serial.serial_for_url(url, baudrate=baud, timeout=0, write_timeout=0.5)
        self._reading = threading.Lock()  # close() waits for a read in progress (see _PtyLink)

    def read(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        with self._reading:
            while True:
                try:
                    waiting = self.port.in_waiting
                except (TypeError, AttributeError) as exc:
                    # pySerial without its fd (closed): a lost port, which the caller handles
                    raise serial.SerialException("the port is closed") from exc
                if waiting:
                    data: bytes = self.port.read(waiting)
                    return data
                if time.monotonic() >= deadline:
                    return b""
                time.sleep(0.002)

    def write(self, data: bytes) -> bool:
        try:
            self.port.write(data)
        except serial.SerialTimeoutException:
            return False
        return True

    def close(self) -> None:
        with self._reading, contextlib.suppress(serial.SerialException, OSError):
            self.port.close()


@dataclasses.dataclass(frozen=True, slots=True)
class SimShoeStatus:
    """What a technician's ``status`` command shows."""

    connected: bool
    sid: str
    next_seq: int
    session_seq: int
    unacked: int
    heartbeats: int  # sent since start (never held, never resent)
    full: bool
    cards_left: int
    cards_dealt: int
    covers_left: int
    resends: int
    naks_received: int
    acks_received: int
    foreign_received: int
    bad_frames_received: int


class SimShoe:
    """A shoe on ``port`` (a pySerial URL or device path), or on its own pty (``create_pty``).

    ``state_path``: a file where the shoe keeps its state after every change (written before
    any frame leaves). A SimShoe built on an existing file is the same shoe, still powered on
    (the same cards, session and frames held), unless the machine rebooted since: then it
    powers up (a new session, frames held lost, the cards still in it).
    """

    def __init__(
        self,
        port: str | None = None,
        *,
        decks: int = 8,
        seed: int | None = None,
        cover_from_end: Sequence[int] | None = None,
        model: str = "SIM-SHOE",
        firmware: str = "2.0",
        start_seq: int = 0,
        heartbeat_s: float | None = 1.0,
        revision: str | None = REVISION,
        resend_after_s: float = 0.5,
        keep: int = MIN_KEEP,
        baud: int = DEFAULT_BAUD,
        state_path: str | os.PathLike[str] | None = None,
        randbytes: Callable[[int], bytes] = os.urandom,
    ) -> None:
        if keep < MIN_KEEP:
            raise SimShoeError(f"keep must be at least {MIN_KEEP} (docs/design.md), got {keep}")
        if not 0 <= start_seq < SEQ_MOD:
            raise SimShoeError(f"start_seq must be 0-9999, got {start_seq}")
        self._randbytes = randbytes
        self._rng = random.Random(seed)
        if cover_from_end is None:
            # 5324.20(b)(4) asks for two cover cards but does not say where they go: one is
            # placed about 14-16 cards from the end (the cut card), the other backs the stack.
            cover_from_end = (self._rng.randint(14, 16),)
        self._cards = collections.deque(build_shoe(decks, self._rng, cover_from_end))
        self._decks = decks
        self._dealt: collections.Counter[str] = collections.Counter()
        self._port = port
        self._baud = baud
        self._model, self._firmware = model, firmware
        self._sid = new_sid(None, randbytes)
        # ``revision``: what the $HELO names; another one (or None: a revision 2 shoe) only to
        # show that the controller refuses such a shoe
        self._revision = () if revision is None else (revision,)
        encode("HELO", 0, self._sid, model, firmware, *self._revision)  # refuse what cannot go
        self._start_seq = start_seq
        self._seq = start_seq
        self._session_seq = start_seq
        self._heartbeat_s = heartbeat_s
        self._resend_after = resend_after_s
        self._keep = keep
        self._unacked: collections.OrderedDict[int, bytes] = collections.OrderedDict()
        self._full = False  # the card gate is locked: the buffer is full ($FLT,FULL sent)
        self._powered = False  # True once a $HELO of this session was sent
        self._armed: list[str] = []  # one-shot faults applied to the next new frame
        self._lock = threading.RLock()
        self._acked = threading.Condition(self._lock)
        self._link: _Link | None = None
        self._pty: _PtyLink | None = None
        self._link_path: str | None = None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._reconnect_at: float | None = None
        self._decoder = FrameDecoder()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._quiet_from = time.monotonic()
        self._next_hbt = time.monotonic()
        self._counts: collections.Counter[str] = collections.Counter()
        self.received: list[Frame] = []  # every ACK/NAK the controller sent, for tests
        self._state_path = None if state_path is None else Path(state_path)
        if self._state_path is not None and self._state_path.exists():
            self._load()

    # -- set-up ----------------------------------------------------------------------------

    def create_pty(self, link: str | None = None) -> str:
        """Create the pty and return the path the controller opens: a symlink to the slave.

        The symlink (``link``, or one in a private temp dir) is removed while disconnected and
        made again, to a fresh pty, on reconnect: a replug is found at the same path, as a USB
        adapter's by-id path would be, and an unplugged shoe's path leads nowhere.
        """
        with self._lock:
            if self._port is not None:
                raise SimShoeError("this SimShoe was given a port; it does not create a pty")
            if self._link_path is None:
                if link is None:
                    self._tmpdir = tempfile.TemporaryDirectory(prefix="simshoe-")
                    link = os.path.join(self._tmpdir.name, "shoe")
                self._link_path = link
            if self._pty is None:
                self._open_link()
            return self._link_path

    @property
    def path(self) -> str | None:
        """The path the controller opens (pty symlink or the configured port)."""
        return self._link_path if self._port is None else self._port

    @property
    def sid(self) -> str:
        """The session id of the current power-up."""
        return self._sid

    def start(self) -> None:
        """Open the port and start the thread (heartbeats, resends). A shoe that is not yet
        powered on powers up (``$HELO``); one restored from its state file goes on with its
        session, as if its cable had been plugged back in."""
        with self._lock:
            if self._thread is not None:
                raise SimShoeError("SimShoe already started")
            if self._link is None:
                if self._port is None:
                    self.create_pty()
                else:
                    self._open_link()
            if not self._powered:
                self._power_up()
            self._quiet_from = time.monotonic()
            self._next_hbt = time.monotonic() + (self._heartbeat_s or 0.0)
        self._thread = threading.Thread(target=self._run, name="sim-shoe", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop the thread and close the port; True if the thread ended within ``timeout``.
        The state file (if any) stays: the shoe is unplugged, not powered off."""
        self._stop.set()
        ended = True
        if self._thread is not None:
            self._thread.join(timeout)
            ended = not self._thread.is_alive()
        with self._lock:
            self._close_link()
            if self._link_path is not None and self._tmpdir is None:
                with contextlib.suppress(OSError):
                    os.unlink(self._link_path)
            if self._tmpdir is not None:
                self._tmpdir.cleanup()
                self._tmpdir = None
        return ended

    # -- stimulus (tests and technicians only) ---------------------------------------------

    def inject(self, kind: str) -> str:
        """Inject the fault ``kind`` (a name of FAULTS); returns a one-line description."""
        actions: dict[str, Callable[[], str]] = {
            "checksum": lambda: self._arm("checksum"),
            "drop": lambda: self._arm("drop"),
            "duplicate": lambda: self._arm("duplicate"),
            "garbage": lambda: f"sent {self.send_garbage()!r}",
            "disconnect": lambda: self._disconnect_for(DISCONNECT_S),
            "power": lambda: f"powered up, session {self.power_cycle()}",
            "unread": lambda: f"unreadable {self.deal_unreadable()}",
            "foreign": lambda: f"foreign {self.deal_foreign()}",
            "faceup": lambda: f"face up {self.deal_face_up()}",
            "jam": lambda: self._flt("JAM"),
            "door": lambda: self._flt("DOOR"),
            "clear": lambda: self._flt("CLR"),
        }
        action = actions.get(kind)
        if action is None:
            raise SimShoeError(f"unknown shoe fault {kind!r}; faults are {', '.join(FAULTS)}")
        return f"fault {kind}: {action()}"

    def load(self, seed: int | None = None, cover_from_end: Sequence[int] | None = None) -> int:
        """The dealer loads a newly shuffled shoe (the cards left are taken out first); the shoe
        stays powered and connected, its session goes on. Returns the cards loaded."""
        with self._lock:
            rng = random.Random(seed) if seed is not None else self._rng
            if cover_from_end is None:
                cover_from_end = (rng.randint(14, 16),)
            self._cards = collections.deque(build_shoe(self._decks, rng, cover_from_end))
            self._dealt.clear()
            self._save()
            return 52 * self._decks

    def deal(self, n: int = 1) -> list[str]:
        """Deal the next ``n`` cards; a cover card passing the reader sends ``$COVR`` first.

        Refused as a whole (nothing dealt) if the shoe holds fewer cards, or if the frames
        would not fit in its buffer: the card gate is locked, nothing is ever dropped.
        """
        with self._lock:
            if n < 0:
                raise SimShoeError(f"deal needs a count of 0 or more, got {n}")
            cards = [c for c in self._cards if c != COVER]
            if len(cards) < n:
                raise SimShoeError(f"only {len(cards)} cards left, asked for {n}")
            frames = 0
            got = 0
            for card in self._cards:
                if got >= n:
                    break
                frames += 1
                got += card != COVER
            self._room(frames)
            dealt: list[str] = []
            while len(dealt) < n:
                card = self._cards.popleft()
                if card == COVER:
                    self._emit("COVR")
                    continue
                self._dealt[card] += 1
                self._emit("CARD", card)
                dealt.append(card)
            return dealt

    def peek(self, n: int) -> list[str]:
        """The next ``n`` cards (fewer if fewer are left), not dealt: cover cards are skipped.

        For tests and the simulated dealer: they decide how many cards a coup or a burn takes
        with the rules engine on these cards, then ``deal`` exactly that many.
        """
        if n < 0:
            raise SimShoeError(f"peek needs a count of 0 or more, got {n}")
        with self._lock:
            out: list[str] = []
            for card in self._cards:
                if len(out) >= n:
                    break
                if card != COVER:
                    out.append(card)
            return out

    def deal_card(self, card: str) -> None:
        """Deal ``card`` next (taken from the shoe, so the inventory stays true)."""
        with self._lock:
            self._check_card(card)
            if card not in self._cards:
                raise SimShoeError(
                    f"{card} is not left in the shoe; a card beyond the shoe's"
                    " composition is `fault foreign`"
                )
            self._room(1)
            self._cards.remove(card)
            self._dealt[card] += 1
            self._emit("CARD", card)

    def deal_foreign(self, card: str | None = None) -> str:
        """Deal a card that is not in the shoe's composition: a face none of whose copies is
        left in the shoe (all ``decks`` of them are out). Without ``card`` the face dealt most
        is chosen. While every face still has a copy in the shoe, no card can be foreign (a
        card of a standard deck would pass for one of them): refused."""
        with self._lock:
            left = collections.Counter(c for c in self._cards if c != COVER)
            if card is None:
                gone = [c for c in (r + s for s in SUITS for r in RANKS) if not left[c]]
                if not gone:
                    raise SimShoeError(
                        f"every face still has a copy in the shoe ({self._decks} decks): a"
                        " foreign card would pass for one; deal out every copy of one face"
                        " first (`card RS`)"
                    )
                card = max(gone, key=lambda c: (self._dealt[c], c))
            self._check_card(card)
            if left[card]:
                raise SimShoeError(f"{card} is in the shoe's composition ({left[card]} left)")
            self._room(1)
            self._emit("CARD", card)
            return card

    def deal_face_up(self) -> str:
        """A card found face up: ``$FLT,FACEUP`` (an extension) then its ``$CARD``."""
        with self._lock:
            if not any(c != COVER for c in self._cards):
                raise SimShoeError("the shoe is empty")
            self._room(2 + sum(1 for _ in self._covers_before_next()))
            self._emit("FLT", "FACEUP")
            return self.deal()[0]

    def deal_unreadable(self) -> str:
        """The next card leaves the shoe unread: ``$FLT,UNREAD``; returns the card."""
        with self._lock:
            if not any(c != COVER for c in self._cards):
                raise SimShoeError("the shoe is empty")
            self._room(1 + sum(1 for _ in self._covers_before_next()))
            while self._cards[0] == COVER:
                self._cards.popleft()
                self._emit("COVR")
            card = self._cards.popleft()
            self._dealt[card] += 1
            self._emit("FLT", "UNREAD")
            return card

    def fault(self, code: str) -> None:
        """Send ``$FLT,seq,SID,code`` (JAM, DOOR, CLR...)."""
        with self._lock:
            self._room(1)
            self._emit("FLT", code)

    def fault_checksum(self) -> None:
        """The next new frame goes out once with a wrong checksum (resends are clean)."""
        self._arm("checksum")

    def fault_drop(self) -> None:
        """The next new frame is not sent at first (recovered by NAK or the silence resend)."""
        self._arm("drop")

    def fault_duplicate(self) -> None:
        """The next new frame is sent twice."""
        self._arm("duplicate")

    def send_garbage(self, data: bytes | None = None) -> bytes:
        """Write bytes that are not a frame (random printable noise by default)."""
        with self._lock:
            if data is None:
                data = bytes(self._rng.randrange(0x20, 0x7F) for _ in range(12)).replace(b"$", b"#")
            self._write(data)
            return data

    def disconnect(self, seconds: float | None = None) -> None:
        """Unplug the cable: close the port (a pty's link path is removed); unacked frames and
        the session are kept. Reconnects after ``seconds``, or on ``reconnect()`` when
        ``seconds`` is None.
        """
        with self._lock:
            self._close_link()
            self._reconnect_at = None if seconds is None else time.monotonic() + seconds

    def reconnect(self) -> None:
        """Plug the cable back in (the pty link path is made again, to a fresh pty)."""
        with self._lock:
            self._reconnect_at = None
            if self._link is None:
                self._open_link()
                self._quiet_from = time.monotonic()

    def power_cycle(self, start_seq: int | None = None) -> str:
        """Power off and on: unacked frames are lost, a new session (new SID) starts with
        ``$HELO``; the cards stay in the shoe. Returns the new SID.

        The SEQ counter restarts at ``start_seq`` (default: the one given at construction).
        """
        with self._lock:
            self._seq = (self._start_seq if start_seq is None else start_seq) % SEQ_MOD
            self._power_up()
            return self._sid

    def wait_acked(self, timeout: float) -> bool:
        """Block until every frame sent is acknowledged; False on timeout."""
        with self._acked:
            return self._acked.wait_for(lambda: not self._unacked, timeout)

    def delivered(self) -> bool:
        """True when every frame sent is acknowledged: the controller has journaled every
        card, cover card, fault and $HELO sent (heartbeats are never held: nothing to wait
        for)."""
        with self._lock:
            return not self._unacked

    def wait_delivered(self, timeout: float) -> bool:
        """Block until ``delivered()``; False on timeout."""
        with self._acked:
            return self._acked.wait_for(self.delivered, timeout)

    def status(self) -> SimShoeStatus:
        """Counters and the state of the shoe."""
        with self._lock:
            c = self._counts
            return SimShoeStatus(
                connected=self._link is not None,
                sid=self._sid,
                next_seq=self._seq,
                session_seq=self._session_seq,
                unacked=len(self._unacked),
                heartbeats=c["heartbeats"],
                full=self._full,
                cards_left=sum(1 for x in self._cards if x != COVER),
                cards_dealt=sum(self._dealt.values()),
                covers_left=sum(1 for x in self._cards if x == COVER),
                resends=c["resends"],
                naks_received=c["naks"],
                acks_received=c["acks"],
                foreign_received=c["foreign"],
                bad_frames_received=c["bad"],
            )

    # -- internals -------------------------------------------------------------------------

    def _arm(self, fault: str) -> str:
        with self._lock:
            self._armed.append(fault)
        return "armed for the next new frame"

    def _flt(self, code: str) -> str:
        self.fault(code)
        return f"$FLT,{code}"

    def _disconnect_for(self, seconds: float) -> str:
        self.disconnect(seconds)
        return f"cable out for {seconds:g} s"

    def _covers_before_next(self) -> list[str]:
        out = []
        for card in self._cards:
            if card != COVER:
                break
            out.append(card)
        return out

    def _check_card(self, card: str) -> None:
        if not isinstance(card, str) or not CARD_RE.fullmatch(card):
            raise SimShoeError(f"{card!r} is not rank A23456789TJQK + suit SHDC")

    def _room(self, frames: int) -> None:
        """Refuse ``frames`` new frames that would not fit: the last slot is kept for
        ``$FLT,FULL`` (docs/design.md: the shoe never drops a frame; it locks its gate)."""
        if self._full:
            raise SimShoeError(
                f"FULL: the card gate is locked, {len(self._unacked)} frames unacknowledged"
            )
        free = self._keep - 1 - len(self._unacked)
        if frames > free:
            raise SimShoeError(
                f"only {free} frames free of {self._keep}: the controller is not acknowledging"
            )

    def _power_up(self) -> None:
        self._unacked.clear()
        self._armed.clear()
        self._full = False
        self._acked.notify_all()
        self._sid = new_sid(self._sid, self._randbytes)
        self._powered = True
        self._emit("HELO", self._model, self._firmware, *self._revision)

    def _open_link(self) -> None:
        if self._port is not None:
            self._link = _SerialLink(self._port, self._baud)
            return
        pty = _PtyLink()
        assert self._link_path is not None
        tmp = f"{self._link_path}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(pty.slave_path, tmp)
        os.replace(tmp, self._link_path)  # atomic: the path leads to a complete pty or nowhere
        self._pty = pty
        self._link = pty
        self._decoder = FrameDecoder()

    def _close_link(self) -> None:
        link, self._link, self._pty = self._link, None, None
        if self._port is None and self._link_path is not None:
            # unplugged: the path disappears, as a USB adapter's by-id path does, so the
            # controller never opens the closed pty's number once another process reuses it
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._link_path)
        if link is not None:
            link.close()

    def _write(self, data: bytes) -> bool:
        """Send bytes; False if they were lost (cable out, nobody reading): frames stay held."""
        if self._link is None:
            return False
        try:
            return self._link.write(data)
        except (OSError, serial.SerialException):
            self._close_link()
            self._reconnect_at = time.monotonic() + 1.0
            return False

    def _emit(self, ftype: str, *fields: str) -> None:
        """Send a new frame with the next SEQ and keep it until acknowledged; the state file
        is written first, so the frame is never on the wire before the shoe remembers it."""
        seq = self._seq
        frame = encode(ftype, seq, self._sid, *fields)
        self._seq = next_seq(seq)
        if ftype == "HELO":
            self._session_seq = seq
        if not self._unacked:
            self._quiet_from = time.monotonic()
        self._unacked[seq] = frame
        full: bytes | None = None
        if not self._full and len(self._unacked) == self._keep - 1:
            # one slot left: it carries FULL, and the gate stays locked until acknowledged
            self._full = True
            full = encode("FLT", self._seq, self._sid, "FULL")
            self._unacked[self._seq] = full
            self._seq = next_seq(self._seq)
        self._save()
        fault = self._armed.pop(0) if self._armed else None
        if fault == "checksum":
            bad = (int(frame[-4:-2], 16) ^ 0x5A) & 0xFF
            self._write(frame[:-4] + b"%02X\r\n" % bad)
        elif fault != "drop":
            self._write(frame)
            if fault == "duplicate":
                self._write(frame)
        if full is not None:
            self._write(full)

    def _heartbeat(self) -> None:
        """docs/design.md, revision 3: ``$HBT,LAST,SID``, LAST the SEQ of the last sequenced
        frame sent in this session; no SEQ of its own, never held, never resent, sent while
        the gate is locked too (it takes no slot). Armed faults wait for a sequenced frame."""
        if not self._powered:
            return
        if self._write(encode("HBT", (self._seq - 1) % SEQ_MOD, self._sid)):
            self._counts["heartbeats"] += 1

    def _resend_from(self, seq: int | None) -> None:
        frames = list(self._unacked.items())
        if seq is not None and seq in self._unacked:
            frames = frames[[s for s, _ in frames].index(seq) :]
        # a SEQ we no longer hold (acknowledged already, or never sent): resend all we hold
        for _, frame in frames:
            if not self._write(frame):
                break  # nobody is listening: the next NAK or silence resend tries again
        if frames:
            self._counts["resends"] += 1
        self._quiet_from = time.monotonic()

    def _on_frame(self, frame: Frame) -> None:
        self.received.append(frame)
        if len(self.received) > 2 * RECEIVED_MAX:  # a sim table runs for days: newest only
            del self.received[:-RECEIVED_MAX]
        if frame.type not in ("ACK", "NAK"):
            self._counts["bad"] += 1
            return
        if frame.sid != self._sid:
            # docs/design.md: an $ACK or $NAK naming another SID is ignored (a controller that
            # still knows our previous power-up); it does not end our silence either
            self._counts["foreign"] += 1
            return
        self._quiet_from = time.monotonic()
        if frame.type == "ACK":
            self._counts["acks"] += 1
            if frame.seq in self._unacked:
                while self._unacked:
                    seq, _ = self._unacked.popitem(last=False)
                    if seq == frame.seq:
                        break
                if self._full and len(self._unacked) < self._keep - 1:
                    self._full = False  # acknowledged: the gate opens again
                    self._emit("FLT", "CLR")
                else:
                    self._save()
                self._acked.notify_all()
        else:
            self._counts["naks"] += 1
            self._resend_from(frame.seq)

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                link = self._link
                if link is None and self._reconnect_at is not None:
                    if time.monotonic() >= self._reconnect_at:
                        self.reconnect()
            if link is None:
                self._stop.wait(0.01)
                continue
            try:
                data = link.read(0.01)
            except (OSError, serial.SerialException):
                data = b""
                with self._lock:
                    if self._link is link:
                        self._close_link()
                        self._reconnect_at = time.monotonic() + 1.0
            with self._lock:
                now = time.monotonic()
                if data and self._link is link:
                    for item in self._decoder.feed(data):
                        if isinstance(item, Frame):
                            self._on_frame(item)
                        else:
                            self._counts["bad"] += 1
                if self._link is None:
                    continue
                if self._heartbeat_s and now >= self._next_hbt:
                    # on a fixed schedule (no drift: 600 beats in 10 minutes at 1 Hz); a shoe
                    # that fell behind by more than a period beats once, not in a burst
                    self._next_hbt += self._heartbeat_s
                    if self._next_hbt <= now:
                        self._next_hbt = now + self._heartbeat_s
                    self._heartbeat()
                if self._unacked and now - self._quiet_from >= self._resend_after:
                    self._resend_from(None)  # docs/design.md: resend after 500 ms of silence

    # -- the state file ----------------------------------------------------------------------

    def _save(self) -> None:
        """Write the shoe's state (atomically: a reader sees the old or the new file)."""
        if self._state_path is None:
            return
        state = {
            "version": STATE_VERSION,
            "boot_id": _boot_id(),
            "decks": self._decks,
            "cards": list(self._cards),
            "dealt": dict(self._dealt),
            "sid": self._sid,
            "seq": self._seq,
            "session_seq": self._session_seq,
            "full": self._full,
            "powered": self._powered,
            "model": self._model,
            "firmware": self._firmware,
            "unacked": [[s, f.decode("ascii")] for s, f in self._unacked.items()],
        }
        tmp = self._state_path.with_name(self._state_path.name + ".tmp")
        tmp.write_text(json.dumps(state, separators=(",", ":")), encoding="ascii")
        os.replace(tmp, self._state_path)

    def _load(self) -> None:
        assert self._state_path is not None
        try:
            state = _object(json.loads(self._state_path.read_text(encoding="ascii")), "state")
            if state.get("version") != STATE_VERSION:
                raise ValueError(f"state version {state.get('version')!r}")
            cards = [str(c) for c in _list(state["cards"], "cards")]
            if any(c != COVER and not CARD_RE.fullmatch(c) for c in cards):
                raise ValueError("a card that is not a card")
            sid = str(state["sid"])
            if not is_sid(sid):
                raise ValueError(f"sid {sid!r}")
            unacked = [_unacked(entry) for entry in _list(state["unacked"], "unacked")]
            seq = _int(state["seq"], "seq") % SEQ_MOD
            session_seq = _int(state["session_seq"], "session_seq") % SEQ_MOD
            decks = _int(state.get("decks", self._decks), "decks")
            dealt = {k: _int(v, "dealt") for k, v in _object(state["dealt"], "dealt").items()}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SimShoeError(f"simulated shoe state {self._state_path}: {exc}") from exc
        self._decks = decks
        self._cards = collections.deque(cards)
        self._dealt = collections.Counter(dealt)
        self._model = str(state.get("model", self._model))
        self._firmware = str(state.get("firmware", self._firmware))
        self._sid = sid
        self._seq, self._session_seq = seq, session_seq
        if state.get("boot_id") != _boot_id() or not state.get("powered"):
            # the machine (and so the shoe) lost power since: start() powers it up again
            self._powered = False
            self._seq = self._start_seq
            return
        self._powered = True
        self._full = bool(state.get("full"))
        self._unacked = collections.OrderedDict(unacked)


def _object(value: object, what: str) -> dict[str, object]:
    """A JSON object of the state file (ValueError naming ``what`` otherwise)."""
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object")
    return {str(k): v for k, v in value.items()}


def _list(value: object, what: str) -> list[object]:
    if not isinstance(value, list):
        raise ValueError(f"{what} is not a list")
    return value


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} is not an integer: {value!r}")
    return value


def _unacked(entry: object) -> tuple[int, bytes]:
    """One ``[SEQ, FRAME]`` of the state's unacknowledged frames."""
    if not isinstance(entry, list) or len(entry) != 2:
        raise ValueError(f"unacked entry {entry!r}")
    return _int(entry[0], "unacked seq"), str(entry[1]).encode("ascii")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m drivers.sim.shoe --port PORT`` or ``--pty``; commands on stdin."""
    parser = argparse.ArgumentParser(prog="python -m drivers.sim.shoe", description=__doc__)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", help="serial port or pySerial URL to speak on")
    where.add_argument("--pty", action="store_true", help="create a pty and print its path")
    parser.add_argument("--link", help="with --pty: the symlink path to create")
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--baud", type=int, default=DEFAULT_BAUD)
    parser.add_argument("--state", help="keep the shoe's state in this file (see the module)")
    parser.add_argument("--auto", type=float, metavar="SECONDS", help="deal a card every SECONDS")
    parser.add_argument(
        "--revision",
        default=REVISION,
        help=f"the protocol revision its $HELO names (default {REVISION}; 'none' names none):"
        " another one shows the controller refusing the shoe",
    )
    args = parser.parse_args(argv)
    try:
        shoe = SimShoe(
            args.port,
            decks=args.decks,
            seed=args.seed,
            baud=args.baud,
            state_path=args.state,
            revision=None if args.revision == "none" else args.revision,
        )
        if args.pty:
            print(shoe.create_pty(args.link), flush=True)
        shoe.start()
    except (DriverError, serial.SerialException, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def auto_deal(period: float) -> None:
        while not stop.wait(period):
            try:
                print("dealt " + " ".join(shoe.deal()), flush=True)
            except SimShoeError as exc:
                print(f"auto: {exc}", flush=True)
                return

    if args.auto:
        threading.Thread(target=auto_deal, args=(args.auto,), daemon=True).start()
    print(
        "commands: deal [N] | peek [N] | card RS | load | fault "
        + "|".join(FAULTS)
        + " | status | quit",
        flush=True,
    )
    try:
        for line in sys.stdin:
            if line.strip().lower() in ("quit", "exit"):
                break
            try:
                reply = command(shoe, line)
            except (SimShoeError, ValueError) as exc:
                reply = f"error: {exc}"
            if reply:
                print(reply, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        shoe.stop()
    return 0


def command(shoe: SimShoe, line: str) -> str:
    """Run one technician command of the standalone emulator; returns the reply line."""
    words = line.split()
    if not words:
        return ""
    cmd, args = words[0].lower(), words[1:]
    if cmd == "deal":
        return "dealt " + " ".join(shoe.deal(int(args[0]) if args else 1))
    if cmd == "peek":
        return "next " + " ".join(shoe.peek(int(args[0]) if args else 1))
    if cmd == "card" and len(args) == 1:
        shoe.deal_card(args[0].upper())
        return f"dealt {args[0].upper()}"
    if cmd == "load" and not args:
        return f"loaded {shoe.load()} cards, shuffled"
    if cmd == "status":
        return " ".join(f"{k}={v}" for k, v in dataclasses.asdict(shoe.status()).items())
    if cmd == "fault" and len(args) == 1:
        return shoe.inject(args[0].lower())
    raise SimShoeError(f"unknown command {line.strip()!r}")


if __name__ == "__main__":
    raise SystemExit(main())

"""The notary: signs heads and writes them to the anchor on its own thread.

The loop decides WHICH head to sign (seq and hash, right after a commit) and goes on at once; a
signature in a TPM takes 50-200 ms, and the anchor's sync another few, so neither ever runs on
the loop. Requests are coalesced: while one head is being signed, newer requests replace each
other and only the newest is signed next (a head at a later seq vouches for every row before
it). Each signed head is appended to the anchor (synced) and then handed back to the loop
(``on_signed``), which stores it in the database with its next transaction.

With a TPM counter (drivers/counter.py) every anchored head carries the counter's next value and
the counter is incremented after the anchor's sync: a power cut between the two leaves the
anchor one ahead of the counter, which the next start repairs (trust.py); a head never carries
a value the counter already passed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from controller.journal.anchor import Anchor, AnchorError
from controller.journal.heads import SignedHead, canonical_head
from controller.journal.signer import Signer, SignerError

log = logging.getLogger("controller.journal")


class Counter(Protocol):
    """What the journal needs of a monotonic counter (drivers/counter.py ``TpmCounter`` is
    one): its name, its value, one more. A failure is an ``OSError``."""

    description: str

    def read(self) -> int: ...

    def increment(self) -> int: ...


class CounterMoved(OSError):
    """The counter did not read what this table's increment made it: something else counts on
    it."""


@dataclass(frozen=True)
class _Request:
    seq: int
    hash: str
    reason: str
    reset_anchor: bool = False


class Notary:
    """Signs the newest requested head on a worker thread (see the module docstring)."""

    def __init__(
        self,
        signer: Signer,
        anchor: Anchor,
        table: str,
        *,
        on_signed: Callable[[SignedHead, str], None],
        on_error: Callable[[str], None],
        wall_ns: Callable[[], int] = time.time_ns,
        counter: Counter | None = None,
    ) -> None:
        self.signer = signer
        self.counter = counter
        #: The counter's value the next anchored head carries (read on first use).
        self._counter_next: int | None = None
        self.anchor = anchor
        self.table = table
        self._on_signed = on_signed
        self._on_error = on_error
        self._wall_ns = wall_ns
        self._cond = threading.Condition()
        self._pending: _Request | None = None
        self._busy = False
        self._stop = False
        self._thread: threading.Thread | None = None
        self.requested_seq = 0
        self.requested_at = time.monotonic()
        self.signed_seq = 0
        self.signed = 0
        self.longest_s = 0.0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="journal-notary", daemon=True)
        self._thread.start()

    def request(self, seq: int, hash_hex: str, reason: str, *, reset_anchor: bool = False) -> None:
        """From the loop: sign the head (seq, hash) soon. Never waits."""
        with self._cond:
            keep_reset = self._pending is not None and self._pending.reset_anchor
            self._pending = _Request(seq, hash_hex, reason, reset_anchor or keep_reset)
            self.requested_seq = seq
            self.requested_at = time.monotonic()
            self._cond.notify()

    def sign(self, seq: int, hash_hex: str, counter: int | None = None) -> SignedHead:
        """Sign one head on the caller's thread (archiving, tools): not for the loop. Only the
        notary's own anchored heads carry the counter."""
        ts = self._wall_ns()
        head = SignedHead(self.table, seq, hash_hex, ts, "", self.signer.key_id, counter)
        sig = self.signer.sign(canonical_head(head.head()))
        return SignedHead(self.table, seq, hash_hex, ts, sig, self.signer.key_id, counter)

    def counter_next_text(self) -> str:
        """The counter's value the next anchored head carries, as ``status`` shows it."""
        value = self._counter_next
        return "not read yet" if value is None else str(value)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every request so far is signed and anchored (shutdown, tests)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def stop(self, timeout: float = 5.0) -> bool:
        """Sign what is pending, then stop; False when that did not finish in time (or the
        notary never started)."""
        if self._thread is None:
            return False
        done = self.wait_idle(timeout)
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        return done

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._pending is None:
                    return
                req, self._pending = self._pending, None
                self._busy = True
            try:
                self._sign_and_anchor(req)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _sign_and_anchor(self, req: _Request) -> None:
        started = time.monotonic()
        try:
            value = None
            if self.counter is not None:
                if self._counter_next is None:
                    self._counter_next = self.counter.read() + 1
                value = self._counter_next
            signed = self.sign(req.seq, req.hash, value)
            if req.reset_anchor:
                self.anchor.reset([signed])
            else:
                self.anchor.append(signed)
            if self.counter is not None and value is not None:
                self._counter_next = None  # read again if the increment fails
                now = self.counter.increment()
                self._counter_next = now + 1
                if now != value:
                    raise CounterMoved(
                        f"{self.counter.description} reads {now} after the"
                        f" increment for head {req.seq}, not {value}: something"
                        " else counts on it"
                    )
        except (SignerError, AnchorError, OSError) as exc:
            log.error("journal head %s not signed/anchored: %s", req.seq, exc)
            self._on_error(f"head {req.seq} not signed or anchored: {exc}")
            return
        self.longest_s = max(self.longest_s, time.monotonic() - started)
        self.signed_seq = max(self.signed_seq, req.seq)
        self.signed += 1
        self._on_signed(signed, req.reason)

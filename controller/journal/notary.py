"""The notary: signs heads and writes them to the anchor on its own thread.

The loop decides WHICH head to sign (seq and hash, right after a commit) and goes on at once; a
signature in a TPM takes 50-200 ms, and the anchor's sync another few, so neither ever runs on
the loop. Requests are coalesced: while one head is being signed, newer requests replace each
other and only the newest is signed next (a head at a later seq vouches for every row before
it). Each signed head is appended to the anchor (synced) and then handed back to the loop
(``on_signed``), which stores it in the database with its next transaction.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from controller.journal.anchor import Anchor, AnchorError
from controller.journal.heads import SignedHead, canonical_head
from controller.journal.signer import Signer, SignerError

log = logging.getLogger("controller.journal")


@dataclass(frozen=True)
class _Request:
    seq: int
    hash: str
    reason: str
    reset_anchor: bool = False


class Notary:
    """Signs the newest requested head on a worker thread (see the module docstring)."""

    def __init__(self, signer: Signer, anchor: Anchor, table: str, *,
                 on_signed: Callable[[SignedHead, str], None],
                 on_error: Callable[[str], None],
                 wall_ns: Callable[[], int] = time.time_ns) -> None:
        self.signer = signer
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

    def request(self, seq: int, hash_hex: str, reason: str, *,
                reset_anchor: bool = False) -> None:
        """From the loop: sign the head (seq, hash) soon. Never waits."""
        with self._cond:
            keep_reset = self._pending is not None and self._pending.reset_anchor
            self._pending = _Request(seq, hash_hex, reason, reset_anchor or keep_reset)
            self.requested_seq = seq
            self.requested_at = time.monotonic()
            self._cond.notify()

    def sign(self, seq: int, hash_hex: str) -> SignedHead:
        """Sign one head on the caller's thread (archiving, tools): not for the loop."""
        ts = self._wall_ns()
        head = {"table": self.table, "seq": seq, "hash": hash_hex, "ts": ts}
        sig = self.signer.sign(canonical_head(head))
        return SignedHead(self.table, seq, hash_hex, ts, sig, self.signer.key_id)

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
            signed = self.sign(req.seq, req.hash)
            if req.reset_anchor:
                self.anchor.reset([signed])
            else:
                self.anchor.append(signed)
        except (SignerError, AnchorError, OSError) as exc:
            log.error("journal head %s not signed/anchored: %s", req.seq, exc)
            self._on_error(f"head {req.seq} not signed or anchored: {exc}")
            return
        self.longest_s = max(self.longest_s, time.monotonic() - started)
        self.signed_seq = max(self.signed_seq, req.seq)
        self.signed += 1
        self._on_signed(signed, req.reason)

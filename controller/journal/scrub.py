"""The journal's background worker: the scrub, the checkpoints and the daily archive.

The scrub re-verifies the whole journal (chain, signed heads, anchor) on its own read-only
connection, a slice of :data:`SLICE_ROWS` rows at a time, sleeping between slices so that it
takes at most :attr:`Maintenance.share` of one core and of the storage's time: the loop thread
never walks the journal, and a walk never saturates an SD card. It is the only full walk there
is: start-up checks only the rows after the newest signed head, ``selftest`` reports the scrub's
last verdict, ``journal verify`` on the console runs this same walk on a thread of its own.

Checkpoints (copying committed WAL frames into the database file) run here too, so the loop's
commits never pay for one; and, once a day, the rows older than the retention period move to a
signed archive segment (controller/journal/archive.py).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.journal.anchor import read_anchor
from controller.journal.store import Journal, JournalError
from controller.journal.verify import VerifyResult, Walker, check_anchor, check_heads, walk_start

log = logging.getLogger("controller.journal")

#: Rows per slice: a few milliseconds of work on a Pi 4.
SLICE_ROWS = 200
#: Seconds between checkpoints (the WAL's committed frames copied into the database file).
CHECKPOINT_S = 120.0
#: The first checkpoint, soon after start: a process restarted again and again (a crash loop,
#: a power cut every few minutes) would otherwise never reach one, and its WAL, which start-up
#: must scan, would grow without bound (found by the crash trials: 641 MB after 100 kills).
FIRST_CHECKPOINT_S = 5.0
#: A WAL larger than this is checkpointed at once (looked at every WAL_CHECK_S).
WAL_CHECKPOINT_BYTES = 8 * 1024 * 1024
WAL_CHECK_S = 5.0


@dataclass
class ScrubStatus:
    """What the scrub has done: for ``selftest`` and ``status``."""

    passes: int = 0
    running: bool = False
    rows_done: int = 0
    rows_total: int = 0
    last: VerifyResult | None = None
    last_finished_wall_ns: int | None = None
    last_seconds: float = 0.0


def walk_slowly(
    journal: Journal,
    public_pem: bytes,
    anchor_path: Path | None,
    *,
    share: float,
    stop: threading.Event,
    progress: Callable[[int, int], None] = lambda done, total: None,
    between: Callable[[], None] = lambda: None,
) -> VerifyResult:
    """The whole-journal check of :func:`controller.journal.verify.verify_journal`, in slices,
    sleeping so that the walk takes at most ``share`` of the time. Stopping early leaves a
    result naming how far it got (``stopped``)."""
    result = VerifyResult()
    start = walk_start(journal, result)
    if start is None:
        return result
    result.head_seq, result.head_hash = start
    total = max(0, journal.stored_last_seq() - start[0])
    walker = Walker(journal, start[0], start[1], result)
    checked_heads_to = start[0] - 1
    while True:
        began = time.monotonic()
        finished = walker.step(SLICE_ROWS)
        check_heads(journal, public_pem, checked_heads_to, result.head_seq, result)
        checked_heads_to = result.head_seq
        progress(result.rows, total)
        if finished or not result.ok:
            break
        between()
        busy = time.monotonic() - began
        if stop.wait(busy * (1.0 / share - 1.0)):
            result.fail(f"the walk was stopped at row {result.head_seq}")
            return result
    if result.ok:
        anchor = read_anchor(anchor_path) if anchor_path is not None else None
        check_anchor(
            journal,
            anchor,
            public_pem,
            result,
            required=anchor_path is not None and journal.newest_head() is not None,
        )
    return result


class Maintenance:
    """The worker thread (see the module docstring). Results reach the loop through
    ``post`` (a callable the loop runs), never by touching the loop's objects."""

    def __init__(
        self,
        db_path: str,
        public_pem: bytes,
        anchor_path: Path,
        *,
        post: Callable[[Callable[[], None]], None],
        on_scrubbed: Callable[[VerifyResult], None],
        scrub_every_s: float,
        first_scrub_s: float = 60.0,
        share: float = 0.1,
        archive: Callable[[Journal], None] | None = None,
        archive_every_s: float = 3600.0,
    ) -> None:
        self.db_path = db_path
        self.public_pem = public_pem
        self.anchor_path = anchor_path
        self.share = share
        self.status = ScrubStatus()
        self._post = post
        self._on_scrubbed = on_scrubbed
        self._scrub_every_s = scrub_every_s
        self._archive = archive
        self._archive_every_s = archive_every_s
        now = time.monotonic()
        self._next_scrub = now + first_scrub_s
        self._next_checkpoint = now + FIRST_CHECKPOINT_S
        self._next_wal_check = now + WAL_CHECK_S
        self._next_archive = now + min(first_scrub_s * 2, archive_every_s)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._maint: Journal | None = None
        self._sync_after_checkpoint = False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="journal-scrub", daemon=True)
        self._thread.start()

    def scrub_now(self) -> None:
        """Start a pass as soon as possible (``selftest``)."""
        self._next_scrub = time.monotonic()
        self._wake.set()

    def checkpoint_now(self) -> None:
        """Checkpoint as soon as possible, then flush every file system's buffers (a UPS says
        the power is failing: the database file, not only its WAL, is written before it goes)."""
        self._next_checkpoint = time.monotonic()
        self._sync_after_checkpoint = True
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            self._maint = Journal(self.db_path, autocheckpoint=False, cache_kib=256)
        except JournalError as exc:
            log.error("journal maintenance connection: %s", exc)
            return
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= self._next_wal_check:
                    self._next_wal_check = now + WAL_CHECK_S
                    if self._wal_bytes() > WAL_CHECKPOINT_BYTES:
                        self._next_checkpoint = now
                if now >= self._next_checkpoint:
                    self._checkpoint()
                if now >= self._next_scrub:
                    self._scrub()
                    self._next_scrub = time.monotonic() + self._scrub_every_s
                if self._archive is not None and now >= self._next_archive:
                    self._run_archive()
                    self._next_archive = time.monotonic() + self._archive_every_s
                wait = (
                    min(
                        self._next_checkpoint,
                        self._next_scrub,
                        self._next_wal_check,
                        self._next_archive,
                    )
                    - time.monotonic()
                )
                self._wake.wait(max(0.05, wait))
                self._wake.clear()
        finally:
            self._maint.close()

    def _checkpoint(self) -> None:
        self._next_checkpoint = time.monotonic() + CHECKPOINT_S
        if self._maint is None:
            return
        try:
            self._maint.checkpoint()
        except JournalError as exc:
            log.warning("journal checkpoint: %s", exc)
        if self._sync_after_checkpoint:
            self._sync_after_checkpoint = False
            os.sync()

    def _wal_bytes(self) -> int:
        try:
            return Path(f"{self.db_path}-wal").stat().st_size
        except OSError:
            return 0

    def _between_slices(self) -> None:
        if time.monotonic() >= self._next_checkpoint:
            self._checkpoint()

    def _scrub(self) -> None:
        status = self.status
        status.running, status.rows_done, status.rows_total = True, 0, 0
        began = time.monotonic()
        try:
            reader = Journal(self.db_path, readonly=True)
        except JournalError as exc:
            result = VerifyResult()
            result.fail(f"journal unreadable: {exc}")
        else:
            try:
                result = walk_slowly(
                    reader,
                    self.public_pem,
                    self.anchor_path,
                    share=self.share,
                    stop=self._stop,
                    progress=self._progress,
                    between=self._between_slices,
                )
            except JournalError as exc:
                result = VerifyResult()
                result.fail(f"journal unreadable: {exc}")
            finally:
                reader.close()
        status.running = False
        if self._stop.is_set():
            return
        status.passes += 1
        status.last, status.last_seconds = result, time.monotonic() - began
        status.last_finished_wall_ns = time.time_ns()
        self._post(lambda: self._on_scrubbed(result))

    def _progress(self, done: int, total: int) -> None:
        self.status.rows_done, self.status.rows_total = done, total

    def _run_archive(self) -> None:
        if self._maint is None or self._archive is None:
            return
        try:
            self._archive(self._maint)
        except Exception:  # noqa: BLE001 - a failed archive is retried next time; logged
            log.exception("journal archive")

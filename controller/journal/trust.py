"""The journal's trust machinery for a running table (docs/journal.md "Trust"): opening the
journal with its signer, the start-up check, the notary that signs heads, the background worker,
the acknowledgment of a fault, and the daily archive.

The application (controller/app.py) owns one :class:`JournalTrust`; everything here that runs on
another thread reports back through ``post`` (a callable the loop runs later), so the loop stays
the only thread that writes the journal's rows.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from controller.fields.readers import as_list, as_map, int_of, list_of, str_of
from controller.journal import legacy
from controller.journal.anchor import Anchor, AnchorRead, read_anchor
from controller.journal.chain import Row
from controller.journal.heads import SignedHead, load_public_key
from controller.journal.notary import Counter, Notary
from controller.journal.scrub import Maintenance
from controller.journal.signer import (
    FileSigner,
    Pkcs11Signer,
    Signer,
    SignerError,
    SignerKeyMissing,
    read_pin,
)
from controller.journal.store import Journal, JournalError
from controller.journal.verify import VerifyResult, startup_check

log = logging.getLogger("controller.journal")

#: A signed head at least this often while rows are added (docs/design.md: once a minute).
HEAD_EVERY_S: Final = 60.0
#: Signed heads wait for the next event's transaction to be stored; at most this long.
STORE_HEADS_AFTER_S: Final = 5.0
#: How long shutdown waits for the last head to be signed and anchored.
CLOSE_WAIT_S: Final = 5.0
#: The revision-1 HMAC key's file name (the default of revision 1's profiles).
REV1_KEY: Final = "device.key"
#: The row kind of a journal finding (what a check found), until a technician acknowledges it.
FINDING: Final = "journal.finding"


class SignerSettings(Protocol):
    """The profile's ``[journal]`` keys that name the signer (controller/config/profile.py
    ``JournalSettings``): the journal imports no configuration, it reads these."""

    @property
    def signer(self) -> str: ...
    @property
    def key_path(self) -> str: ...
    @property
    def pkcs11_module(self) -> str | None: ...
    @property
    def pkcs11_module_sha256(self) -> str | None: ...
    @property
    def pkcs11_token(self) -> str | None: ...
    @property
    def pkcs11_key_label(self) -> str: ...
    @property
    def pkcs11_pin_file(self) -> str | None: ...


class TrustSettings(SignerSettings, Protocol):
    """The rest of ``[journal]`` a running table's trust reads: where the files are, when the
    scrub runs, how long rows stay live."""

    @property
    def path(self) -> str: ...
    @property
    def anchor_path(self) -> str: ...
    @property
    def archive_dir(self) -> str: ...
    @property
    def scrub_hours(self) -> int: ...
    @property
    def retain_days(self) -> int: ...


class StartRefused(Exception):
    """The journal cannot be trusted to go on: the controller does not start (the message says
    what was found and what to do)."""


def open_signer(
    settings: SignerSettings,
    state_path: Callable[[str], Path],
    *,
    create: bool,
    sealed: bool = False,
) -> Signer:
    """The signer the profile's ``[journal]`` names; a key is created only with ``create``.
    A token's module must match its pinned SHA-256; a ``sealed`` profile must pin it."""
    if settings.signer == "pkcs11":
        module, token = settings.pkcs11_module, settings.pkcs11_token
        pin_file = settings.pkcs11_pin_file
        if module is None or token is None or pin_file is None:  # the profile requires them
            raise SignerError(
                'signer = "pkcs11" needs pkcs11_module, pkcs11_token and pkcs11_pin_file'
            )
        pin = read_pin(pin_file)  # absolute: outside the state directory
        return Pkcs11Signer.open(
            module,
            token,
            settings.pkcs11_key_label,
            pin,
            create=create,
            module_sha256=settings.pkcs11_module_sha256,
            require_module_sha256=sealed,
        )
    path = state_path(settings.key_path)
    if create and not path.exists():
        return FileSigner.create(path)
    return FileSigner.load(path)


@dataclass
class Opened:
    """A journal opened with its signer."""

    journal: Journal
    signer: Signer
    fresh: bool
    previous: dict[str, object] | None = None


def open_journal(
    settings: TrustSettings,
    state_path: Callable[[str], Path],
    table_id: str,
    *,
    sealed: bool = False,
) -> Opened:
    """Open the journal and its signer, or refuse (:class:`StartRefused`).

    A revision-1 journal is set aside (still verifiable with its old key) and a new journal
    starts whose first row names its head. A journal with history whose key is missing, or
    signed by another key, or kept for another table, is refused: nothing is re-keyed silently.
    """
    db = state_path(settings.path)
    previous = _set_aside_revision1(db) if legacy.is_revision1(db) else None
    try:
        journal = Journal(db, autocheckpoint=False)
    except JournalError as exc:
        raise StartRefused(f"journal {db}: {exc}") from exc
    anchor_path = state_path(settings.anchor_path)
    history = journal.last_seq > 0 or journal.meta("key_id") is not None or anchor_path.exists()
    try:
        signer = open_signer(settings, state_path, create=not history, sealed=sealed)
    except SignerKeyMissing as exc:
        journal.close()
        raise StartRefused(
            f"the journal {db} has {journal.last_seq} rows but its signing key is missing"
            f" ({exc}). Refusing to start: a new key would let a rewritten journal pass as"
            " genuine. Restore the key (or the token), or set the journal and its anchor aside"
            ' to start a new one (docs/journal.md "A lost key").'
        ) from exc
    except SignerError as exc:
        journal.close()
        raise StartRefused(f"journal signer: {exc}") from exc
    named, table = journal.meta("key_id"), journal.meta("table")
    problem = None
    if named is not None and named != signer.key_id:
        problem = (
            f"the journal {db} is signed by key {named}, but the signer"
            f" ({signer.description}) holds key {signer.key_id}: refusing to start"
            ' (docs/journal.md "A lost key")'
        )
    elif table is not None and table != table_id:
        problem = (
            f"the journal {db} belongs to table {table!r}, the profile names"
            f" {table_id!r}: refusing to start"
        )
    if problem is not None:
        signer.close()
        journal.close()
        raise StartRefused(problem)
    if named is None:
        if previous is not None and journal.last_seq == 0:
            journal.begin_after(str(previous["head_mac"]))
        with journal.transaction():
            journal.set_meta("key_id", signer.key_id)
            journal.set_meta("public_key", signer.public_key_pem().decode("ascii"))
            journal.set_meta("table", table_id)
            journal.set_meta("signer", _signer_name(settings))
            if previous is not None:
                journal.append(
                    "journal.migrated", {"previous_head": previous["head_mac"], **previous}
                )
    return Opened(journal, signer, not history, previous)


def _signer_name(settings: SignerSettings) -> str:
    """Where the journal's key is, as ``journal verify`` reports a missing one (never read)."""
    if settings.signer == "pkcs11":
        return f"pkcs11:{settings.pkcs11_token}/{settings.pkcs11_key_label}"
    return f"file:{settings.key_path}"


def _set_aside_revision1(db: Path) -> dict[str, object]:
    """Rename a revision-1 journal and check it with its old key; what the new journal's first
    row says about it."""
    moved = legacy.set_aside(db, time.strftime("%Y%m%dT%H%M%S"))
    key_file = db.parent / REV1_KEY
    try:
        verdict = legacy.verify_revision1(moved, legacy.read_key(key_file))
        head_seq, head_mac, ok, problem = (
            verdict.head_seq,
            verdict.head_mac,
            verdict.ok,
            verdict.problem,
        )
    except (OSError, ValueError) as exc:
        head_seq, head_mac, ok, problem = 0, "0" * 64, False, f"not verified: {exc}"
    if not head_mac:
        head_mac = "0" * 64
    log.warning("revision-1 journal set aside as %s (%s)", moved, problem or "verified")
    return {
        "previous_file": moved.name,
        "previous_rows": head_seq,
        "previous_head_seq": head_seq,
        "head_mac": head_mac,
        "previous_verified": ok,
        "previous_problem": problem,
    }


def acknowledgment_lines(record: Mapping[str, object]) -> list[str]:
    """Console lines for a journaled acknowledgment (:meth:`JournalTrust.acknowledge`)."""
    found = [as_map(f, "'found'") for f in list_of(record, "found")]
    problems = [str(p) for f in found for p in as_list(f.get("problems", []), "'problems'")]
    lines = [f"journal: acknowledged by {str_of(record, 'who')}: " + "; ".join(problems)[:300]]
    withdrawn = list_of(record, "withdrawn_heads")
    if withdrawn:
        lines.append(
            f"journal: {len(withdrawn)} signed heads that no longer"
            " match withdrawn (listed in the journal)"
        )
    lines.append(f"journal: the anchor restarts at row {int_of(record, 'journal_head') + 1}")
    return lines


class JournalTrust:
    """Signed heads, the anchor, the checks and the acknowledgment for one running journal."""

    def __init__(
        self,
        opened: Opened,
        settings: TrustSettings,
        state_path: Callable[[str], Path],
        *,
        post: Callable[[Callable[[], None]], None],
        raise_fault: Callable[[str], None],
        carry_kinds: Callable[[], Sequence[Sequence[str]]] = lambda: (),
        snapshot_kinds: Sequence[str] = (),
        clock: Callable[[], float] = time.monotonic,
        counter: Counter | None = None,
    ) -> None:
        self.journal = opened.journal
        self.fresh = opened.fresh
        #: The TPM counter signed into every anchored head (None: the table has no TPM).
        self.counter = counter
        #: What start-up read: the counter's value and the journal's newest counted head's.
        self.counter_at_start: int | None = None
        self.journal_counter_at_start: int | None = None
        self.signer = opened.signer
        self.public_pem = self.signer.public_key_pem()
        self.public_key = load_public_key(self.public_pem)
        self.table = self.journal.meta("table") or ""
        self.settings = settings
        self.anchor_path = state_path(settings.anchor_path)
        self.archive_dir = state_path(settings.archive_dir)
        self._post = post
        self._raise_fault = raise_fault
        self._carry_kinds = carry_kinds
        self._snapshot_kinds = tuple(snapshot_kinds)
        self._clock = clock
        self.unstored: list[tuple[float, SignedHead]] = []
        #: The last decision's row (a draw, a card) and when it was committed (monotonic s).
        self.last_decision: tuple[int, float] | None = None
        #: The newest head the notary signed (anchored), stored in the database or not.
        self.newest: SignedHead | None = None
        self._unstored_lock = threading.Lock()
        self.findings: list[VerifyResult] = []
        self.acknowledged: set[str] = set()
        self.start_verdict: VerifyResult | None = None
        self.started = False
        self.notary = Notary(
            self.signer,
            Anchor(self.anchor_path),
            self.table,
            on_signed=self._signed,
            on_error=self._sign_error,
            counter=counter,
        )
        self.maintenance = Maintenance(
            self.journal.path,
            self.public_pem,
            self.anchor_path,
            post=post,
            on_scrubbed=self._scrubbed,
            scrub_every_s=settings.scrub_hours * 3600.0,
            archive=self._archive,
        )
        self.journal.set_head_hook(self._request_head)
        acknowledged_at = 0
        for row in self.journal.events(kinds=["journal.acknowledged"]):
            acknowledged_at = row.seq
            for found in as_list(row.data.get("found", []), "'found'"):
                problems = as_map(found, "'found'").get("problems", [])
                self.acknowledged.update(str(p) for p in as_list(problems, "'problems'"))
        # A finding journaled after the last acknowledgment stands until a technician
        # acknowledges it: a restart never forgets it (the application raises it again).
        for row in self.journal.events(kinds=[FINDING], since_seq=acknowledged_at):
            self.findings.append(VerifyResult.from_dict(row.data))

    # -- start-up ----------------------------------------------------------------------------

    def check_at_start(self) -> VerifyResult:
        """The bounded start-up check (controller/journal/verify.py ``startup_check``); heads
        the anchor holds and the database lost (a crash before they were stored) are stored
        again. A problem is a finding a technician must acknowledge."""
        anchor = read_anchor(self.anchor_path)
        verdict = startup_check(self.journal, self.public_pem, anchor)
        self.start_verdict = verdict
        if verdict.ok and anchor is not None:
            newest = self.journal.newest_head()
            missing = [
                h
                for h in anchor.heads
                if (newest is None or h.seq > newest.seq)
                and h.seq <= self.journal.last_seq
                and h.verify(self.public_key)
                and (row := self.journal.row(h.seq)) is not None
                and row.hash == h.hash
            ]
            if missing:
                self.journal.add_heads(missing)
        counter_problem = self._check_counter(anchor)
        if counter_problem is not None:
            verdict.fail(counter_problem)
        if not verdict.ok:
            self._add_finding(verdict, "start")
        return verdict

    def _check_counter(self, anchor: AnchorRead | None) -> str | None:
        """Start-up (before the loop runs): the journal's newest signed head against the TPM
        counter, which root cannot rewind (docs/journal.md "The TPM counter"). Behind it: the
        state directory was restored from a copy (or rows lost). One ahead: a power cut after
        the anchor's sync and before the increment; the counter is brought level."""
        if self.counter is None:
            return None
        try:
            value = self.counter.read()
        except OSError as exc:  # drivers/counter.py CounterError, or the TPM's device
            return f"the TPM counter cannot be read: {exc}"
        heads = [
            h
            for h in (anchor.heads if anchor is not None else [])
            if h.counter is not None and h.verify(self.public_key)
        ]
        stored = self.journal.newest_head()
        if stored is not None and stored.counter is not None:
            heads.append(stored)
        newest = max((h.counter for h in heads if h.counter is not None), default=None)
        self.counter_at_start, self.journal_counter_at_start = value, newest
        if newest is None:
            if value == 0 or self.fresh:
                return None  # the first start with this TPM, or a new journal
            return (
                f"the journal holds no signed head with the TPM counter, but"
                f" {self.counter.description} is at {value}: a journal copied back from"
                " before (the state directory restored)"
            )
        if newest < value:
            return (
                f"the journal is behind the TPM counter: its newest signed head carries"
                f" {newest}, {self.counter.description} is at {value} ({value - newest}"
                " signed heads after it are gone: the state directory was restored from a"
                " copy, or the journal and its anchor lost rows)"
            )
        if newest == value + 1:
            try:
                self.counter.increment()  # anchored, then the power went before the increment
                self.counter_at_start = value + 1
            except OSError as exc:  # drivers/counter.py CounterError, or the TPM's device
                return f"the TPM counter cannot be incremented: {exc}"
            return None
        if newest > value + 1:
            return (
                f"the TPM counter is behind the journal: {self.counter.description} is at"
                f" {value}, the journal's newest signed head carries {newest} (another"
                " TPM, or the TPM was cleared)"
            )
        return None

    def counter_line(self) -> str:
        """``status``'s line for the counter."""
        if self.counter is None:
            return (
                "none: no TPM; a journal restored from a copy while the feed was down is"
                " not detected"
            )
        return f"{self.counter.description}, next head {self.notary.counter_next_text()}"

    def _add_finding(self, result: VerifyResult, source: str) -> None:
        """A problem a technician must acknowledge: journaled (``journal.finding``, raised
        again at every start until a ``journal.acknowledged`` row follows it) unless the
        unacknowledged findings already name all of it. From now on no head is signed or
        anchored until the acknowledgment (:meth:`_request_head`)."""
        known = {p for f in self.findings for p in f.problems}
        if set(result.problems) <= known:
            return
        self.findings.append(result)
        self.journal.append(FINDING, {"source": source, **result.as_dict()})

    def start(self) -> None:
        """Start the notary and the background worker; ask for a head of the start."""
        self.notary.start()
        self.maintenance.start()
        self.started = True
        self.journal.want_head("start")

    # -- heads -------------------------------------------------------------------------------

    def _request_head(self, seq: int, hash_hex: str, reason: str) -> None:
        """The journal's head hook. While a finding is unacknowledged nothing is signed or
        anchored: the anchor keeps the heads that prove the loss or the rewrite (a head signed
        over the damaged journal would supersede them), and the database gets no head that
        vouches for it. The acknowledgment signs its own head and resets the anchor."""
        if reason == "decision":
            self.last_decision = (seq, time.monotonic())
        if self.findings:
            return
        self.notary.request(seq, hash_hex, reason)

    def _signed(self, head: SignedHead, reason: str) -> None:
        """Notary thread: hand the signed head to the loop, which stores it with its next
        transaction (:meth:`store_heads`). A head asked for at a decision (a draw, a card) is
        for the anchor, which must learn of the decision at once; the database keeps the heads
        of boundaries, of the minute and of the start and the end. A head with the TPM counter
        is stored (and so published) whatever its reason: the collector sees every value and
        alarms a skipped one (docs/feed.md)."""
        self.newest = head
        if reason == "decision" and head.counter is None:
            return
        with self._unstored_lock:
            self.unstored.append((self._clock(), head))

    def _sign_error(self, text: str) -> None:
        self._post(lambda: self._raise_fault(f"journal signing: {text}"))

    def store_heads(self) -> None:
        """Loop: store the signed heads that arrived (inside the current transaction; if it
        fails they are in the anchor, and the next start stores them)."""
        with self._unstored_lock:
            heads = [h for _, h in self.unstored]
            self.unstored = []
        if heads:
            self.journal.add_heads(heads)

    def tick(self) -> None:
        """Loop, every tick: a head at least once a minute while rows are added; heads that
        waited long enough for an event are stored on their own."""
        now = self._clock()
        if (
            not self.findings
            and self.journal.last_seq > self.notary.requested_seq
            and now - self.notary.requested_at >= HEAD_EVERY_S
        ):
            self.journal.want_head("periodic")
        with self._unstored_lock:
            waited = bool(self.unstored) and now - self.unstored[0][0] >= STORE_HEADS_AFTER_S
        if waited:
            self.store_heads()

    def sync_now(self, reason: str) -> None:
        """Loop: the power is about to go: a signed head of the journal as it stands (anchored
        and synced by the notary), and a checkpoint and a sync of the file systems on the
        background worker. Rows are already synced at their commit; this leaves the database
        file whole and the anchor current, so the next start checks nothing twice."""
        if self.journal.last_seq > self.notary.requested_seq:
            self.journal.want_head(reason)
        self.maintenance.checkpoint_now()

    def newest_signed(self) -> SignedHead | None:
        """The newest head signed so far (stored or waiting to be stored)."""
        with self._unstored_lock:
            waiting = [h for _, h in self.unstored]
        stored = self.journal.newest_head()
        heads = [*waiting, *(h for h in (stored, self.newest) if h is not None)]
        return max(heads, key=lambda h: h.seq) if heads else None

    # -- the scrub's verdict, the acknowledgment ---------------------------------------------

    def _scrubbed(self, result: VerifyResult) -> None:
        """Loop: a pass of the scrub ended; journal it; a new problem is a finding."""
        self.journal.append(
            "journal.scrubbed",
            {
                "ok": result.ok,
                "rows": result.rows,
                "heads": result.heads,
                "head_seq": result.head_seq,
                "seconds": round(self.maintenance.status.last_seconds, 1),
                "problems": result.problems[:5],
            },
        )
        known = {p for f in self.findings for p in f.problems}
        fresh = [p for p in result.problems if p not in self.acknowledged and p not in known]
        if fresh:
            self._add_finding(result, "scrub")
            self._raise_fault(f"journal verification failed: {result.describe()}")

    def acknowledge(self, who: str) -> dict[str, object]:
        """Loop, a technician acknowledges the findings (``fault clear``): journal what was
        found and the signed heads it invalidates, withdraw those heads, and anchor the new
        head alone, so the journal goes on from here. Returns the journaled record."""
        # bounded reads (this runs on the loop): the heads from the first bad row on, and the
        # signatures of the newest 200 heads
        bad = [f.first_bad_seq for f in self.findings if f.first_bad_seq is not None]
        from_seq = min(bad) if bad else max(0, self.journal.last_seq - 100_000)
        stale = self.journal.stale_heads(from_seq)
        stale_seqs = {s for s, _ in stale}
        for head in self.journal.newest_heads(200):
            if head.seq not in stale_seqs and not head.verify(self.public_key):
                stale.append((head.seq, head.hash))
        found = [f.as_dict() for f in self.findings]
        record: dict[str, object] = {
            "who": who,
            "found": found,
            "withdrawn_heads": [{"seq": s, "hash": h} for s, h in sorted(stale)][:500],
            "journal_head": self.journal.last_seq,
        }
        self.journal.append("journal.acknowledged", record)
        if stale:
            self.journal.withdraw_heads(sorted(s for s, _ in stale))
        self.journal.after_commit(
            lambda: self.notary.request(
                self.journal.last_seq, self.journal.last_hash, "acknowledged", reset_anchor=True
            )
        )
        for f in self.findings:
            self.acknowledged.update(f.problems)
        self.findings = []
        return record

    def rows_lost(self) -> int:
        """Rows the unacknowledged findings prove lost."""
        return max((f.rows_lost for f in self.findings), default=0)

    def unvouched_from(self) -> int | None:
        """When a finding names a bad row (rewritten, or a head that no longer matches): the
        first row that no signed head still vouches for, the row after the newest stored head
        before it whose signature and row still hold. Every row from there on may have been
        rewritten (a table asks whether a decision is among them). None without such a row.
        Bounded reads (the loop): the newest 200 heads; without one, 100,000 rows back."""
        bad = [f.first_bad_seq for f in self.findings if f.first_bad_seq is not None]
        if not bad:
            return None
        first = min(bad)
        good = [
            h.seq
            for h in self.journal.newest_heads(200)
            if h.seq < first
            and h.verify(self.public_key)
            and (row := self.journal.row(h.seq)) is not None
            and row.hash == h.hash
        ]
        return max(good) + 1 if good else max(1, first - 100_000)

    # -- the daily archive (background worker) -----------------------------------------------

    def _archive(self, maint: Journal) -> None:
        """Worker: move the rows older than ``retain_days`` to a signed segment."""
        from controller.journal.archive import plan_cut, write_segment

        if not self._snapshot_kinds:
            return  # a table that does not name its snapshots is never cut short
        snapshot = maint.last(self._snapshot_kinds)
        cut = plan_cut(
            maint,
            self.settings.retain_days,
            time.time_ns(),
            snapshot.seq if snapshot is not None else None,
        )
        if cut is None:
            return
        first, last = cut
        row = maint.row(last)
        if row is None:
            return
        closing = self.notary.sign(last, row.hash)
        segment = write_segment(maint, first, last, closing, self.archive_dir, self.public_pem)
        done = threading.Event()
        failed: list[str] = []

        def record() -> None:
            try:
                with self.journal.transaction():
                    self.journal.after_commit(done.set)
                    self.carry_forward(last)
                    self.journal.append(
                        "journal.archived",
                        {
                            "file": segment.path.name,
                            "sha256": segment.sha256,
                            "first_seq": first,
                            "last_seq": last,
                            "last_hash": segment.last_hash,
                        },
                    )
                    self.journal.add_heads([closing])
            except JournalError as exc:
                failed.append(str(exc))
                done.set()
                raise

        self._post(record)
        if not done.wait(60.0) or failed:
            log.warning(
                "journal archive of rows %s-%s not recorded: %s", first, last, failed or "timeout"
            )
            return
        maint.delete_archived(last, row.hash)
        log.info("journal rows %s-%s archived to %s", first, last, segment.path)

    def carry_forward(self, through_seq: int) -> int:
        """Loop: re-journal what the live journal needs from rows up to ``through_seq``: each
        setting's newest change, and the newest row of each carried group (the PIN, latches).
        Returns the rows written."""
        carried = 0
        newest_by_key: dict[str, Row] = {}
        for row in self.journal.events(kinds=["config.changed"]):
            newest_by_key[str(row.data.get("key"))] = row
        rows = [r for r in newest_by_key.values() if r.seq <= through_seq]
        for kinds in [("console.pin_set",), ("program.release",), *self._carry_kinds()]:
            newest = self.journal.last(kinds)
            if newest is not None and newest.seq <= through_seq:
                rows.append(newest)
        # The install log's changes are kept past retention, every one of them (issue: the
        # software install log): few rows, one per release installed.
        rows.extend(
            r
            for r in self.journal.events(kinds=["program.release_changed"])
            if r.seq <= through_seq
        )
        for row in sorted(rows, key=lambda r: r.seq):
            self.journal.append(row.kind, {**row.data, "carried_from": row.seq}, row.round)
            carried += 1
        return carried

    # -- shutdown ----------------------------------------------------------------------------

    def close(self) -> None:
        """Sign and anchor the last head (waiting a little), stop the workers."""
        if self.journal.last_seq > self.notary.requested_seq:
            self.journal.want_head("shutdown")
        if not self.notary.stop(CLOSE_WAIT_S) and self.started:
            log.warning("the journal's last head was not anchored within %s s", CLOSE_WAIT_S)
        self.maintenance.stop()
        try:
            self.store_heads()
        except JournalError as exc:
            log.warning("signed heads not stored at shutdown (the anchor has them): %s", exc)
        self.signer.close()

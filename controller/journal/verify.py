"""Checking a journal: its chain, its signed heads and its anchor (docs/journal.md "Trust").

Nothing here needs a secret: a public key (PEM) is enough, so an auditor can run the same checks
as the table. :class:`Walker` checks the chain a slice at a time (the background scrub walks the
whole journal that way, off the loop thread); :func:`startup_check` checks only what start-up
must (the rows after the newest signed head, the heads and the anchor); :func:`verify_journal`
checks everything (``journal verify``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from controller.fields.readers import (
    as_str,
    opt_int_of,
    opt_list_of,
    opt_str_of,
)
from controller.journal.anchor import AnchorRead
from controller.journal.chain import GENESIS, row_hash
from controller.journal.heads import SignedHead, load_public_key, pem_key_id, verify_head
from controller.journal.store import Journal, JournalError

#: Rows one slice of a walk reads (the scrub sleeps between slices).
SLICE_ROWS = 2000


@dataclass
class VerifyResult:
    """Outcome of a check: the rows and heads checked, the chain's head, what is wrong."""

    rows: int = 0
    heads: int = 0
    head_seq: int = 0
    head_hash: str = GENESIS
    problems: list[str] = field(default_factory=list)
    first_bad_seq: int | None = None
    #: Rows the anchor or a signed head proves were written but are gone (tail cut, WAL lost).
    rows_lost: int = 0
    anchor_seq: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def problem(self) -> str | None:
        return "; ".join(self.problems) if self.problems else None

    def fail(self, problem: str, seq: int | None = None) -> None:
        self.problems.append(problem)
        if seq is not None and self.first_bad_seq is None:
            self.first_bad_seq = seq

    def describe(self) -> str:
        if self.ok:
            return (
                f"journal verified: {self.rows} rows, {self.heads} signed heads, head"
                f" {self.head_seq} {self.head_hash}"
            )
        where = f" at seq {self.first_bad_seq}" if self.first_bad_seq is not None else ""
        return f"journal BROKEN{where}: {self.problem}"

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> VerifyResult:
        """A finding read back from its journal row (:meth:`as_dict`); ValueError
        (:class:`FieldError`) when a field has the wrong type."""
        return cls(
            rows=opt_int_of(data, "rows") or 0,
            head_seq=opt_int_of(data, "head_seq") or 0,
            head_hash=opt_str_of(data, "head_hash") or GENESIS,
            problems=[str(p) for p in opt_list_of(data, "problems") or ["(not recorded)"]],
            first_bad_seq=opt_int_of(data, "first_bad_seq"),
            rows_lost=opt_int_of(data, "rows_lost") or 0,
            anchor_seq=opt_int_of(data, "anchor_seq"),
        )

    def as_dict(self) -> dict[str, object]:
        """What was found, for the journal row a technician's acknowledgment writes."""
        return {
            "ok": self.ok,
            "rows": self.rows,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "problems": self.problems[:10],
            "first_bad_seq": self.first_bad_seq,
            "rows_lost": self.rows_lost,
            "anchor_seq": self.anchor_seq,
        }


class Walker:
    """Checks the chain from (``after_seq``, ``prev``) forward, ``step`` rows at a time, in
    rowid order: what is stored, not what an index claims."""

    def __init__(
        self, journal: Journal, after_seq: int, prev: str, result: VerifyResult | None = None
    ) -> None:
        self.journal = journal
        self.next_seq = after_seq + 1
        self.prev = prev
        self.result = result or VerifyResult(head_seq=after_seq, head_hash=prev)
        self.done = False

    def step(self, limit: int = SLICE_ROWS) -> bool:
        """Check up to ``limit`` rows; True when the end or a break was reached."""
        if self.done:
            return True
        result = self.result
        try:
            rows = self.journal.raw_rows(self.next_seq - 1, limit)
        except JournalError as exc:
            result.fail(f"database unreadable after row {self.next_seq - 1}: {exc}", self.next_seq)
            self.done = True
            return True
        for seq, ts, boot, mono, kind, rnd, text, stored in rows:
            if seq != self.next_seq:
                problem = (
                    f"row {self.next_seq} is missing (deleted)"
                    if seq > self.next_seq
                    else f"row {seq} is out of order (reordered)"
                )
                result.fail(problem, self.next_seq)
                self.done = True
                return True
            try:
                data = json.loads(as_str(text, "data"))
                if not isinstance(data, dict):
                    raise ValueError("data is not a JSON object")
                good = row_hash(
                    self.prev,
                    {
                        "seq": seq,
                        "ts": ts,
                        "boot": boot,
                        "mono": mono,
                        "kind": kind,
                        "round": rnd,
                        "data": data,
                    },
                )
            except (ValueError, TypeError, RecursionError) as exc:
                result.fail(f"row {seq} ({kind}) is unreadable: {exc}", seq)
                self.done = True
                return True
            if stored.hex() != good:
                result.fail(f"row {seq} ({kind}) does not match its hash (edited)", seq)
                self.done = True
                return True
            self.prev = good
            self.next_seq += 1
            result.rows += 1
            result.head_seq, result.head_hash = seq, good
        if len(rows) < limit:
            self.done = True
        return self.done


class HeadSyntaxError(ValueError):
    """A ``SEQ:HASH`` that is not one: ``code`` is the console's (SYNTAX, or RANGE for a row
    number no journal has)."""

    def __init__(self, message: str, code: str = "SYNTAX") -> None:
        super().__init__(message)
        self.code = code


def parse_head(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` as ``journal head`` prints it: a row number (1 to signed 64 bits) and 64
    hex digits (SHA-256, lower-cased); :class:`HeadSyntaxError` for anything else."""
    seq_text, sep, digest = text.partition(":")
    if not sep or not (seq_text.isascii() and seq_text.isdigit()):
        raise HeadSyntaxError(
            "usage: journal verify [SEQ:HASH] (as journal head prints it, e.g. 17:9f0c...)"
        )
    digest = digest.lower()
    if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
        raise HeadSyntaxError(
            f"HASH must be 64 hex digits, got {digest[:20]!r}{'...' if len(digest) > 20 else ''}"
        )
    seq = int(seq_text) if len(seq_text) <= 19 else 2**63
    if not 1 <= seq < 2**63:
        raise HeadSyntaxError(
            f"SEQ must be a row number 1 to {2**63 - 1}, not {seq_text[:24]}", "RANGE"
        )
    return seq, digest


def check_expected_head(
    result: VerifyResult, seq: int, stored_hash: str | None, given: str
) -> None:
    """``journal verify SEQ:HASH``: the row the head given names must be stored with that hash.
    A different hash is the journal rewritten since that head was recorded, or a mistyped head:
    the reply says both, for a technician to compare with the head they recorded."""
    if stored_hash is None:
        result.fail(
            f"row {seq}, named by the head given, is not in the journal (truncated or archived)",
            seq,
        )
    elif stored_hash != given.lower():
        result.fail(
            f"row {seq}'s hash is not the head given: the journal was rewritten since that head"
            " was recorded, or the SEQ:HASH was mistyped (compare it with the recorded"
            " `journal head`)",
            seq,
        )


def check_heads(
    journal: Journal, public_pem: bytes, after_seq: int, until_seq: int, result: VerifyResult
) -> None:
    """Every signed head stored for rows (``after_seq``, ``until_seq``] must verify with the
    public key and name the hash its row (or the archived base) has."""
    base_seq, base_hash = journal.base()
    key = load_public_key(public_pem)
    seq = after_seq
    counted: SignedHead | None = None  # the last head with a TPM counter
    while True:
        try:
            heads = journal.heads_after(seq, 500)
        except JournalError as exc:
            result.fail(f"signed heads unreadable: {exc}")
            return
        for h in heads:
            if h.seq > until_seq:
                return
            seq = h.seq
            result.heads += 1
            if not verify_head(h.head(), h.sig, key):
                result.fail(
                    f"signed head at row {h.seq} has a bad signature (forged, or another key)",
                    h.seq,
                )
                continue
            if h.counter is not None:
                # the TPM counter only counts up (docs/journal.md "The TPM counter")
                if (
                    counted is not None
                    and counted.counter is not None
                    and h.counter <= counted.counter
                ):
                    result.fail(
                        f"signed head at row {h.seq} carries TPM counter {h.counter},"
                        f" not above the {counted.counter} of the head at row"
                        f" {counted.seq}: two journals signed with one counter",
                        h.seq,
                    )
                counted = h
            if h.seq == base_seq:
                actual: str | None = base_hash
            else:
                row = journal.raw_rows(h.seq - 1, 1)
                actual = row[0].hash.hex() if row and row[0].seq == h.seq else None
            if actual is None:
                if h.seq > journal.stored_last_seq():
                    lost = h.seq - journal.stored_last_seq()
                    result.rows_lost = max(result.rows_lost, lost)
                    result.fail(
                        f"a signed head names row {h.seq} but the journal ends at row"
                        f" {journal.stored_last_seq()}: {lost} rows lost",
                        h.seq,
                    )
                else:
                    result.fail(f"row {h.seq}, named by a signed head, is missing", h.seq)
            elif actual != h.hash:
                result.fail(f"row {h.seq} differs from its signed head (rewritten)", h.seq)
        if len(heads) < 500:
            return


def check_anchor(
    journal: Journal,
    anchor: AnchorRead | None,
    public_pem: bytes,
    result: VerifyResult,
    *,
    required: bool,
    every_line: bool = True,
) -> None:
    """Every line of the anchor (the heads signed since its last reset: at most
    ``anchor.MAX_LINES``) must name a row the journal holds with that hash, one indexed read
    each. A line past the journal's end proves committed rows lost (tail cut, WAL deleted or
    corrupted); a line whose row has another hash proves the row rewritten, or lost and written
    again (a fork). ``every_line``: every line's signature is checked too; start-up checks the
    newest line's and those of lines that do not match (a forged line is named as such)."""
    if anchor is None:
        if required:
            result.fail("the anchor file is missing (the journal has rows and signed heads)")
        return
    for number in anchor.bad_lines:
        result.fail(f"anchor line {number} is not a signed head (edited)")
    if not anchor.heads:
        if required:
            result.fail("the anchor holds no signed head")
        return
    last = journal.stored_last_seq()
    base_seq, base_hash = journal.base()
    key = load_public_key(public_pem)
    newest = max(anchor.heads, key=lambda h: h.seq)
    stored: dict[int, str | None] = {}
    for h in anchor.heads:
        if h.seq not in stored:
            stored[h.seq] = _stored_hash(journal, h.seq, base_seq, base_hash)
    signed: list[SignedHead] = []
    for h in anchor.heads:
        if (every_line or h is newest or stored[h.seq] != h.hash) and not verify_head(
            h.head(), h.sig, key
        ):
            result.fail(f"anchor head at row {h.seq} has a bad signature (forged, or another key)")
        else:
            signed.append(h)
    if not signed:
        if required:
            result.fail("the anchor holds no signed head")
        return
    result.anchor_seq = max(h.seq for h in signed)
    matched = sorted({h.seq for h in signed if stored[h.seq] == h.hash})
    # seqs at or below the base (archived rows) are matched against the base alone
    differ = sorted(
        {
            h.seq
            for h in signed
            if h.seq <= last
            and stored[h.seq] != h.hash
            and not (h.seq < base_seq and stored[h.seq] is None)
        }
    )
    beyond = max((h.seq for h in signed if h.seq > last), default=None)
    if differ:
        first = differ[0]
        below = [s for s in matched if s < first]
        since = below[-1] if below else max(base_seq, min(h.seq for h in signed) - 1)
        # the rows the anchor vouched for from the last matching line on are gone as signed
        result.rows_lost = max(result.rows_lost, differ[-1] - since)
        more = f" (and {len(differ) - 1} later anchored rows)" if len(differ) > 1 else ""
        result.fail(
            f"row {first} differs from the anchor's signed head{more}: rewritten, or"
            " lost and written again (a fork)",
            first,
        )
    if beyond is not None:
        result.rows_lost = max(result.rows_lost, beyond - last)
        result.fail(
            f"the journal is behind its anchor: it ends at row {last}, the anchor names"
            f" row {beyond} ({beyond - last} committed rows lost: tail cut, WAL"
            " deleted or corrupted)",
            last + 1,
        )


def _stored_hash(journal: Journal, seq: int, base_seq: int, base_hash: str) -> str | None:
    """The hash the journal stores for row ``seq`` (the archived base's for the base), or None
    (one read by rowid)."""
    if seq == base_seq:
        return base_hash
    rows = journal.raw_rows(seq - 1, 1)
    return rows[0].hash.hex() if rows and rows[0].seq == seq else None


def walk_start(journal: Journal, result: VerifyResult) -> tuple[int, str] | None:
    """Where a whole-journal walk starts: the archived base (or genesis); the first live row
    must follow it, and a journal after a revision-1 one must name that journal's head."""
    base_seq, base_hash = journal.base()
    first = journal.first_seq()
    # Rows at or below the base may linger while an archive's deletion is under way.
    if first > base_seq + 1 and first <= journal.stored_last_seq():
        result.fail(f"rows {base_seq + 1}..{first - 1} are missing (deleted)", base_seq + 1)
        return None
    if base_seq == 0 and base_hash != GENESIS:
        row = journal.row(1)
        named = row.data.get("previous_head") if row is not None else None
        if row is not None and named != base_hash:
            result.fail("the first row does not name the revision-1 journal's head it follows", 1)
            return None
    return base_seq, base_hash


def check_chain(journal: Journal) -> VerifyResult:
    """The whole chain alone (no signatures, no anchor): for tools and tests. A running table
    never calls this on its loop; its scrub walks the journal in slices."""
    result = VerifyResult()
    start = walk_start(journal, result)
    if start is not None:
        result.head_seq, result.head_hash = start
        walker = Walker(journal, start[0], start[1], result)
        while not walker.step():
            pass
    return result


def verify_journal(
    journal: Journal, public_pem: bytes, anchor: AnchorRead | None, *, anchor_required: bool = True
) -> VerifyResult:
    """Everything: the whole chain, every signed head, the anchor. For ``journal verify`` (it
    walks the whole journal: never on the loop thread). A database edited past reading (a
    column of another type, a base that is not SEQ:HASH) is a problem found, not a crash."""
    try:
        return _verify_journal(journal, public_pem, anchor, anchor_required)
    except JournalError as exc:
        return _unreadable(exc)


def startup_check(journal: Journal, public_pem: bytes, anchor: AnchorRead | None) -> VerifyResult:
    """What start-up checks (:func:`_startup_check`); a database edited past reading is a
    finding, as any other problem."""
    try:
        return _startup_check(journal, public_pem, anchor)
    except JournalError as exc:
        return _unreadable(exc)


def _unreadable(exc: JournalError) -> VerifyResult:
    result = VerifyResult()
    result.fail(f"the journal's database is unreadable (edited?): {exc}")
    return result


def _verify_journal(
    journal: Journal, public_pem: bytes, anchor: AnchorRead | None, anchor_required: bool
) -> VerifyResult:
    """Everything: the whole chain, every signed head, the anchor. For ``journal verify`` (it
    walks the whole journal: never on the loop thread)."""
    result = VerifyResult()
    try:
        load_public_key(public_pem)
    except ValueError as exc:
        # said once; the chain is still walked, the signatures cannot be
        mismatch: str | None = (
            f"the public key is unusable ({exc}): give the public key `journal pubkey` printed"
            " at commissioning, not the private key or another file"
        )
    else:
        mismatch = key_mismatch(journal, public_pem, anchor)
    if mismatch is not None:
        result.fail(mismatch)  # said once, not once per head and anchor line
    else:
        _identity(journal, public_pem, result)
    start = walk_start(journal, result)
    if start is not None:
        result.head_seq, result.head_hash = start
        walker = Walker(journal, start[0], start[1], result)
        while not walker.step():
            pass
    if mismatch is not None:
        return result
    # every stored head, those past the journal's end too: a tail cut is rows lost
    check_heads(journal, public_pem, journal.base()[0] - 1, 2**63 - 1, result)
    has_heads = journal.newest_head() is not None
    check_anchor(journal, anchor, public_pem, result, required=anchor_required and has_heads)
    return result


def _startup_check(journal: Journal, public_pem: bytes, anchor: AnchorRead | None) -> VerifyResult:
    """What start-up checks (bounded: the rows after the newest signed head, a minute's worth):
    the newest stored head's signature and row, the anchor's newest head, and the rows after
    the newest of the heads that matched."""
    result = VerifyResult()
    _identity(journal, public_pem, result)
    newest = journal.newest_head()
    if newest is not None:
        check_heads(journal, public_pem, newest.seq - 1, newest.seq, result)
    check_anchor(journal, anchor, public_pem, result, required=newest is not None, every_line=False)
    if not result.ok:
        return result
    trusted = [h for h in ([newest] if newest is not None else [])]
    if anchor is not None and result.anchor_seq is not None:
        trusted += [h for h in anchor.heads if h.seq == result.anchor_seq]
    start: tuple[int, str] | None
    if trusted:
        best = max(trusted, key=lambda h: h.seq)
        start = (best.seq, best.hash)
    else:
        start = walk_start(journal, result)
        if start is None:
            return result
    result.head_seq, result.head_hash = start
    walker = Walker(journal, start[0], start[1], result)
    while not walker.step():
        pass
    return result


def key_mismatch(journal: Journal, public_pem: bytes, anchor: AnchorRead | None) -> str | None:
    """Why ``public_pem`` is not the key of this journal, or None: the journal and its anchor
    hold signed heads and not one verifies with it (another table's key, an old key file; or
    every head forged). Stops at the first head that verifies (the newest, on a sound
    journal), so a sound check pays one more signature check."""
    try:
        key = load_public_key(public_pem)
        ours = pem_key_id(public_pem)
    except ValueError:
        return None  # said by _identity: the public key is unusable
    newest = journal.newest_head()
    if newest is not None and verify_head(newest.head(), newest.sig, key):
        return None
    stored = 0
    seq = journal.base()[0] - 1
    while True:
        try:
            heads = journal.heads_after(seq, 500)
        except JournalError:
            return None  # check_heads says the heads are unreadable
        for h in heads:
            stored += 1
            if verify_head(h.head(), h.sig, key):
                return None
        if len(heads) < 500:
            break
        seq = heads[-1].seq
    anchored = list(anchor.heads) if anchor is not None else []
    if any(verify_head(h.head(), h.sig, key) for h in anchored):
        return None
    if not stored and not anchored:
        return None  # nothing signed yet: nothing to tell the key by
    named = journal.meta("key_id")
    whose = (
        f"the journal names key {named}"
        if named is not None and named != ours
        else "the key is another table's, or every head was forged"
    )
    return (
        f"the public key given (key {ours}) does not match this journal's: none of its"
        f" {stored} signed heads and {len(anchored)} anchored heads verifies with it"
        f" ({whose}); use the public key printed when the table was commissioned"
        " (`journal pubkey`)"
    )


def _identity(journal: Journal, public_pem: bytes, result: VerifyResult) -> None:
    """The journal names the key that signs it; another key is a problem, said plainly."""
    named = journal.meta("key_id")
    try:
        ours = pem_key_id(public_pem)
    except ValueError as exc:
        result.fail(f"the public key is unusable: {exc}")
        return
    if named is not None and named != ours:
        result.fail(f"the journal is signed by key {named}, not by this key ({ours})")


def verify_archive_lines(lines: Iterable[str], public_pem: bytes) -> VerifyResult:
    """An archive segment (controller/journal/archive.py): a header, rows, a closing signed
    head; the rows must chain from the header's ``prev`` and end at the signed head. The lines
    are taken one at a time (a segment read from its file is never held whole)."""
    result = VerifyResult()
    numbered = enumerate(lines, start=1)
    first = next(numbered, None)
    second = next(numbered, None)
    if first is None or second is None:
        result.fail("the archive is empty")
        return result
    try:
        header = json.loads(first[1])
        prev, expected = str(header["prev"]), int(header["first_seq"])
    except (ValueError, KeyError, TypeError) as exc:
        result.fail(f"the archive's header or closing head is unreadable: {exc}")
        return result
    result.head_seq, result.head_hash = expected - 1, prev
    pending = second
    for following in numbered:
        number, line = pending
        pending = following
        try:
            row = json.loads(line)
            fields = {k: row[k] for k in ("seq", "ts", "boot", "mono", "kind", "round", "data")}
            good = row_hash(prev, fields)
        except (ValueError, KeyError, TypeError) as exc:
            result.fail(f"archive line {number} is unreadable: {exc}")
            return result
        if fields["seq"] != expected:
            result.fail(f"archive row {expected} is missing", expected)
            return result
        if row.get("hash") != good or row.get("prev") != prev:
            result.fail(f"archive row {expected} does not match its hash (edited)", expected)
            return result
        prev, expected = good, expected + 1
        result.rows += 1
        result.head_seq, result.head_hash = fields["seq"], good
    try:
        closing = SignedHead.from_mapping(json.loads(pending[1])["head"])
    except (ValueError, KeyError, TypeError) as exc:
        result.fail(f"the archive's header or closing head is unreadable: {exc}")
        return result
    if int(header.get("last_seq", -1)) != result.head_seq:
        result.fail(
            f"the archive ends at row {result.head_seq}, its header says {header.get('last_seq')}"
        )
    if not closing.verify(load_public_key(public_pem)):
        result.fail("the archive's closing head has a bad signature")
    elif closing.seq != result.head_seq or closing.hash != result.head_hash:
        result.fail(
            f"the archive's closing head names row {closing.seq}, not its last row"
            f" {result.head_seq}"
        )
    else:
        result.heads += 1
    return result

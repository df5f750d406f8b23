"""Retention: rows older than ``journal.retain_days`` move to signed archive segments.

A segment is a gzip file of JSON lines: a header (``first_seq``, ``last_seq``, the ``prev`` hash
the first row chains from), one line per row (every field and its chain links, as the export
writes them), and a closing line ``{"head": ...}``: the table's signed head at the last row. It is
verifiable offline with the public key alone (``table-controller journal verify --archive FILE
--pubkey FILE``). The live journal then starts after the segment (its ``base``: the last archived
row's seq and hash, which the signed head binds), with the settings, the PIN and the state the
table recovers from carried forward as new rows, so it stands alone.

The cut never passes the newest row the table recovers from (its snapshot): those rows and every
row after them stay live.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from controller.journal.chain import canonical
from controller.journal.durable import sync_dir
from controller.journal.heads import SignedHead
from controller.journal.store import Journal
from controller.journal.verify import VerifyResult, verify_archive_lines

NS_PER_DAY = 86_400 * 10**9


@dataclass(frozen=True)
class Segment:
    """A written segment: where, its rows and its digest."""

    path: Path
    first_seq: int
    last_seq: int
    last_hash: str
    sha256: str


def plan_cut(
    journal: Journal, retain_days: int, now_ns: int, keep_from_seq: int | None
) -> tuple[int, int] | None:
    """(first, last) seq of the rows to archive now, or None: every row older than
    ``retain_days``, but never ``keep_from_seq`` (the table's newest snapshot) or later, and
    never the newest row."""
    cutoff = now_ns - retain_days * NS_PER_DAY
    first = journal.first_seq()
    base_seq, _ = journal.base()
    first = max(first, base_seq + 1)
    young = journal.seq_at_or_after(cutoff)
    last = (young - 1) if young is not None else journal.stored_last_seq()
    last = min(last, journal.stored_last_seq() - 1)
    if keep_from_seq is not None:
        last = min(last, keep_from_seq - 1)
    return (first, last) if last >= first else None


def write_segment(
    journal: Journal,
    first: int,
    last: int,
    closing: SignedHead,
    folder: Path,
    closing_key_pem: bytes | None = None,
) -> Segment:
    """Write rows first..last and the closing head to a new segment file in ``folder``, sync
    it and, given the public key, read it back and verify it; returns what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"journal-{first:010d}-{last:010d}.jsonl.gz"
    tmp = path.with_name(path.name + ".tmp")
    opening = journal.rows_after(first - 1, 1)
    if not opening or opening[0].seq != first:
        raise ValueError(f"row {first} is not in the journal")
    header = {
        "archive": 2,
        "table": closing.table,
        "first_seq": first,
        "last_seq": last,
        "prev": opening[0].prev,
    }
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(canonical(header) + b"\n")
            seq = first - 1
            while seq < last:
                rows = journal.rows_after(seq, min(1000, last - seq))
                if not rows:
                    break
                for row in rows:
                    fh.write(canonical(row.as_dict()) + b"\n")
                    seq = row.seq
            fh.write(canonical({"head": closing.as_dict()}) + b"\n")
        raw.flush()
        os.fsync(raw.fileno())
    digest = hashlib.sha256()
    with open(tmp, "rb") as written:
        while block := written.read(1 << 20):
            digest.update(block)
    checked = verify_archive(tmp, closing_key_pem) if closing_key_pem else None
    if checked is not None and not checked.ok:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"the archive segment does not verify: {checked.problem}")
    os.replace(tmp, path)
    sync_dir(folder)
    return Segment(path, first, last, closing.hash, digest.hexdigest())


def verify_archive(path: str | os.PathLike[str], public_pem: bytes) -> VerifyResult:
    """Check a segment with the public key alone: its chain and its closing signed head. The
    file is read a line at a time, so a segment of any size is checked in the same memory."""
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="\n") as fh:
            return verify_archive_lines((line.rstrip("\n") for line in fh), public_pem)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        result = VerifyResult()
        result.fail(f"archive {path} is unreadable: {exc}")
        return result

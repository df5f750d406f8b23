"""The journal's SHA-256 chain (journal revision 2, docs/journal.md "Format"): pure functions that
anyone can run on an export or a feed without a secret.

Each row's hash is SHA-256 over the previous row's hash (32 bytes) followed by the row's canonical
bytes: the UTF-8 of its seven fields as JSON with sorted keys and no spaces. The first row of a
journal follows :data:`GENESIS` (or the head of the revision-1 journal it replaced, named in it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

#: The ``prev`` of a journal's first row.
GENESIS: Final = "0" * 64
#: The fields of a row that its hash covers, in the shape of the feed's row messages.
ROW_FIELDS: Final = ("seq", "ts", "boot", "mono", "kind", "round", "data")


class ChainError(ValueError):
    """A row cannot be hashed: a field missing, a value JSON cannot carry, a bad ``prev``."""


#: One encoder for every canonical form (``json.dumps`` with options builds one a call).
_ENCODER: Final = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
#: A string's JSON text as :data:`_ENCODER` writes it (``ensure_ascii=False``).
_string: Final = json.encoder.encode_basestring
#: The hashed fields in the order sorted keys put them.
_SORTED_FIELDS: Final = tuple(sorted(ROW_FIELDS))


def canonical(value: Mapping[str, object]) -> bytes:
    """The canonical bytes of a JSON object: sorted keys, no spaces, UTF-8, no NaN."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ChainError(f"not canonical JSON: {exc}") from None


def _encoded_row(row: Mapping[str, object]) -> tuple[bytes, str]:
    """The row's canonical bytes (:func:`canonical` of its :data:`ROW_FIELDS`, byte for byte)
    and its ``data``'s canonical text, from one encoding of ``data``: a value's text inside an
    object with sorted keys is its text alone, so the object is the fields' texts joined."""
    missing = [k for k in ROW_FIELDS if k not in row]
    if missing:
        raise ChainError(f"row lacks {', '.join(missing)}")
    boot, kind, mono, rnd, seq, ts = (
        row[k] for k in ("boot", "kind", "mono", "round", "seq", "ts")
    )
    if (
        type(boot) is str
        and type(kind) is str
        and type(mono) is int
        and type(seq) is int
        and type(ts) is int
        and (rnd is None or type(rnd) is int)
    ):
        # a journal's row and every row of the feed: the fields' texts in their sorted order
        # at once (the loop below gives the same bytes for any value)
        try:
            data = _ENCODER.encode(row["data"])
            text = (
                f'{{"boot":{_string(boot)},"data":{data},"kind":{_string(kind)},"mono":{mono},'
                f'"round":{"null" if rnd is None else rnd},"seq":{seq},"ts":{ts}}}'
            )
        except (TypeError, ValueError) as exc:
            raise ChainError(f"not canonical JSON: {exc}") from None
        return text.encode("utf-8"), data
    try:
        data = _ENCODER.encode(row["data"])
        parts = []
        for key in _SORTED_FIELDS:
            value = row[key]
            if key == "data":
                text = data
            elif type(value) is int:
                text = int.__repr__(value)
            elif value is None:
                text = "null"
            else:
                text = _ENCODER.encode(value)
            parts.append(f'"{key}":{text}')
    except (TypeError, ValueError) as exc:
        raise ChainError(f"not canonical JSON: {exc}") from None
    return ("{" + ",".join(parts) + "}").encode("utf-8"), data


def canonical_row(row: Mapping[str, object]) -> bytes:
    """The bytes a row's hash covers: its :data:`ROW_FIELDS`, nothing else."""
    return _encoded_row(row)[0]


def _prev_bytes(prev: str) -> bytes:
    if len(prev) != 64:
        raise ChainError(f"prev must be 64 hex digits, not {len(prev)} characters")
    try:
        return bytes.fromhex(prev)
    except ValueError:
        raise ChainError("prev is not hexadecimal") from None


def row_hash(prev: str, row: Mapping[str, object]) -> str:
    """The hash of ``row`` chained on ``prev`` (64 lower-case hex digits)."""
    return hashlib.sha256(_prev_bytes(prev) + canonical_row(row)).hexdigest()


def row_hash_and_data(prev: str, row: Mapping[str, object]) -> tuple[str, str]:
    """:func:`row_hash` and the canonical text of the row's ``data`` (what the collector
    stores), from one encoding."""
    encoded, data = _encoded_row(row)
    return hashlib.sha256(_prev_bytes(prev) + encoded).hexdigest(), data


@dataclass(frozen=True)
class ChainCheck:
    """The result of walking rows: how many held, the head they reach, the first that broke."""

    rows: int
    head_seq: int | None
    head_hash: str
    broken_seq: int | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_seq is None


def verify_rows(
    rows: Iterable[Mapping[str, object]], prev: str = GENESIS, after_seq: int | None = None
) -> ChainCheck:
    """Walk ``rows`` in order from ``prev`` (the hash of row ``after_seq``, if any): each row's
    ``seq`` must follow the last and, where the row carries ``hash`` (and ``prev``), they must be
    what the chain computes. Stops at the first broken row."""
    count, head_seq, head = 0, after_seq, prev
    for row in rows:
        seq = row.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            return ChainCheck(count, head_seq, head, -1, f"row {count + 1}: seq {seq!r}")
        if head_seq is not None and seq != head_seq + 1:
            return ChainCheck(
                count,
                head_seq,
                head,
                seq,
                f"row {seq} follows row {head_seq}: rows missing or out of order",
            )
        if "prev" in row and row["prev"] != head:
            return ChainCheck(count, head_seq, head, seq, f"row {seq} names another prev")
        try:
            computed = row_hash(head, row)
        except ChainError as exc:
            return ChainCheck(count, head_seq, head, seq, f"row {seq}: {exc}")
        if "hash" in row and row["hash"] != computed:
            return ChainCheck(
                count,
                head_seq,
                head,
                seq,
                f"row {seq} was changed (its hash does not match its content)",
            )
        count, head_seq, head = count + 1, seq, computed
    return ChainCheck(count, head_seq, head)


@dataclass(frozen=True, slots=True)
class Row:
    """One journal row as the store reads it back: the fields its hash covers and the chain's
    links ``prev`` and ``hash`` (hex)."""

    seq: int
    ts: int  # wall clock, ns since the epoch (unreliable on a Pi: no RTC)
    boot: str  # the kernel's boot id
    mono: int  # monotonic clock, ns (orders rows within one boot)
    kind: str
    round: int | None
    data: dict[str, object]
    prev: str
    hash: str

    def as_dict(self) -> dict[str, object]:
        """The row as the feed and the export write it (every field, the chain links too)."""
        return {
            "seq": self.seq,
            "ts": self.ts,
            "boot": self.boot,
            "mono": self.mono,
            "kind": self.kind,
            "round": self.round,
            "data": self.data,
            "prev": self.prev,
            "hash": self.hash,
        }

"""A table's journal as the feed sees it, built in memory for the feed's tests: rows chained
with controller/journal/chain.py and heads signed with a P-256 key (``cryptography``), exactly
as docs/journal.md describes them, so the tests do not depend on the journal's store."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.journal.chain import GENESIS, row_hash
from controller.journal.heads import canonical_head, key_id


@dataclass(frozen=True)
class FakeRow:
    seq: int
    ts: int
    boot: str
    mono: int
    kind: str
    round: int | None
    data: dict[str, Any]
    prev: str
    hash: str

    def as_dict(self) -> dict[str, Any]:
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


@dataclass(frozen=True)
class FakeHead:
    table: str
    seq: int
    hash: str
    ts: int
    sig: str
    key_id: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "seq": self.seq,
            "hash": self.hash,
            "ts": self.ts,
            "sig": self.sig,
            "key_id": self.key_id,
        }


class TableJournal:
    """Rows and signed heads of one table; also an Outbox (rows_after, heads_after)."""

    def __init__(self, table: str, key: ec.EllipticCurvePrivateKey | None = None) -> None:
        self.table = table
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.rows: list[FakeRow] = []
        self.heads: list[FakeHead] = []
        self.closed = 0

    @property
    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    @property
    def key_id(self) -> str:
        return key_id(self.key.public_key())

    def append(
        self,
        kind: str = "paigow.drawn",
        data: dict[str, Any] | None = None,
        round_: int | None = None,
    ) -> FakeRow:
        seq = len(self.rows) + 1 if not self.rows else self.rows[-1].seq + 1
        prev = self.rows[-1].hash if self.rows else GENESIS
        fields = {
            "seq": seq,
            "ts": time.time_ns(),
            "boot": "boot-1",
            "mono": time.monotonic_ns(),
            "kind": kind,
            "round": round_,
            "data": data or {"n": seq},
        }
        row = FakeRow(**fields, prev=prev, hash=row_hash(prev, fields))  # type: ignore[arg-type]
        self.rows.append(row)
        return row

    def rounds(self, count: int, rows_per_round: int = 3) -> list[FakeRow]:
        start = max((r.round or 0 for r in self.rows), default=0)
        out = []
        for n in range(start + 1, start + 1 + count):
            for i in range(rows_per_round):
                out.append(self.append(f"paigow.step{i}", {"round": n, "i": i}, n))
        return out

    def sign(
        self,
        seq: int | None = None,
        *,
        key: ec.EllipticCurvePrivateKey | None = None,
        hash_: str | None = None,
    ) -> FakeHead:
        row = self.rows[-1] if seq is None else self.rows[seq - 1]
        head = {
            "table": self.table,
            "seq": row.seq,
            "hash": hash_ or row.hash,
            "ts": time.time_ns(),
        }
        signer = key or self.key
        sig = signer.sign(canonical_head(head), ec.ECDSA(hashes.SHA256())).hex()
        signed = FakeHead(**head, sig=sig, key_id=key_id(signer.public_key()))  # type: ignore[arg-type]
        self.heads.append(signed)
        return signed

    def rollback(self, to_seq: int) -> None:
        """What root can do on the device: delete rows after ``to_seq`` and the heads above."""
        self.rows = self.rows[:to_seq]
        self.heads = [h for h in self.heads if h.seq <= to_seq]

    # the Outbox protocol (controller/feed/publisher.py)
    def rows_after(self, seq: int, limit: int) -> Sequence[FakeRow]:
        return [r for r in self.rows if r.seq > seq][:limit]

    def heads_after(self, seq: int, limit: int) -> Sequence[FakeHead]:
        return [h for h in self.heads if h.seq > seq][:limit]

    def close(self) -> None:
        self.closed += 1

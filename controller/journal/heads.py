"""Signed heads (journal revision 2, docs/journal.md "Signed heads"): what is signed and how
anyone checks a signature with the table's public key alone.

A head is ``{"table", "seq", "hash", "ts"}``: the table's id, the sequence number and hash of a
journal row, and the wall clock when it was signed (ns); on a table with a TPM also ``counter``,
the value of its monotonic counter for this head (drivers/counter.py; docs/journal.md "The TPM
counter"), signed with the rest. A head without ``counter`` (a table without a TPM, heads signed
before it had one, an archive segment's closing head) is signed and checked without it. The
signature is ECDSA P-256 with SHA-256
over the head's canonical bytes (the curve TPM 2.0 chips and secure elements implement), DER
encoded, in hex. A key is named by its id: the first 16 hex digits of SHA-256 of its DER
SubjectPublicKeyInfo.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.fields.readers import FieldError, int_of, opt_int_of, str_of
from controller.journal.chain import ChainError, canonical

#: The fields of a head that its signature covers.
HEAD_FIELDS: Final = ("table", "seq", "hash", "ts")
#: The TPM counter's field: covered by the signature when the head has it.
COUNTER_FIELD: Final = "counter"


def canonical_head(head: Mapping[str, object]) -> bytes:
    """The bytes a head's signature covers: its :data:`HEAD_FIELDS` and its counter when it
    has one (not None), nothing else."""
    missing = [k for k in HEAD_FIELDS if k not in head]
    if missing:
        raise ChainError(f"head lacks {', '.join(missing)}")
    signed = {k: head[k] for k in HEAD_FIELDS}
    if head.get(COUNTER_FIELD) is not None:
        signed[COUNTER_FIELD] = head[COUNTER_FIELD]
    return canonical(signed)


def load_public_key(pem: bytes) -> ec.EllipticCurvePublicKey:
    """A P-256 public key from PEM; ValueError for anything else."""
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise ValueError("the public key is not an ECDSA P-256 key")
    return key


def key_id(key: ec.EllipticCurvePublicKey) -> str:
    """The key's id: 16 hex digits of SHA-256 over its DER SubjectPublicKeyInfo."""
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()[:16]


def verify_head(head: Mapping[str, object], sig_hex: str, key: ec.EllipticCurvePublicKey) -> bool:
    """True when ``sig_hex`` is the key's signature of ``head``; False for any other answer
    (a bad signature, malformed hex or DER, a head that cannot be canonicalised)."""
    try:
        key.verify(bytes.fromhex(sig_hex), canonical_head(head), ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError, ChainError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class SignedHead:
    """A head and its signature (DER, hex) by the key ``key_id``: a row of the database's
    ``heads`` table, a line of the anchor file, a message of the feed."""

    table: str
    seq: int
    hash: str
    ts: int
    sig: str
    key_id: str
    #: The TPM counter's value for this head; None on a table without a TPM.
    counter: int | None = None

    def head(self) -> dict[str, str | int]:
        """The signed part."""
        head: dict[str, str | int] = {
            "table": self.table,
            "seq": self.seq,
            "hash": self.hash,
            "ts": self.ts,
        }
        if self.counter is not None:
            head[COUNTER_FIELD] = self.counter
        return head

    def as_dict(self) -> dict[str, str | int]:
        """The anchor line's and the feed's form."""
        return {**self.head(), "sig": self.sig, "key_id": self.key_id}

    def line(self) -> str:
        """One anchor-file line (canonical JSON, no newline)."""
        return canonical(self.as_dict()).decode("utf-8")

    def verify(self, key: ec.EllipticCurvePublicKey) -> bool:
        return verify_head(self.head(), self.sig, key)

    @classmethod
    def from_mapping(cls, m: Mapping[str, object]) -> SignedHead:
        """From an anchor line or a feed message; ValueError when a field is missing or of the
        wrong type."""
        try:
            counter = opt_int_of(m, COUNTER_FIELD)
            head = cls(
                str_of(m, "table"),
                int_of(m, "seq"),
                str_of(m, "hash"),
                int_of(m, "ts"),
                str_of(m, "sig"),
                str_of(m, "key_id"),
                counter,
            )
        except FieldError as exc:
            raise ValueError(f"not a signed head: {exc}") from exc
        if counter is not None and counter < 0:
            raise ValueError("not a signed head: counter must be an integer >= 0")
        for name, value in (("seq", head.seq), ("ts", head.ts), ("counter", counter)):
            if value is not None and not -(2**63) <= value < 2**63:
                raise ValueError(f"not a signed head: {name} is beyond signed 64 bits")
        return head

    @classmethod
    def from_line(cls, line: str) -> SignedHead:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a signed head: {exc}") from exc
        except RecursionError:
            raise ValueError("not a signed head: nested too deep") from None
        if not isinstance(obj, dict):
            raise ValueError("not a signed head: not a JSON object")
        return cls.from_mapping(obj)


def pem_key_id(public_key_pem: bytes) -> str:
    """:func:`key_id` of a PEM public key."""
    return key_id(load_public_key(public_key_pem))

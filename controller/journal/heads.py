"""Signed heads (journal revision 2, docs/journal.md "Signed heads"): what is signed and how
anyone checks a signature with the table's public key alone.

A head is ``{"table", "seq", "hash", "ts"}``: the table's id, the sequence number and hash of a
journal row, and the wall clock when it was signed (ns). The signature is ECDSA P-256 with SHA-256
over the head's canonical bytes (the curve TPM 2.0 chips and secure elements implement), DER
encoded, in hex. A key is named by its id: the first 16 hex digits of SHA-256 of its DER
SubjectPublicKeyInfo.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.journal.chain import ChainError, canonical

#: The fields of a head that its signature covers.
HEAD_FIELDS: Final = ("table", "seq", "hash", "ts")


def canonical_head(head: Mapping[str, Any]) -> bytes:
    """The bytes a head's signature covers: its :data:`HEAD_FIELDS`, nothing else."""
    missing = [k for k in HEAD_FIELDS if k not in head]
    if missing:
        raise ChainError(f"head lacks {', '.join(missing)}")
    return canonical({k: head[k] for k in HEAD_FIELDS})


def load_public_key(pem: bytes) -> ec.EllipticCurvePublicKey:
    """A P-256 public key from PEM; ValueError for anything else."""
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise ValueError("the public key is not an ECDSA P-256 key")
    return key


def key_id(key: ec.EllipticCurvePublicKey) -> str:
    """The key's id: 16 hex digits of SHA-256 over its DER SubjectPublicKeyInfo."""
    der = key.public_bytes(serialization.Encoding.DER,
                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:16]


def verify_head(head: Mapping[str, Any], sig_hex: str, key: ec.EllipticCurvePublicKey) -> bool:
    """True when ``sig_hex`` is the key's signature of ``head``; False for any other answer
    (a bad signature, malformed hex or DER, a head that cannot be canonicalised)."""
    try:
        key.verify(bytes.fromhex(sig_hex), canonical_head(head), ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError, ChainError):
        return False
    return True

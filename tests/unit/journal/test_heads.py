"""Signed heads, the file signer, the anchor file and the notary (docs/journal.md)."""

from __future__ import annotations

import hashlib
import stat
import threading
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller.journal.anchor import MAX_LINES, Anchor, read_anchor
from controller.journal.heads import (
    SignedHead,
    canonical_head,
    key_id,
    load_public_key,
    verify_head,
)
from controller.journal.notary import Notary
from controller.journal.signer import FileSigner, SignerError, SignerKeyMissing


def test_a_head_is_signed_with_ecdsa_p256_over_its_canonical_json(tmp_path: Path) -> None:
    signer = FileSigner.create(tmp_path / "k.pem")
    head = {"table": "pg-1", "seq": 12, "hash": "ab" * 32, "ts": 5}
    sig = signer.sign(canonical_head(head))
    assert canonical_head(head) == (
        b'{"hash":"' + b"ab" * 32 + b'","seq":12,"table":"pg-1","ts":5}'
    )
    # checked independently with the cryptography library and the PEM alone
    public = serialization.load_pem_public_key(signer.public_key_pem())
    assert isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name == "secp256r1"
    public.verify(bytes.fromhex(sig), canonical_head(head), ec.ECDSA(hashes.SHA256()))
    assert verify_head(head, sig, public)
    assert not verify_head({**head, "seq": 13}, sig, public)
    other = FileSigner.create(tmp_path / "other.pem")
    assert not verify_head(head, sig, load_public_key(other.public_key_pem()))
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    assert signer.key_id == key_id(public) == hashlib.sha256(der).hexdigest()[:16]


def test_the_key_file_is_private_created_once_and_never_replaced(tmp_path: Path) -> None:
    path = tmp_path / "k.pem"
    with pytest.raises(SignerKeyMissing):
        FileSigner.load(path)
    signer = FileSigner.create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(SignerError, match="never replaced"):
        FileSigner.create(path)
    assert FileSigner.load(path).key_id == signer.key_id
    (tmp_path / "bad.pem").write_text("not a key")
    with pytest.raises(SignerError, match="not a PEM"):
        FileSigner.load(tmp_path / "bad.pem")


def test_a_signed_head_round_trips_through_its_line(tmp_path: Path) -> None:
    signer = FileSigner.create(tmp_path / "k.pem")
    head = {"table": "t", "seq": 3, "hash": "cd" * 32, "ts": 9}
    signed = SignedHead(**head, sig=signer.sign(canonical_head(head)), key_id=signer.key_id)
    again = SignedHead.from_line(signed.line())
    assert again == signed and again.verify(load_public_key(signer.public_key_pem()))
    with pytest.raises(ValueError):
        SignedHead.from_line('{"table":"t","seq":"3"}')


def _head(signer: FileSigner, seq: int) -> SignedHead:
    head = {"table": "t", "seq": seq, "hash": f"{seq:064x}", "ts": seq}
    return SignedHead(**head, sig=signer.sign(canonical_head(head)), key_id=signer.key_id)


def test_the_anchor_keeps_the_newest_heads_small_and_ignores_a_torn_line(tmp_path: Path) -> None:
    signer = FileSigner.create(tmp_path / "k.pem")
    anchor = Anchor(tmp_path / "a")
    assert read_anchor(tmp_path / "a") is None
    for seq in range(1, MAX_LINES * 3):
        anchor.append(_head(signer, seq))
    read = read_anchor(tmp_path / "a")
    assert read is not None and read.newest is not None
    assert read.newest.seq == MAX_LINES * 3 - 1
    assert len(read.heads) <= MAX_LINES and not read.bad_lines
    with open(tmp_path / "a", "a") as fh:  # a power cut in the middle of an append
        fh.write('{"table":"t","seq":99')
    torn = read_anchor(tmp_path / "a")
    assert torn is not None and torn.torn_tail and torn.newest.seq == MAX_LINES * 3 - 1  # type: ignore[union-attr]
    Anchor(tmp_path / "a").append(_head(signer, 500))
    healed = read_anchor(tmp_path / "a")
    assert healed is not None and not healed.torn_tail and healed.newest.seq == 500  # type: ignore[union-attr]


class SlowSigner:
    """A token that takes 50 ms a signature (a TPM takes 50-200 ms)."""

    def __init__(self, inner: FileSigner) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def key_id(self) -> str:
        return self.inner.key_id

    @property
    def description(self) -> str:
        return "slow"

    def public_key_pem(self) -> bytes:
        return self.inner.public_key_pem()

    def sign(self, message: bytes) -> str:
        self.calls += 1
        time.sleep(0.05)
        return self.inner.sign(message)

    def close(self) -> None:
        pass


def test_the_notary_never_blocks_the_caller_and_coalesces(tmp_path: Path) -> None:
    slow = SlowSigner(FileSigner.create(tmp_path / "k.pem"))
    signed: list[SignedHead] = []
    notary = Notary(
        slow,
        Anchor(tmp_path / "a"),
        "t",
        on_signed=lambda h, r: signed.append(h),
        on_error=lambda text: None,
    )
    notary.start()
    began = time.monotonic()
    for seq in range(1, 21):
        notary.request(seq, f"{seq:064x}", "decision")
    assert time.monotonic() - began < 0.05  # twenty requests, no wait
    assert notary.wait_idle(5)
    assert signed[-1].seq == 20 and slow.calls < 20  # coalesced: the newest is signed
    anchor = read_anchor(tmp_path / "a")
    assert anchor is not None and anchor.newest is not None and anchor.newest.seq == 20
    assert all(h.verify(load_public_key(slow.public_key_pem())) for h in anchor.heads)
    notary.stop()


def test_a_failing_anchor_is_reported_not_raised(tmp_path: Path) -> None:
    errors: list[str] = []
    done = threading.Event()
    notary = Notary(
        FileSigner.create(tmp_path / "k.pem"),
        Anchor(tmp_path / "no" / "a"),
        "t",
        on_signed=lambda h, r: None,
        on_error=lambda text: (errors.append(text), done.set()),
    )
    notary.start()
    notary.request(1, "00" * 32, "start")
    assert done.wait(5) and "anchor" in errors[0]
    notary.stop()

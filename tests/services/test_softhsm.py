"""The SoftHSM2 fixture: an EC P-256 key pair made on the token signs, ``cryptography`` verifies
the signature with the public point read back from the token, and the private key never leaves
it (not extractable, sensitive: its value cannot be read nor wrapped out).

SoftHSM2 2.6.1 (Debian 12's) offers CKM_ECDSA but not CKM_ECDSA_SHA256 (MechanismInvalid): the
SHA-256 digest is made outside the token and signed with CKM_ECDSA."""

from __future__ import annotations

import hashlib
import os
import subprocess
from typing import Any

import pkcs11
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from pkcs11 import Attribute, KeyType, Mechanism, ObjectClass
from pkcs11.util.ec import encode_named_curve_parameters

from tests.services._common import missing, which
from tests.services.softhsm import SoftHsmToken

P256_OID = "1.2.840.10045.3.1.7"  # secp256r1 / prime256v1


def _point(ec_point: bytes) -> bytes:
    """CKA_EC_POINT is a DER OCTET STRING around the uncompressed point (SoftHSM2 and the
    standard); accept the bare point as some modules return."""
    if len(ec_point) == 67 and ec_point[:2] == b"\x04\x41":
        return ec_point[2:]
    return ec_point


def _generate(session: pkcs11.Session, label: str) -> tuple[Any, Any]:
    """(public, private) keys stored on the token (Any: python-pkcs11's key classes get their
    sign()/verify() from Cython mixins its stubs do not show)."""
    params = session.create_domain_parameters(
        KeyType.EC, {Attribute.EC_PARAMS: encode_named_curve_parameters(P256_OID)}, local=True
    )
    return params.generate_keypair(
        store=True,
        label=label,
        id=label.encode(),
        private_template={
            Attribute.EXTRACTABLE: False,
            Attribute.SENSITIVE: True,
            Attribute.PRIVATE: True,
            Attribute.SIGN: True,
        },
    )


def test_a_p256_key_on_the_token_signs_and_cryptography_verifies(
    softhsm_token: SoftHsmToken,
) -> None:
    assert softhsm_token.label == "tc-test"
    assert os.environ["SOFTHSM2_CONF"] == str(softhsm_token.conf_path)
    message = b"round 1: draw 6, HMAC head 16:64482dc3"
    with softhsm_token.open_session() as session:
        assert Mechanism.ECDSA in session.token.slot.get_mechanisms()
        pub, priv = _generate(session, "table-07-signing")
        # SoftHSM2 2.6 (Debian 12) has CKM_ECDSA but not CKM_ECDSA_SHA256: hash, then sign
        raw = priv.sign(hashlib.sha256(message).digest(), mechanism=Mechanism.ECDSA)
        assert len(raw) == 64  # r || s, 32 bytes each (PKCS#11's format)
        point = _point(pub[Attribute.EC_POINT])
    assert point[0] == 0x04 and len(point) == 65
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, message, ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        public.verify(der, message + b"!", ec.ECDSA(hashes.SHA256()))


def test_the_private_key_is_not_extractable(softhsm_token: SoftHsmToken) -> None:
    with softhsm_token.open_session() as session:
        _generate(session, "table-07-signing")
    # a new session finds the stored key by its label, with the attributes the token enforces
    with softhsm_token.open_session() as session:
        priv = session.get_key(ObjectClass.PRIVATE_KEY, KeyType.EC, label="table-07-signing")
        assert priv[Attribute.EXTRACTABLE] is False
        assert priv[Attribute.SENSITIVE] is True
        assert priv[Attribute.NEVER_EXTRACTABLE] is True
        assert priv[Attribute.ALWAYS_SENSITIVE] is True
        assert priv[Attribute.TOKEN] is True
        with pytest.raises(pkcs11.exceptions.AttributeSensitive):
            priv[Attribute.VALUE]
        # nor can it be wrapped out under a key of our own
        wrapping = session.generate_key(
            KeyType.AES,
            256,
            label="wrap",
            store=False,
            template={Attribute.WRAP: True, Attribute.EXTRACTABLE: True},
        )
        with pytest.raises(pkcs11.exceptions.KeyUnextractable):
            wrapping.wrap_key(priv, mechanism=Mechanism.AES_KEY_WRAP_PAD)
        # and the attribute cannot be turned back on
        with pytest.raises(pkcs11.exceptions.PKCS11Error):
            priv[Attribute.EXTRACTABLE] = True


def test_the_wrong_pin_is_refused(softhsm_token: SoftHsmToken) -> None:
    with pytest.raises(pkcs11.exceptions.PinIncorrect):
        softhsm_token.token().open(
            user_pin="00000000" if softhsm_token.user_pin != "00000000" else "11111111"
        )


def test_pkcs11_tool_sees_the_token_and_its_key(softhsm_token: SoftHsmToken) -> None:
    tool = which("pkcs11-tool")
    if tool is None:
        missing("softhsm", "pkcs11-tool", "opensc")
    with softhsm_token.open_session() as session:
        _generate(session, "seen-by-opensc")
    out = subprocess.run(
        [
            tool,
            "--module",
            softhsm_token.module,
            "--token-label",
            softhsm_token.label,
            "--login",
            "--pin",
            softhsm_token.user_pin,
            "--list-objects",
            "--type",
            "privkey",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **softhsm_token.env},
    )
    assert out.returncode == 0, out.stderr
    assert "seen-by-opensc" in out.stdout
    assert "never extractable" in out.stdout or "sensitive" in out.stdout

"""Who signs the journal's heads (docs/journal.md "Signer"): ECDSA P-256 / SHA-256, DER.

Two backends behind one :class:`Signer` protocol:

* :class:`FileSigner`: a PEM private key in a file (mode 0600). Development and the simulated
  profiles. Whoever can read the file can sign: it protects against an editor of the database
  who cannot read the key, not against root on the device.
* :class:`Pkcs11Signer`: a key inside a PKCS#11 token (a TPM 2.0 through tpm2-pkcs11 on a Pi, a
  secure element, SoftHSM2 in the tests), generated there as sensitive and not extractable: the
  device signs, but nobody can copy the key off it, so a rewritten journal cannot be re-signed
  elsewhere.

A key is created only when a new journal is (the application decides); an existing journal whose
key is missing never gets a new one (:class:`SignerKeyMissing`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from controller.journal.durable import sync_dir
from controller.journal.heads import load_public_key, pem_key_id

if TYPE_CHECKING:  # python-pkcs11 is an extra, imported only when a token is opened
    from pkcs11.types import PrivateKey, PublicKey, Session, SignMixin


class SignerError(Exception):
    """The signer could not be opened or could not sign."""


class SignerKeyMissing(SignerError):
    """No signing key where the profile says it is."""


class Signer(Protocol):
    """Signs heads; the private key never leaves it."""

    @property
    def key_id(self) -> str: ...

    @property
    def description(self) -> str: ...

    def public_key_pem(self) -> bytes: ...

    def sign(self, message: bytes) -> str:
        """ECDSA P-256 / SHA-256 signature of ``message``, DER, hex."""
        ...

    def close(self) -> None: ...


class FileSigner:
    """A PEM private key in a file (see the module docstring)."""

    def __init__(self, path: Path, key: ec.EllipticCurvePrivateKey) -> None:
        self._path = path
        self._key = key
        self._pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self._key_id = pem_key_id(self._pem)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FileSigner:
        p = Path(path)
        try:
            data = p.read_bytes()
        except FileNotFoundError as exc:
            raise SignerKeyMissing(f"no signing key at {p}") from exc
        except OSError as exc:
            raise SignerError(f"signing key {p} is unreadable: {exc}") from exc
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise SignerError(f"signing key {p} is not a PEM private key: {exc}") from exc
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
            raise SignerError(f"signing key {p} is not an ECDSA P-256 key")
        return cls(p, key)

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> FileSigner:
        """A new P-256 key, written once (mode 0600, never over an existing file) and synced."""
        p = Path(path)
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError as exc:
            raise SignerError(f"signing key {p} exists already: never replaced") from exc
        except OSError as exc:
            raise SignerError(f"cannot create signing key {p}: {exc}") from exc
        try:
            os.write(fd, pem)
            os.fsync(fd)
        finally:
            os.close(fd)
        sync_dir(p.parent)
        return cls(p, key)

    @property
    def key_id(self) -> str:
        return self._key_id

    @property
    def description(self) -> str:
        return f"file {self._path}"

    def public_key_pem(self) -> bytes:
        return self._pem

    def sign(self, message: bytes) -> str:
        return self._key.sign(message, ec.ECDSA(hashes.SHA256())).hex()

    def close(self) -> None:
        """Nothing to release."""


def check_module(module: str, expected: str | None, *, required: bool) -> None:
    """Refuse (:class:`SignerError`) a PKCS#11 module whose SHA-256 is not the pinned one, or
    that is not pinned when ``required``. The digest is that of the file the loader opens (the
    path with its symbolic links resolved)."""
    path = os.path.realpath(module)
    if expected is None:
        if required:
            raise SignerError(
                f"the pkcs11 module {module} is not pinned: a sealed profile needs"
                f" pkcs11_module_sha256 in [journal] (sha256sum {path}), because the module is"
                " code loaded from outside the release (docs/program-verification.md)"
            )
        return
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise SignerError(f"cannot read the pkcs11 module {module}: {exc.strerror}") from exc
    found = digest.hexdigest()
    if found != expected.lower():
        raise SignerError(
            f"the pkcs11 module {path} has sha256 {found}, but the profile pins"
            f" pkcs11_module_sha256 = {expected.lower()}: refusing to load it (a changed module"
            " is changed code; if the module was upgraded on purpose, pin the new hash and"
            " install the profile again)"
        )


class Pkcs11Signer:
    """A key in a PKCS#11 token (see the module docstring). Signs the SHA-256 digest with the
    raw ``CKM_ECDSA`` mechanism, which every token with P-256 offers (TPM 2.0 included)."""

    def __init__(
        self, session: Session, private: SignMixin, public_pem: bytes, description: str
    ) -> None:
        self._session = session
        self._private = private
        self._pem = public_pem
        self._key_id = pem_key_id(public_pem)
        self._description = description
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls,
        module: str,
        token_label: str,
        key_label: str,
        pin: str,
        *,
        create: bool = False,
        module_sha256: str | None = None,
        require_module_sha256: bool = False,
    ) -> Pkcs11Signer:
        """Log in to the token and find the key pair ``key_label``; with ``create``, generate
        it in the token when absent (sensitive, not extractable). The module is code from
        outside the release: with ``module_sha256`` it is loaded only if its file has that
        SHA-256; ``require_module_sha256`` (a sealed profile) refuses a module not pinned."""
        check_module(module, module_sha256, required=require_module_sha256)
        try:
            import pkcs11
            from pkcs11 import Attribute, KeyType, ObjectClass
            from pkcs11.types import SignMixin
        except ImportError as exc:
            raise SignerError(
                "the pkcs11 signer needs python-pkcs11 (pip install 'table-controller[pkcs11]')"
            ) from exc
        where = f"pkcs11 token {token_label!r} key {key_label!r} ({module})"
        try:
            lib = pkcs11.lib(module)
            token = lib.get_token(token_label=token_label)
            session = token.open(rw=create, user_pin=pin)
        except (pkcs11.PKCS11Error, RuntimeError, OSError) as exc:
            raise SignerError(f"cannot open {where}: {type(exc).__name__} {exc}") from exc
        try:
            try:
                private = session.get_key(
                    object_class=ObjectClass.PRIVATE_KEY, key_type=KeyType.EC, label=key_label
                )
                public = session.get_key(
                    object_class=ObjectClass.PUBLIC_KEY, key_type=KeyType.EC, label=key_label
                )
            except pkcs11.NoSuchKey:
                if not create:
                    raise SignerKeyMissing(f"no key pair in {where}") from None
                public, private = _generate(session, key_label)
            if not isinstance(private, SignMixin):
                raise SignerError(f"the private key of {where} cannot sign (no CKA_SIGN)")
            pem = _public_pem(public[Attribute.EC_POINT])
        except SignerError:
            session.close()
            raise
        except (pkcs11.PKCS11Error, ValueError) as exc:
            session.close()
            raise SignerError(f"{where}: {type(exc).__name__} {exc}") from exc
        return cls(session, private, pem, where)

    @property
    def key_id(self) -> str:
        return self._key_id

    @property
    def description(self) -> str:
        return self._description

    def public_key_pem(self) -> bytes:
        return self._pem

    def sign(self, message: bytes) -> str:
        import pkcs11

        digest = hashlib.sha256(message).digest()
        try:
            with self._lock:
                raw = self._private.sign(digest, mechanism=pkcs11.Mechanism.ECDSA)
        except pkcs11.PKCS11Error as exc:
            raise SignerError(
                f"{self._description}: signing failed: {type(exc).__name__} {exc}"
            ) from exc
        half = len(raw) // 2
        der = encode_dss_signature(
            int.from_bytes(raw[:half], "big"), int.from_bytes(raw[half:], "big")
        )
        return der.hex()

    def close(self) -> None:
        with self._lock:
            try:
                self._session.close()
            except Exception:  # noqa: BLE001 - closing at shutdown: nothing left to do
                pass


def _generate(session: Session, label: str) -> tuple[PublicKey, PrivateKey]:
    from pkcs11 import Attribute, KeyType
    from pkcs11.util.ec import encode_named_curve_parameters

    params = session.create_domain_parameters(
        KeyType.EC, {Attribute.EC_PARAMS: encode_named_curve_parameters("secp256r1")}, local=True
    )
    public, private = params.generate_keypair(
        store=True,
        label=label,
        private_template={
            Attribute.SENSITIVE: True,
            Attribute.EXTRACTABLE: False,
            Attribute.SIGN: True,
            Attribute.PRIVATE: True,
            Attribute.TOKEN: True,
        },
        public_template={Attribute.VERIFY: True, Attribute.TOKEN: True},
    )
    return public, private


def _public_pem(ec_point: bytes) -> bytes:
    """PEM of a P-256 public key from a token's CKA_EC_POINT (a DER OCTET STRING wrapping the
    uncompressed point; some tokens give the bare point)."""
    point = ec_point
    if len(point) == 67 and point[0] == 0x04 and point[1] == 65:
        point = point[2:]
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    load_public_key(pem)
    return pem


def read_pin(path: str | os.PathLike[str]) -> str:
    """The token's user PIN from a file (first line); the file should be readable only by the
    service's user."""
    try:
        return Path(path).read_text().splitlines()[0].strip()
    except (OSError, IndexError) as exc:
        raise SignerError(f"cannot read the token PIN from {path}: {exc}") from exc

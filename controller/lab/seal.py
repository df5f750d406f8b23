"""The lab package's seal: ``SHA256SUMS`` (the SHA-256 of every other file) and its signature.

``SHA256SUMS`` is in ``sha256sum`` format, so ``sha256sum -c SHA256SUMS`` checks every file
without this program. ``SHA256SUMS.sig`` is an ECDSA P-256 / SHA-256 signature of its bytes (DER,
binary) by the key whose public half is ``signing-key.pem`` (a file the sums cover): the table's
journal key, which binds the package to the device, or a lab key named on the command line.
``openssl dgst -sha256 -verify signing-key.pem -signature SHA256SUMS.sig SHA256SUMS`` checks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from controller.journal.heads import load_public_key, pem_key_id
from controller.program.manifest import compare, digest_files, scan_tree

__all__ = ["KEY", "SIG", "SUMS", "SealCheck", "Signer", "check_seal", "seal"]

SUMS: Final = "SHA256SUMS"
SIG: Final = "SHA256SUMS.sig"
KEY: Final = "signing-key.pem"
_LINE: Final = re.compile(r"([0-9a-f]{64})  (\S.*)")


class Signer(Protocol):
    """What seals a package: an ECDSA P-256 key that signs (the journal's signer is one)."""

    @property
    def key_id(self) -> str: ...

    def public_key_pem(self) -> bytes: ...

    def sign(self, message: bytes) -> str:
        """ECDSA P-256 / SHA-256 signature of ``message``, DER, hex."""
        ...


def seal(root: Path, signer: Signer) -> str:
    """Write ``signing-key.pem``, ``SHA256SUMS`` over every file under ``root`` and its signature;
    returns the signing key's id. Nothing may be written under ``root`` afterwards."""
    (root / KEY).write_bytes(signer.public_key_pem())
    tree = scan_tree(root, exclude=(SUMS, SIG))
    if tree.oddities:
        raise ValueError(f"{root}: " + "; ".join(tree.oddities[:3]))
    digests = digest_files(tree.files)
    lines = []
    for item in tree.files:
        digest = digests[item.name]
        if isinstance(digest, OSError):
            raise digest
        if "\n" in item.name or item.name != item.name.strip():
            raise ValueError(f"{item.name!r}: not a name SHA256SUMS can list")
        lines.append(f"{digest}  {item.name}\n")
    sums = "".join(lines).encode("utf-8")
    (root / SUMS).write_bytes(sums)
    (root / SIG).write_bytes(bytes.fromhex(signer.sign(sums)))
    return signer.key_id


@dataclass(frozen=True)
class SealCheck:
    """What :func:`check_seal` found: the signing key's id, the files the sums list, and the
    problems (none when the signature and every file hold)."""

    key_id: str | None
    files: frozenset[str]
    problems: list[str]


def check_seal(root: Path, expected_pem: bytes | None = None) -> SealCheck:
    """The signature of ``SHA256SUMS`` by ``signing-key.pem`` (and that key is ``expected_pem``
    when given), then every file against the sums: changed, missing and extra files."""
    checked = _check(root, expected_pem)
    return SealCheck(checked[0], frozenset(checked[2]), checked[1])


def _check(root: Path, expected_pem: bytes | None) -> tuple[str | None, list[str], dict[str, str]]:
    try:
        sums = (root / SUMS).read_bytes()
        sig = (root / SIG).read_bytes()
        pem = (root / KEY).read_bytes()
    except OSError as exc:
        return (
            None,
            [f"the package's seal is incomplete: {exc.strerror or exc}: {exc.filename}"],
            {},
        )
    try:
        key = load_public_key(pem)
        key_id = pem_key_id(pem)
    except ValueError as exc:
        return None, [f"{KEY} is not a P-256 public key: {exc}"], {}
    problems: list[str] = []
    if expected_pem is not None:
        try:
            wanted = pem_key_id(expected_pem)
        except ValueError as exc:
            return key_id, [f"the public key given is not a P-256 public key: {exc}"], {}
        if wanted != key_id:
            problems.append(
                f"the package is signed by key {key_id}, not by the key given ({wanted})"
            )
    try:
        key.verify(sig, sums, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        problems.append(f"{SIG} is not a signature of {SUMS} by {KEY} (key {key_id})")
        return key_id, problems, {}
    expected: dict[str, str] = {}
    for number, line in enumerate(sums.decode("utf-8", errors="replace").splitlines(), 1):
        match = _LINE.fullmatch(line)
        if match is None:
            problems.append(f"{SUMS} line {number} is not '<sha256>  <file>'")
            return key_id, problems, {}
        expected[match.group(2)] = match.group(1)
    tree = scan_tree(root, exclude=(SUMS, SIG))
    problems += tree.oddities
    problems += compare(expected, tree.files)
    return key_id, problems, expected

"""A throw-away certificate authority made with ``cryptography`` (EC P-256, SHA-256).

ca = CertificateAuthority(directory)              # ca.cert_path (PEM)
pair = ca.issue_server("broker", dns=["localhost"], ips=["127.0.0.1"])
pair = ca.issue_client("table-07")                # CN = table id, EKU clientAuth
pair.cert_path, pair.key_path                     # PEM files; the key unencrypted, 0600
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class CertPair:
    """A certificate and its private key, as PEM files."""

    cert_path: Path
    key_path: Path
    common_name: str


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    data = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"


class CertificateAuthority:
    """A CA whose key lives only in this object; it signs server and client certificates."""

    def __init__(
        self, directory: Path, name: str = "table-controller test CA", days: int = 2
    ) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = dt.datetime.now(dt.UTC)
        self._not_before = now - dt.timedelta(minutes=5)
        self._not_after = now + dt.timedelta(days=days)
        ski = x509.SubjectKeyIdentifier.from_public_key(self._key.public_key())
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(self._name)
            .issuer_name(self._name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before)
            .not_valid_after(self._not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(ski, critical=False)
            .sign(self._key, hashes.SHA256())
        )
        self.cert_path = directory / "ca.pem"
        self.cert_path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def _issue(
        self,
        common_name: str,
        usage: x509.ObjectIdentifier,
        stem: str,
        dns: Iterable[str] = (),
        ips: Iterable[str] = (),
    ) -> CertPair:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before)
            .not_valid_after(self._not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=True,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
        )
        names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        cert_path = self.directory / f"{stem}.pem"
        key_path = self.directory / f"{stem}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key_path, key)
        return CertPair(cert_path, key_path, common_name)

    def issue_server(
        self,
        common_name: str,
        dns: Iterable[str] = ("localhost",),
        ips: Iterable[str] = ("127.0.0.1", "::1"),
    ) -> CertPair:
        return self._issue(
            common_name,
            ExtendedKeyUsageOID.SERVER_AUTH,
            f"server-{_safe_name(common_name)}",
            dns,
            ips,
        )

    def issue_client(self, common_name: str) -> CertPair:
        return self._issue(
            common_name, ExtendedKeyUsageOID.CLIENT_AUTH, f"client-{_safe_name(common_name)}"
        )

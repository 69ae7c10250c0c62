"""TLS material for serving the sandbox over HTTPS: a private CA and a serving certificate.

kubectl and the Python clients talk to real clusters over HTTPS with the cluster CA in the
kubeconfig (`certificate-authority-data`), so the sandbox can too. `generate` makes a fresh
self-signed CA and a serving certificate it signs, with the hosts as subject alternative names
(IP addresses as IP SANs, as clients verify `https://127.0.0.1:PORT` against those). The
extensions are the ones strict verifiers insist on (basic constraints, key usages, key
identifiers), so the certificate also passes Python's `VERIFY_X509_STRICT`. Keys are EC P-256.

This module knows nothing of the server or of kubeconfigs; it only makes and writes PEM files.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_COMMON_NAME = "kubecrew-sandbox-ca"
SERVER_COMMON_NAME = "kubecrew-sandbox"
# Backdated so a client whose clock runs slightly behind still accepts a certificate made now.
_CLOCK_SKEW = timedelta(hours=1)


@dataclass(frozen=True)
class TlsMaterial:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes  # the serving certificate's private key (PKCS#8, unencrypted)


def generate(hosts: Sequence[str] = ("127.0.0.1", "localhost"), *, days: int = 365) -> TlsMaterial:
    if not hosts:
        raise ValueError("at least one host is needed for the serving certificate")
    if days < 1:
        raise ValueError("days must be at least 1")
    now = datetime.now(UTC)
    not_before, not_after = now - _CLOCK_SKEW, now + timedelta(days=days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _ca_certificate(ca_key, not_before=not_before, not_after=not_after)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = _serving_certificate(
        server_key.public_key(),
        hosts,
        issuer=ca_cert,
        issuer_key=ca_key,
        not_before=not_before,
        not_after=not_after,
    )
    return TlsMaterial(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=server_cert.public_bytes(serialization.Encoding.PEM),
        key_pem=server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def write(material: TlsMaterial, directory: Path) -> tuple[Path, Path, Path]:
    """Write ca.crt, tls.crt and tls.key (readable by the owner only) into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_path, cert_path, key_path = (
        directory / "ca.crt",
        directory / "tls.crt",
        directory / "tls.key",
    )
    ca_path.write_bytes(material.ca_pem)
    cert_path.write_bytes(material.cert_pem)
    # Created 0600 from the start, so the key is never readable by others, even briefly.
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(material.key_pem)
    key_path.chmod(0o600)  # an existing file keeps its old mode through os.open
    return ca_path, cert_path, key_path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _ca_certificate(
    key: ec.EllipticCurvePrivateKey, *, not_before: datetime, not_after: datetime
) -> x509.Certificate:
    public = key.public_key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(CA_COMMON_NAME))
        .issuer_name(_name(CA_COMMON_NAME))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(signs_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
    )
    return builder.sign(key, hashes.SHA256())


def _serving_certificate(
    public: ec.EllipticCurvePublicKey,
    hosts: Sequence[str],
    *,
    issuer: x509.Certificate,
    issuer_key: ec.EllipticCurvePrivateKey,
    not_before: datetime,
    not_after: datetime,
) -> x509.Certificate:
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(SERVER_COMMON_NAME))
        .issuer_name(issuer.subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(signs_certificates=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(_alt_names(hosts)), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    )
    return builder.sign(issuer_key, hashes.SHA256())


def _key_usage(*, signs_certificates: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def _alt_names(hosts: Sequence[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names

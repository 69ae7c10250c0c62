"""TLS material: the serving certificate verifies against the CA over a real TLS socket."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from sandbox.tls import TlsMaterial, generate, write


@pytest.fixture(scope="module")
def material() -> TlsMaterial:
    return generate()


@contextmanager
def serving(material: TlsMaterial, directory: Path) -> Iterator[int]:
    """A one-connection TLS server on 127.0.0.1 that greets the client; yields its port."""
    _, cert_path, key_path = write(material, directory)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_path, key_path)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    failures: list[BaseException] = []

    def serve() -> None:
        try:
            conn, _ = listener.accept()
            with server_context.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(b"hello over tls")
        except (OSError, ssl.SSLError) as exc:  # a client that refuses the cert ends up here
            failures.append(exc)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        thread.join(timeout=5)
        listener.close()


def client_context(ca_pem: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=ca_pem.decode())
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


def fetch(port: int, *, ca_pem: bytes, hostname: str) -> bytes:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        client_context(ca_pem).wrap_socket(raw, server_hostname=hostname) as tls,
    ):
        return tls.recv(100)


@pytest.mark.parametrize("hostname", ["127.0.0.1", "localhost"], ids=["ip-san", "dns-san"])
def test_serving_certificate_verifies_against_the_ca(
    material: TlsMaterial, tmp_path: Path, hostname: str
) -> None:
    with serving(material, tmp_path) as port:
        assert fetch(port, ca_pem=material.ca_pem, hostname=hostname) == b"hello over tls"


@pytest.mark.parametrize(
    ("trusted", "hostname"),
    [("own-ca", "example.com"), ("other-ca", "127.0.0.1")],
    ids=["hostname-not-in-sans", "untrusted-ca"],
)
def test_client_refuses_what_the_certificate_does_not_cover(
    material: TlsMaterial, tmp_path: Path, trusted: str, hostname: str
) -> None:
    ca_pem = material.ca_pem if trusted == "own-ca" else generate().ca_pem

    with serving(material, tmp_path) as port, pytest.raises(ssl.SSLCertVerificationError):
        fetch(port, ca_pem=ca_pem, hostname=hostname)


def test_certificates_have_the_expected_names_and_keys() -> None:
    made = generate(["10.0.0.7", "sandbox.local", "::1"], days=30)
    ca = x509.load_pem_x509_certificate(made.ca_pem)
    cert = x509.load_pem_x509_certificate(made.cert_pem)

    ca_name = ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert ca_name == "kubecrew-sandbox-ca"
    assert ca.issuer == ca.subject and cert.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("10.0.0.7"),
        ipaddress.ip_address("::1"),
    ]
    assert sans.get_values_for_type(x509.DNSName) == ["sandbox.local"]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    for public in (ca.public_key(), cert.public_key()):
        assert isinstance(public, ec.EllipticCurvePublicKey)
        assert public.curve.name == "secp256r1"
    lifetime = cert.not_valid_after_utc - datetime.now(UTC)
    assert timedelta(days=29) < lifetime <= timedelta(days=30)
    assert cert.not_valid_before_utc < datetime.now(UTC)


def test_key_matches_the_serving_certificate(material: TlsMaterial) -> None:
    cert = x509.load_pem_x509_certificate(material.cert_pem)
    key = load_pem_private_key(material.key_pem, password=None)

    assert key.public_key() == cert.public_key()


def test_each_generation_makes_a_new_ca(material: TlsMaterial) -> None:
    assert generate().ca_pem != material.ca_pem


@pytest.mark.parametrize(
    ("hosts", "days"), [((), 365), (("127.0.0.1",), 0)], ids=["no-hosts", "no-lifetime"]
)
def test_generate_refuses_unusable_arguments(hosts: tuple[str, ...], days: int) -> None:
    with pytest.raises(ValueError):
        generate(hosts, days=days)


def test_write_lays_out_ca_cert_and_private_key(material: TlsMaterial, tmp_path: Path) -> None:
    directory = tmp_path / "pki" / "sandbox"

    ca_path, cert_path, key_path = write(material, directory)

    assert [p.name for p in (ca_path, cert_path, key_path)] == ["ca.crt", "tls.crt", "tls.key"]
    assert ca_path.read_bytes() == material.ca_pem
    assert cert_path.read_bytes() == material.cert_pem
    assert key_path.read_bytes() == material.key_pem
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600


def test_write_tightens_an_existing_key_file(material: TlsMaterial, tmp_path: Path) -> None:
    stale = tmp_path / "tls.key"
    stale.write_bytes(b"old key material that is longer than nothing" * 20)
    stale.chmod(0o644)

    _, _, key_path = write(material, tmp_path)

    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    assert key_path.read_bytes() == material.key_pem

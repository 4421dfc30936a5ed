"""`pi-proto serve --http-port N`: HTTP beside gRPC in one process, from the same models."""

from __future__ import annotations

import datetime
import ipaddress
import json
import signal
import subprocess
import sys
from pathlib import Path

import pyqwest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import pi_proto as pp
from pi_proto.cli import main as cli
from pi_proto.web import SSE_PATH, HttpLimits, HttpModelClient

from .helpers import drain, readme_context, serve_process


def http_line(process: subprocess.Popen[str]) -> str:
    """HOST:PORT from the second line, which follows the gRPC line."""
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("http on "), line
    return line.removeprefix("http on ").strip()


async def test_serve_prints_the_grpc_line_first_then_the_http_line_and_serves_both() -> None:
    with serve_process("--http-port", "0") as (process, target):
        address = http_line(process)
        async with pp.ModelClient(target) as grpc_client, HttpModelClient(f"http://{address}") as client:
            _, over_grpc = await drain(grpc_client.stream(readme_context()))
            _, over_connect = await drain(client.stream(readme_context()))
        body = json.dumps({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}).encode()
        reply = await pyqwest.Client().post(
            f"http://{address}{SSE_PATH}", headers={"content-type": "application/json"}, content=body
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    assert over_connect == over_grpc
    assert reply.status == 200
    last = reply.content.decode().split("\n\n")[-2]  # an SSE event: its id line, then its data line
    assert json.loads(last.partition("data: ")[2])["type"] == "done"


def signed_by_a_ca() -> tuple[bytes, bytes, bytes]:
    """A CA's certificate, and a server certificate for 127.0.0.1 it signed with its key (PEM): rustls,
    under pyqwest, refuses a CA certificate used as the server's own, as tests/certs.py makes."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pi-proto test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    private = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca.public_bytes(pem), server.public_bytes(pem) + ca.public_bytes(pem), private


async def test_tls_and_the_token_hold_for_http_too(tmp_path: Path) -> None:
    ca, chain, key = signed_by_a_ca()
    (tmp_path / "cert.pem").write_bytes(chain)
    (tmp_path / "key.pem").write_bytes(key)
    (tmp_path / "token").write_text("tok-123\n")
    flags = ["--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")]
    with serve_process(*flags, "--token-file", str(tmp_path / "token"), "--http-port", "0") as (process, _):
        url = f"https://{http_line(process)}"
        async with HttpModelClient(url, ca_certificates=ca, token="tok-123") as client:
            _, message = await drain(client.stream(readme_context()))
        async with HttpModelClient(url, ca_certificates=ca) as client:
            _, denied = await drain(client.stream(readme_context()))
    assert message.stop_reason == pp.StopReason.TOOL_USE
    assert denied.error_message == "missing or invalid bearer token"


def test_an_http_port_in_use_is_a_clear_error() -> None:
    with serve_process("--http-port", "0") as (process, _):
        taken = http_line(process).rpartition(":")[2]
        command = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", "--http-port", taken]
        failed = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert failed.returncode == 2
    assert failed.stdout == ""  # no line for scripts to wait on
    assert f"cannot listen on 127.0.0.1:{taken}" in failed.stderr


async def test_serve_cors_origin_lets_that_page_call() -> None:
    page = "http://localhost:5173"
    with serve_process("--http-port", "0", "--cors-origin", page) as (process, _):
        url = f"http://{http_line(process)}{SSE_PATH}"
        reply = await pyqwest.Client().options(url, headers={"origin": page, "access-control-request-method": "POST"})
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    assert (reply.status, reply.headers["access-control-allow-origin"]) == (204, page)


def test_serve_cors_origin_must_be_an_origin_on_an_http_port() -> None:
    def serve(*flags: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pi_proto.cli", "serve", "--port", "0", *flags]
        return subprocess.run(command, capture_output=True, text=True, timeout=30)

    alone, bad = serve("--cors-origin", "*"), serve("--http-port", "0", "--cors-origin", "example.com")
    assert (alone.returncode, bad.returncode) == (2, 2)
    assert "--cors-origin needs --http-port" in alone.stderr
    assert "--cors-origin: not an origin (scheme://host[:port], or *): 'example.com'" in bad.stderr


def test_serves_header_timeout_default_is_http_limits_own() -> None:
    """The command states it without importing the http extra; the two must not drift apart."""
    assert cli.parser().parse_args(["serve"]).header_timeout == HttpLimits().header_timeout

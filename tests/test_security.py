"""TLS, bearer-token auth and the server's limits."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

import pi_proto as pp
from pi_proto.client import ModelClient
from pi_proto.scripted import ScriptedModel
from pi_proto.server import ModelServer, ServerLimits, Tls

from .certs import self_signed
from .helpers import drain, health_status, raw_status, readme_context, serve_process

pytestmark = pytest.mark.timeout(30)
TOKEN = "s3cret-token"


async def test_tls_with_a_trusted_certificate() -> None:
    certificate = self_signed()
    tls = Tls(certificate.certificate_pem, certificate.private_key_pem)
    async with ModelServer(ScriptedModel.readme(), tls=tls) as server:
        async with ModelClient(server.target, root_certificates=certificate.certificate_pem) as client:
            _, message = await drain(client.stream(readme_context()))
        assert message.stop_reason == pp.StopReason.TOOL_USE

        async with ModelClient(server.target) as plaintext:
            _, refused = await drain(plaintext.stream(readme_context(), timeout=5))
        assert refused.stop_reason == pp.StopReason.ERROR

        stranger = self_signed()  # a client that trusts some other certificate
        async with ModelClient(server.target, root_certificates=stranger.certificate_pem) as wrong:
            _, untrusted = await drain(wrong.stream(readme_context(), timeout=5))
        assert untrusted.stop_reason == pp.StopReason.ERROR


async def test_bearer_token_is_required_and_health_stays_open() -> None:
    async with ModelServer(ScriptedModel.readme(), token=TOKEN) as server:
        for token in (None, "wrong", TOKEN + "x", ""):
            async with ModelClient(server.target, token=token) as client:
                _, message = await drain(client.stream(readme_context()))
            assert (message.stop_reason, message.error_message) == (
                pp.StopReason.ERROR,
                "missing or invalid bearer token",
            ), token
        async with ModelClient(server.target, token=TOKEN) as client:
            _, message = await drain(client.stream(readme_context()))
        assert message.stop_reason == pp.StopReason.TOOL_USE

        assert await health_status(server.target) == health_pb2.HealthCheckResponse.SERVING
        error = await raw_status(server.target, pp.encode(pp.StreamRequest(context=readme_context())))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_concurrent_streams_above_the_limit_are_refused() -> None:
    limits = ServerLimits(max_concurrent_streams=2)
    async with (
        ModelServer(ScriptedModel.readme(delay=0.2), limits=limits) as server,
        ModelClient(server.target) as client,
    ):
        first, second = client.stream(readme_context()), client.stream(readme_context())
        await anext(first)
        await anext(second)
        assert server.active_streams == 2
        _, third = await drain(client.stream(readme_context()))
        assert third.stop_reason == pp.StopReason.ERROR
        assert third.error_message == "too many concurrent streams: this server serves 2 at once"
        first.cancel()
        second.cancel()
        await asyncio.gather(drain(first), drain(second))
        for _ in range(100):
            if server.active_streams == 0:
                break
            await asyncio.sleep(0.01)
        _, fourth = await drain(client.stream(readme_context()))
    assert fourth.stop_reason == pp.StopReason.TOOL_USE


async def test_a_stream_longer_than_the_server_limit_ends_with_an_error() -> None:
    limits = ServerLimits(stream_timeout=0.3)
    async with (
        ModelServer(ScriptedModel.readme(delay=0.1), limits=limits) as server,
        ModelClient(server.target) as client,
    ):
        seen, message = await drain(client.stream(readme_context()))
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == "the stream ran longer than the server's limit of 0.3 s"
    assert 1 < len(seen) < 12  # some events arrived, then the error


def test_tls_and_token_from_the_command_line(tmp_path: Path) -> None:
    certificate = self_signed()
    (tmp_path / "cert.pem").write_bytes(certificate.certificate_pem)
    (tmp_path / "key.pem").write_bytes(certificate.private_key_pem)
    (tmp_path / "token").write_text(TOKEN + "\n")
    (tmp_path / "wrong").write_text("nope\n")
    flags = ["--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")]
    with serve_process(*flags, "--token-file", str(tmp_path / "token")) as (server, target):

        def stream(*options: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "pi_proto.cli", "stream", "--target", target, "--timeout", "10", *options]
            return subprocess.run([*command, "hi"], capture_output=True, text=True, timeout=30)

        ok = stream("--ca-file", str(tmp_path / "cert.pem"), "--token-file", str(tmp_path / "token"))
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert "我先读取项目说明。" in ok.stdout
        denied = stream("--ca-file", str(tmp_path / "cert.pem"), "--token-file", str(tmp_path / "wrong"))
        assert denied.returncode == 1
        assert "missing or invalid bearer token" in denied.stdout
        server.terminate()
        _, errors = server.communicate(timeout=20)
    assert TOKEN not in errors  # the token is never logged

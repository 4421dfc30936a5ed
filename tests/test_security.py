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
from pi_proto.grpc.client import ModelClient
from pi_proto.grpc.methods import STREAM_METHOD
from pi_proto.grpc.requests import ServerLimits
from pi_proto.grpc.server import ModelServer, Tls
from pi_proto.models.scripted import ScriptedModel
from pi_proto.wire import varint

from .certs import self_signed
from .helpers import (
    README_TURN,
    RecordingModel,
    WatchedModel,
    drain,
    eventually,
    health_status,
    held_when_timed_out,
    kind,
    list_services,
    raw_call,
    raw_status,
    readme_context,
    serve_process,
)

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
    model = RecordingModel(README_TURN, hold_after=1)  # the first two are in flight until cancelled
    async with ModelServer(model, limits=limits) as server, ModelClient(server.target) as client:
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
        await eventually(lambda: server.open_streams == 0, "the cancelled calls give their slots back")
        model.release.set()
        _, fourth = await drain(client.stream(readme_context()))
    assert fourth.stop_reason == pp.StopReason.TOOL_USE


async def test_a_stream_longer_than_the_server_limit_ends_with_an_error() -> None:
    limits = ServerLimits(stream_timeout=0.3)
    model = RecordingModel(README_TURN, hold_after=3)  # three events, then nothing until the limit
    async with ModelServer(model, limits=limits) as server, ModelClient(server.target) as client:
        seen, message = await drain(client.stream(readme_context()))
    assert message.stop_reason == pp.StopReason.ERROR
    assert message.error_message == "the stream ran longer than the server's limit of 0.3 s"
    assert [kind(event) for event in seen] == [
        "start",
        "text_start",
        "text_delta",
        "error",
    ]  # what came, then the error


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
        _, errors = server.communicate(timeout=60)
    assert TOKEN not in errors  # the token is never logged


async def _stalled_call(target: str, request: bytes) -> tuple[grpc.aio.Channel, grpc.aio.UnaryStreamCall[bytes, bytes]]:
    """A call whose client never reads: a small HTTP/2 window that nothing ever opens again."""
    options = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]
    channel = grpc.aio.insecure_channel(target, options=options)
    stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(STREAM_METHOD)
    call = stream(request)
    await call.initial_metadata()
    return channel, call


async def test_a_client_that_never_reads_loses_its_slot_after_the_timeout() -> None:
    limits = ServerLimits(max_concurrent_streams=3, stream_timeout=0.5)
    model = ScriptedModel([pp.assistant_message("z" * 200_000, timestamp=1)], delta_size=100)
    request = pp.encode(pp.StreamRequest(context=readme_context()))
    async with ModelServer(model, limits=limits) as server:
        held = held_when_timed_out(server)
        stalled = [await _stalled_call(server.target, request) for _ in range(3)]
        # The timeout (0.5 s) and its grace (1 s) free every slot, whatever the clients do.
        await eventually(lambda: len(held) == 3 and server.open_streams == 0, "the stalled calls lose their slots")
        assert held == [True] * 3  # each call held its slot until its time ran out: its client read nothing
        async with ModelClient(server.target) as client:
            seen, _ = await drain(client.stream(readme_context(), timeout=10))
        assert kind(seen[0]) == "start"  # served again, not refused
        for channel, call in stalled:
            call.cancel()
            await channel.close()


async def test_a_stalled_stream_holds_a_bounded_number_of_bytes() -> None:
    limits = ServerLimits(max_queued_bytes=256 * 1024)
    model = WatchedModel([pp.assistant_message("w" * 4_000_000, timestamp=1)], delta_size=64 * 1024)
    request = pp.encode(pp.StreamRequest(context=readme_context()))
    async with ModelServer(model, limits=limits) as server:
        channel, call = await _stalled_call(server.target, request)
        # Until the model waits for room (a full queue drained only to above half keeps it waiting).
        await eventually(lambda: model.streams and model.streams[0]._writers, "the model waits for the client")
        stream = model.streams[0]
        held = stream._queued_bytes
        produced = stream._accumulator.count
        call.cancel()
        await channel.close()
    assert held <= limits.max_queued_bytes
    assert produced < 20, produced  # of 63 deltas: the model waited for the client


async def test_contexts_above_the_count_limits_are_refused_before_they_are_checked() -> None:
    limits = ServerLimits(max_messages=100, max_blocks=150)
    user = pp.agent_message(pp.user_message("hi", timestamp=1))
    async with ModelServer(ScriptedModel.readme(), limits=limits) as server:
        too_many = pp.StreamRequest(context=pp.AgentContext(messages=[user] * 101))
        error = await raw_status(server.target, pp.encode(too_many))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error.details() == "the context has 101 messages, above this server's limit of 100"
        wide = pp.agent_message(pp.user_message(*["x"] * 200, timestamp=1))
        error = await raw_status(server.target, pp.encode(pp.StreamRequest(context=pp.AgentContext(messages=[wide]))))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error.details() == "the context has 200 content blocks and tools, above this server's limit of 150"
        # A system message's instructions, sections and tool changes count as blocks too.
        system = pp.SystemMessage(
            content=[pp.TextContent(text="x")] * 50,
            sections=[pp.SystemSection(name="s", text="x")] * 50,
            tools_added=[pp.Tool(name="t", parameters_json="{}")] * 50,
            tools_removed=[pp.ToolReference(name="t")] * 50,
        )
        request = pp.StreamRequest(context=pp.AgentContext(messages=[pp.AgentMessage(system=system)]))
        error = await raw_status(server.target, pp.encode(request))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error.details() == "the context has 200 content blocks and tools, above this server's limit of 150"


async def test_a_hostile_request_does_not_freeze_the_server() -> None:
    # Just under the 16 MiB default: 4.19 million empty user messages.
    inner = b"\x12\x02\x0a\x00" * 4_190_000
    request = b"\x12" + varint.encode(len(inner)) + inner
    async with ModelServer(ScriptedModel.readme()) as server:
        refused = asyncio.create_task(raw_status(server.target, request))
        health = [await health_status(server.target) for _ in range(5)]
        error = await refused
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert health == [health_pb2.HealthCheckResponse.SERVING] * 5


async def test_a_large_valid_request_is_checked_while_the_server_keeps_serving() -> None:
    text = "y" * 1500
    messages = [pp.agent_message(pp.user_message(text, timestamp=1)) for _ in range(10_000)]  # 15 MB
    request = pp.encode(pp.StreamRequest(context=pp.AgentContext(messages=messages)))
    assert len(request) > 15_000_000
    async with ModelServer(ScriptedModel.readme()) as server:
        call = asyncio.create_task(raw_call(server.target, request))
        health = [await health_status(server.target) for _ in range(10)]
        events = await call
    assert health == [health_pb2.HealthCheckResponse.SERVING] * 10
    assert len(events) > 2  # served: the scripted model answered


async def test_an_integer_too_long_for_a_double_is_invalid_argument_naming_the_field() -> None:
    call = pp.ToolCall(id="c", name="read", arguments_json='{"n":' + "7" * 5000 + "}")
    context = pp.AgentContext(messages=[pp.agent_message(pp.assistant_message(call, stop_reason=pp.StopReason.STOP))])
    async with ModelServer(ScriptedModel.readme()) as server:
        error = await raw_status(server.target, pp.encode(pp.StreamRequest(context=context)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (error.details() or "").startswith("context.messages[0].assistant.content[0].tool_call.arguments_json: ")
    assert (error.details() or "").endswith("[json.number]")


async def test_the_bearer_scheme_is_case_insensitive_and_one_header_only() -> None:
    request = pp.encode(pp.StreamRequest(context=readme_context()))
    async with ModelServer(ScriptedModel.readme(), token=TOKEN) as server:
        for scheme in ("bearer", "BEARER", "Bearer"):
            events = await raw_call(server.target, request, (("authorization", f"{scheme} {TOKEN}"),))
            assert len(events) > 2, scheme
        twice = (("authorization", f"Bearer {TOKEN}"), ("authorization", f"Bearer {TOKEN}"))
        error = await raw_status(server.target, request, twice)
        assert (error.code(), error.details()) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "more than one authorization header",
        )
        error = await raw_status(server.target, request, (("authorization", f"Basic {TOKEN}"),))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_health_watches_and_reflection_count_toward_the_stream_limit() -> None:
    limits = ServerLimits(max_concurrent_streams=2)
    async with ModelServer(ScriptedModel.readme(), limits=limits) as server:
        channel = grpc.aio.insecure_channel(server.target)
        watch = channel.unary_stream(
            "/grpc.health.v1.Health/Watch",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        watches = [watch(health_pb2.HealthCheckRequest()) for _ in range(2)]
        for call in watches:  # each holds a slot once it has answered
            reply = await call.read()
            assert isinstance(reply, health_pb2.HealthCheckResponse)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        watches.append(watch(health_pb2.HealthCheckRequest()))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await watches[2].read()
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        error = await raw_status(server.target, pp.encode(pp.StreamRequest(context=readme_context())))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        for call in watches:
            call.cancel()
        await channel.close()
        assert await health_status(server.target) == health_pb2.HealthCheckResponse.SERVING  # unary: no slot


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
async def test_reflection_v1_and_v1alpha_list_the_services_and_need_the_token(version: str) -> None:
    async with ModelServer(ScriptedModel.readme(), token=TOKEN) as server:
        services = await list_services(server.target, version, (("authorization", f"Bearer {TOKEN}"),))
        assert "pi.ai.v1.ModelService" in services
        assert f"grpc.reflection.{version}.ServerReflection" in services
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await list_services(server.target, version, ())
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_bad_tls_material_is_a_clear_error_naming_the_file(tmp_path: Path) -> None:
    mine, other = self_signed(), self_signed()
    (tmp_path / "cert.pem").write_bytes(mine.certificate_pem)
    (tmp_path / "other-key.pem").write_bytes(other.private_key_pem)
    (tmp_path / "garbage.pem").write_text("not a certificate\n")

    def serve(cert: str, key: str) -> subprocess.CompletedProcess[str]:
        flags = ["--port", "0", "--tls-cert", str(tmp_path / cert), "--tls-key", str(tmp_path / key)]
        command = [sys.executable, "-m", "pi_proto.cli", "serve", *flags]
        return subprocess.run(command, capture_output=True, text=True, timeout=30)

    mismatched = serve("cert.pem", "other-key.pem")
    assert mismatched.returncode == 2
    assert f"{tmp_path / 'other-key.pem'}: this private key does not match the certificate" in mismatched.stderr
    garbage = serve("garbage.pem", "other-key.pem")
    assert garbage.returncode == 2
    assert f"{tmp_path / 'garbage.pem'}: not a PEM certificate chain" in garbage.stderr
    assert "Traceback" not in mismatched.stderr + garbage.stderr


def test_a_token_without_tls_prints_a_warning(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN)
    with serve_process("--token-file", str(tmp_path / "token")) as (server, _):
        server.terminate()
        _, errors = server.communicate(timeout=60)
    assert "warning: --token-file without --tls-cert: the token travels in clear text" in errors
    assert TOKEN not in errors

"""gRPC reflection: every service the server lists can be described, by us, grpcurl and buf curl."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2

from .helpers import list_services, serve_process

BIN = Path(sys.executable).parent
# Built into the venv by `make pytest` (the Makefile pins its version).
GRPCURL = BIN / "grpcurl"
SERVICES = {
    "pi.ai.v1.ModelService",
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
}


def grpcurl(*args: str) -> subprocess.CompletedProcess[str]:
    """grpcurl, which must be there: a test that needs it fails rather than skips without it."""
    assert GRPCURL.exists(), f"{GRPCURL} is missing: `make pytest` builds it (make grpcurl)"
    return subprocess.run([str(GRPCURL), *args], capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def target() -> Iterator[str]:
    with serve_process() as (_, served):
        yield served


async def files_of(target: str, version: str, symbol: str) -> list[descriptor_pb2.FileDescriptorProto]:
    """The file that defines `symbol` and every file it imports, asked for as grpcurl asks."""
    async with grpc.aio.insecure_channel(target) as channel:
        info = channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        call = info(iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)]))
        replies = [reply async for reply in call]
    assert len(replies) == 1
    reply = replies[0]
    assert not reply.HasField("error_response"), (symbol, reply.error_response.error_message)
    return [
        descriptor_pb2.FileDescriptorProto.FromString(data)
        for data in reply.file_descriptor_response.file_descriptor_proto
    ]


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_every_listed_service_resolves_to_files_that_build_it(target: str, version: str) -> None:
    services = set(asyncio.run(list_services(target, version, ())))
    assert services == SERVICES
    for service in services:
        files = asyncio.run(files_of(target, version, service))
        pool = descriptor_pool.DescriptorPool()
        added: set[str] = set()
        while len(added) < len(files):  # imports first, in whatever order they came
            for file in files:
                if file.name not in added and set(file.dependency) <= added:
                    pool.Add(file)
                    added.add(file.name)
        methods = pool.FindServiceByName(service).methods
        assert methods, service


def test_reflection_v1_is_its_own_package_made_from_v1alphas_messages(target: str) -> None:
    (file,) = asyncio.run(files_of(target, "v1", "grpc.reflection.v1.ServerReflection"))
    assert (file.name, file.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    (method,) = file.service[0].method
    assert (method.input_type, method.output_type) == (
        ".grpc.reflection.v1.ServerReflectionRequest",
        ".grpc.reflection.v1.ServerReflectionResponse",
    )
    names = {field.type_name for message in file.message_type for field in message.field if field.type_name}
    assert names
    assert all(name.startswith(".grpc.reflection.v1.") for name in names), names
    assert not file.options.deprecated  # v1alpha is; v1 is what replaces it
    assert file.options.java_package == "io.grpc.reflection.v1"


def test_grpcurl_describes_every_service(target: str) -> None:
    described = grpcurl("-plaintext", target, "describe")
    assert described.returncode == 0, described.stderr
    for service in SERVICES:
        assert f"{service} is a service:" in described.stdout
    one = grpcurl("-plaintext", target, "describe", "grpc.reflection.v1.ServerReflectionRequest")
    assert one.returncode == 0, one.stderr
    assert "file_containing_symbol" in one.stdout


def test_buf_curl_lists_every_method(target: str) -> None:
    listed = subprocess.run(
        [
            str(BIN / "buf"),
            "curl",
            "--protocol",
            "grpc",
            "--http2-prior-knowledge",
            "--list-methods",
            f"http://{target}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert listed.returncode == 0, listed.stderr
    assert "Failure" not in listed.stdout + listed.stderr
    methods = set(listed.stdout.split())
    assert {
        "pi.ai.v1.ModelService/Stream",
        "grpc.health.v1.Health/Check",
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    } <= methods

"""What a server offers beside ModelService: gRPC health checks and reflection (v1 and v1alpha),
so that grpcurl, buf curl and load balancers work without our .proto files.

They come with the `cli` extra (`pip install 'pi-proto[cli]'`): the library alone does not need
grpcio-health-checking or grpcio-reflection.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection as grpc_reflection
from grpc_reflection.v1alpha import reflection_pb2

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
REFLECTION_V1_FILE = "grpc/reflection/v1/reflection.proto"


class Health:
    """The standard health service of one server, reporting `service` and the server as a whole."""

    def __init__(self, server: grpc.aio.Server, service: str) -> None:
        self._servicer = health.aio.HealthServicer()
        self._service = service
        health_pb2_grpc.add_HealthServicer_to_server(self._servicer, server)

    async def serving(self) -> None:
        for name in ("", self._service):
            await self._servicer.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def shutting_down(self) -> None:
        await self._servicer.enter_graceful_shutdown()


def add_reflection(server: grpc.aio.Server, service: str) -> None:
    """Serve reflection, v1alpha and v1, listing `service`, health and reflection itself."""
    add_reflection_v1_file(descriptor_pool.Default())
    services = (service, health.SERVICE_NAME, grpc_reflection.SERVICE_NAME, REFLECTION_V1)
    grpc_reflection.enable_server_reflection(services, server)
    server.add_generic_rpc_handlers((_reflection_v1(services),))


def _reflection_v1(services: tuple[str, ...]) -> grpc.GenericRpcHandler:
    """grpc.reflection.v1, served by the v1alpha servicer: the two have the same messages on the wire."""
    servicer = grpc_reflection.aio.ReflectionServicer(services)
    handler: grpc.RpcMethodHandler[Any, Any] = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    return grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": handler})


def add_reflection_v1_file(pool: descriptor_pool.DescriptorPool) -> None:
    """Put grpc.reflection.v1's file in `pool`, unless it is there, so that the v1 service we list
    can be described too: grpcio-reflection ships only v1alpha's descriptor. v1 is v1alpha's
    file under another package (the same messages, fields and numbers), so it is made from
    v1alpha's descriptor, renamed, rather than kept as a copy of its .proto."""
    try:
        pool.FindServiceByName(REFLECTION_V1)
        return
    except KeyError:
        pass
    alpha = reflection_pb2.DESCRIPTOR
    v1 = descriptor_pb2.FileDescriptorProto()
    alpha.CopyToProto(v1)
    old, new = f".{alpha.package}.", ".grpc.reflection.v1."

    def renamed(name: str) -> str:
        return new + name.removeprefix(old) if name.startswith(old) else name

    v1.name = REFLECTION_V1_FILE
    v1.package = new.strip(".")
    for message in _messages(v1.message_type):
        for field in message.field:
            if field.HasField("type_name"):  # only messages and enums: setting it, even to "", marks it set
                field.type_name = renamed(field.type_name)
    for service in v1.service:
        for method in service.method:
            method.input_type = renamed(method.input_type)
            method.output_type = renamed(method.output_type)
    # v1's own options: v1alpha's are deprecated, and name v1alpha's Java and Go packages.
    v1.options.ClearField("deprecated")
    v1.options.java_package = "io.grpc.reflection.v1"
    v1.options.go_package = "google.golang.org/grpc/reflection/grpc_reflection_v1"
    pool.AddSerializedFile(v1.SerializeToString())


def _messages(messages: Iterable[descriptor_pb2.DescriptorProto]) -> Iterator[descriptor_pb2.DescriptorProto]:
    """Every message of `messages` and of the messages nested in them."""
    for message in messages:
        yield message
        yield from _messages(message.nested_type)

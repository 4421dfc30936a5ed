"""What a server offers beside ModelService: gRPC health checks and reflection (v1 and v1alpha),
so that grpcurl, buf curl and load balancers work without our .proto files.

They come with the `cli` extra (`pip install 'pi-proto[cli]'`): the library alone does not need
grpcio-health-checking or grpcio-reflection.
"""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection as grpc_reflection
from grpc_reflection.v1alpha import reflection_pb2

REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


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

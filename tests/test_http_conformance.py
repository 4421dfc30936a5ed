"""The client cases of the conformance corpus over Connect and gRPC-web: the reference server's
HTTP side (pi_proto.web.HttpConformanceServer) and our HTTP client, on connectrpc's own async client,
compared with each case's outcome by the Python runner's code (tests/conformance/run.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import pi_proto as pp
from pi_proto import conformance, wire
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.web import HttpConformanceServer, HttpModelClient

from . import helpers
from .conformance import generate, run

CLIENT_CASES = [case for case in conformance.load_cases(generate.HERE) if case.WhichOneof("kind") == "client"]
WAYS = [("connect", True), ("connect", False), ("grpc-web", True), ("grpc-web", False)]


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async with HttpConformanceServer(CLIENT_CASES) as reference:
        yield reference.url


@pytest.mark.parametrize(("protocol", "batched"), WAYS, ids=[f"{p}{'-batched' if b else ''}" for p, b in WAYS])
@pytest.mark.parametrize("case", CLIENT_CASES, ids=lambda case: case.name)
async def test_client_case(case: pb.Case, protocol: str, batched: bool, server: str) -> None:
    options = run.client_options(case.client)
    async with HttpModelClient(server, protocol=protocol, batched=batched, **options) as client:
        if batched or not any(action.HasField("batch") for action in case.client.server):
            await run.run_client_with(client, case.client, case.name)
            return
        # A case that sends StreamBatched messages as they are cannot be played on Stream: the
        # reference server says so with FAILED_PRECONDITION, which the client turns into its error.
        request = conformance.client_request(case.client)
        context = wire.from_upb(request.context, pp.AgentContext)
        events = client.stream(context, metadata=((conformance.CASE_HEADER, case.name),))
        message = await events.result()
    assert message.stop_reason == pp.StopReason.ERROR
    assert events.failure is not None
    assert events.failure.status_code == "FAILED_PRECONDITION"


async def test_a_changed_expectation_fails(server: str) -> None:
    case = next(case for case in CLIENT_CASES if case.name == "client/status-mid-stream")
    case.client.expect.status_code = "UNAVAILABLE"
    async with HttpModelClient(server) as client:
        with pytest.raises(run.Mismatch, match="expected status UNAVAILABLE"):
            await run.run_client_with(client, case.client, case.name)


async def test_an_unknown_case_is_not_found(server: str) -> None:
    async with HttpModelClient(server) as client:
        events = client.stream(helpers.readme_context(), metadata={conformance.CASE_HEADER: "client/no-such-case"})
        _, message = await helpers.drain(events)
    assert message.stop_reason == pp.StopReason.ERROR
    assert events.failure is not None
    assert events.failure.status_code == "NOT_FOUND"
    assert message.error_message == "no client case named 'client/no-such-case' in this corpus"

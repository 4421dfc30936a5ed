"""The client cases of the conformance corpus over Connect and gRPC-web, batched: the reference
server's HTTP side (tests/conformance/reference_http.py) and our HTTP client on StreamBatched,
compared with each case's outcome by the harness (tests/conformance/harness.py). The harness's own
rows `python/connect` and `python/grpc-web` (`make conformance`) run the same cases on Stream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import pi_proto as pp
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES
from pi_proto.web import HttpModelClient
from pi_proto.wire import codec as wire

from . import helpers
from .conformance import corpus, executor, generate, harness
from .conformance import reference as conformance
from .conformance.reference_http import HttpConformanceServer

CLIENT_CASES = [case for case in corpus.load_cases(generate.HERE) if case.WhichOneof("kind") == "client"]
WAYS = [("connect", True), ("grpc-web", True)]


@pytest.fixture
async def server() -> AsyncIterator[str]:
    async with HttpConformanceServer(CLIENT_CASES) as reference:
        yield reference.url


@pytest.mark.parametrize(("protocol", "batched"), WAYS, ids=[f"{p}{'-batched' if b else ''}" for p, b in WAYS])
@pytest.mark.parametrize("case", CLIENT_CASES, ids=lambda case: case.name)
async def test_client_case(case: pb.Case, protocol: str, batched: bool, server: str) -> None:
    limit = case.client.client.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES
    request = harness.case_request(case, {"http": server}, protocol)
    async with HttpModelClient(server, protocol=protocol, batched=batched, max_message_bytes=limit) as client:
        if batched or not any(action.HasField("batch") for action in case.client.server):
            outcome = await executor.client_with(client, request.case.client, case.name)
            assert harness.compare(case, pb.CaseResult(name=case.name, client=outcome)) is None
            return
        # A case that sends StreamBatched messages as they are cannot be played on Stream: the
        # reference server says so with FAILED_PRECONDITION, which the client turns into its error.
        context = wire.from_upb(request.case.client.request.context, pp.AgentContext)
        events = client.stream(context, metadata=((conformance.CASE_HEADER, case.name),))
        message = await events.result()
    assert message.stop_reason == pp.StopReason.ERROR
    assert events.failure is not None
    assert events.failure.status_code == "FAILED_PRECONDITION"


async def test_a_changed_expectation_fails(server: str) -> None:
    case = next(case for case in CLIENT_CASES if case.name == "client/status-mid-stream")
    request = harness.case_request(case, {"http": server}, "connect")
    case.client.expect.status_code = "UNAVAILABLE"
    async with HttpModelClient(server) as client:
        outcome = await executor.client_with(client, request.case.client, case.name)
    problem = harness.compare(case, pb.CaseResult(name=case.name, client=outcome))
    assert problem is not None
    assert "expected status UNAVAILABLE" in problem


async def test_an_unknown_case_is_not_found(server: str) -> None:
    async with HttpModelClient(server) as client:
        events = client.stream(helpers.readme_context(), metadata={conformance.CASE_HEADER: "client/no-such-case"})
        _, message = await helpers.drain(events)
    assert message.stop_reason == pp.StopReason.ERROR
    assert events.failure is not None
    assert events.failure.status_code == "NOT_FOUND"
    assert message.error_message == "no client case named 'client/no-such-case' in this corpus"

"""The Python executor of the conformance corpus: runs each case it is sent on pi_proto's public API.

    python -m tests.conformance.executor < requests

Reads size-delimited pi.conformance.v1.CaseRequest messages from stdin and writes one
size-delimited CaseResult for each to stdout (conformance.proto says what each result holds).
It compares nothing: the harness (harness.py) does. `execute` is also what the Python tests call
in process.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from google.protobuf import json_format

import pi_proto as pp
from pi_proto._gen.pb2.pi.ai.v1 import context_pb2, event_pb2, message_pb2, transcript_pb2
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto._gen.types.pi.ai import v1 as types
from pi_proto.stream.accumulator import DEFAULT_MAX_MESSAGE_BYTES
from pi_proto.transcripts.pi_json import context_from_pi, context_to_pi, event_from_pi, event_to_pi
from pi_proto.wire.varint import read_delimited, write_delimited

CASE_HEADER = "pi-conformance-case"


def wire(case: pb.WireCase) -> pb.WireResult:
    package, _, name = case.type.rpartition(".")
    if package != "pi.ai.v1":
        raise ValueError(f"no pi.ai.v1 type {case.type}")
    cls = getattr(types, name)
    message = pp.decode(cls, case.binary)
    parsed = pp.decode_json(cls, json_format.MessageToJson(case.json))
    return pb.WireResult(binary=pp.encode(message), json=pp.to_json(message), json_binary=pp.encode(parsed))


def validate(case: pb.ValidateCase) -> pb.ValidateResult:
    member = case.WhichOneof("input")
    found = pp.violations(getattr(case, member))
    return pb.ValidateResult(violations=[pb.Violation(field_path=v.field_path, rule_id=v.rule_id) for v in found])


def stream(case: pb.StreamCase) -> pb.StreamResult:
    stream = pp.AssistantMessageEventStream(max_message_bytes=case.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES)
    result = pb.StreamResult()
    for index, event in enumerate(case.events):
        if stream.done:
            break
        try:
            stream.push(_public(event))
        except pp.StreamProtocolError as error:
            result.failure.CopyFrom(_failure(pp.StreamFailure.of_rule(error)))
            return result
        delivered = stream.take()
        assert delivered.partial is not None, f"event {index} was delivered without its partial"
        result.partials.add().CopyFrom(_upb(delivered.partial))
    if stream.done:
        result.result.CopyFrom(_upb(stream.partial))
    return result


async def client(case: pb.ClientCase, name: str, server: str, protocol: str) -> pb.ClientOutcome:
    options: dict[str, Any] = {}
    if case.client.max_message_bytes:
        options["max_message_bytes"] = case.client.max_message_bytes
    if protocol in ("", "grpc"):
        model_client: Any = pp.ModelClient(server, **options)
    else:
        from pi_proto.web import HttpModelClient

        model_client = HttpModelClient(server, protocol=protocol, **options)
    async with model_client:
        return await client_with(model_client, case, name)


async def client_with(model_client: Any, case: pb.ClientCase, name: str) -> pb.ClientOutcome:
    """Run a client case with `model_client` (ModelClient, or any client whose stream() takes its
    arguments, such as pi_proto.web.HttpModelClient) and say what it yielded."""
    settings = case.client
    request = _public(case.request)
    events = model_client.stream(
        request.context,
        model=request.model,
        options=request.options,
        coalesce_deltas=request.coalesce_deltas,
        timeout=settings.deadline_ms / 1000 if settings.deadline_ms else None,
        metadata=((CASE_HEADER, name),),
    )
    canceller = None
    if settings.cancel_after_ms:
        canceller = asyncio.get_running_loop().call_later(settings.cancel_after_ms / 1000, events.cancel)
    count, last = 0, pp.ModelEvent()
    async for event in events:
        count, last = count + 1, event
        if count == settings.cancel_after_events:
            events.cancel()
        if count == settings.close_after_events:
            await model_client.close()
    if canceller is not None:
        canceller.cancel()
    message = await events.result()
    _, body = pp.event_kind(last)
    outcome = pb.ClientOutcome(reason=message_pb2.StopReason.Name(body.reason if body is not None else 0), events=count)
    failure = events.failure
    if failure is not None and failure.rule_id is not None:
        outcome.rule.CopyFrom(_failure(failure))
    elif failure is not None and failure.status_code is not None:
        outcome.status_code = failure.status_code
    outcome.result.CopyFrom(_upb(message))
    return outcome


def pi_json(case: pb.PiJsonCase) -> pb.PiJsonResult:
    want = case.WhichOneof("expect")
    try:
        if want == "session":
            warnings: list[pp.SessionWarning] = []
            entries = pp.session_from_pi(case.text, warnings)
            session = pb.PiSession(entries=map(_upb, entries), warned_lines=[warning.line for warning in warnings])
            return pb.PiJsonResult(session=session, written=pp.session_to_pi(entries))
        text = pp.load_json(case.text)
        if want == "event":
            event = event_from_pi(text, "")
            # An event without its partial is pi 1.6's delta-only form, written back in it.
            written = pp.dump_json(event_to_pi(event, delta_only=event.partial is None))
            return pb.PiJsonResult(event=event_pb2.ModelEvent.FromString(pp.encode(event)), written=written)
        if want == "context":
            context = context_from_pi(text, "")
            return pb.PiJsonResult(context=_upb(context), written=pp.dump_json(context_to_pi(context)))
        entry = pp.entry_from_pi(text, "")
        result = pb.PiJsonResult(entry=_upb(entry), written=pp.dump_json(pp.entry_to_pi(entry)))
        if case.HasField("edited"):
            edited = pp.decode(pp.TranscriptEntry, case.edited.SerializeToString())
            result.edited_written = pp.dump_json(pp.entry_to_pi(edited))
        return result
    except pp.PiJsonError as error:
        return pb.PiJsonResult(error_path=error.path)


def cost(case: pb.CostCase) -> message_pb2.Cost:
    return message_pb2.Cost.FromString(pp.encode(pp.calculate_cost(_public(case.rates), _public(case.usage))))


def partial_json(case: pb.PartialJsonCase) -> pb.PartialJsonResult:
    # Through the public path: a tool call streamed with the text as one delta, then one character at a time.
    completed = []
    for deltas in ([case.text], list(case.text)):
        accumulator = pp.Accumulator()
        accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage())))
        accumulator.apply(pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="c", name="n")))
        for delta in deltas:
            accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta=delta)))
        call = accumulator.partial.content[0].tool_call
        assert call is not None
        completed.append(call.arguments_json)
    return pb.PartialJsonResult(whole=completed[0], by_character=completed[1])


async def execute(request: pb.CaseRequest) -> pb.CaseResult:
    """What pi_proto does with one case; `error` when it raised."""
    case = request.case
    kind = case.WhichOneof("kind")
    result = pb.CaseResult(name=case.name)
    try:
        if kind == "client":
            outcome = await asyncio.wait_for(client(case.client, case.name, request.server, request.protocol), 60)
            result.client.CopyFrom(outcome)
        elif kind is not None:
            run: dict[str, Callable[[Any], Any]] = {
                "wire": wire, "validate": validate, "stream": stream, "pi_json": pi_json, "cost": cost,
                "partial_json": partial_json,
            }  # fmt: skip
            getattr(result, kind).CopyFrom(run[kind](getattr(case, kind)))
        else:
            result.error = "the case has no kind"
    except Exception as error:  # the runtime raised where the case expects an outcome
        result.error = f"{type(error).__name__}: {error}"
    return result


def _failure(failure: pp.StreamFailure) -> pb.StreamFailure:
    violations = [pb.Violation(field_path=v.field_path, rule_id=v.rule_id) for v in failure.violations]
    return pb.StreamFailure(event_index=failure.event_index or 0, rule_id=failure.rule_id or "", violations=violations)


_UPB: dict[type[Any], Any] = {
    pp.AssistantMessage: message_pb2.AssistantMessage,
    pp.Cost: message_pb2.Cost,
    pp.AgentContext: context_pb2.AgentContext,
    pp.TranscriptEntry: transcript_pb2.TranscriptEntry,
}


def _upb(message: Any) -> Any:
    return _UPB[type(message)].FromString(pp.encode(message))


def _public(message: Any) -> Any:
    """The pi_proto message of an upb message of pi.ai.v1."""
    cls = getattr(types, message.DESCRIPTOR.name)
    return pp.decode(cls, message.SerializeToString())


async def _main(stdin: BinaryIO, stdout: BinaryIO) -> None:
    for data in read_delimited(stdin):
        result = await execute(pb.CaseRequest.FromString(data))
        write_delimited(stdout, result.SerializeToString())
        stdout.flush()


if __name__ == "__main__":
    asyncio.run(_main(sys.stdin.buffer, sys.stdout.buffer))

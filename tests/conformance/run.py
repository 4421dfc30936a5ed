"""The Python runner of the conformance corpus: runs every case against pi_proto and reports.

    python -m tests.conformance.run --corpus tests/conformance --known-failures FILE --server HOST:PORT

Prints one line per case (PASS, FAIL, KNOWN, FIXED or SKIP) and then `python: N passed, ...`;
exits 1 when a case fails or a known failure passes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message as UpbMessage

import pi_proto as pp
from pi_proto import conformance, wire
from pi_proto._gen.pb2.pi.ai.v1 import message_pb2
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto._gen.types.pi.ai import v1 as types
from pi_proto.accumulator import StreamProtocolError
from pi_proto.events import event_kind
from pi_proto.pi_json import PiJsonError, context_from_pi, context_to_pi, entry_from_pi, entry_to_pi
from pi_proto.stream import AssistantMessageEventStream, StreamFailure
from pi_proto.validate import Violation, violations

RUNTIME = "python"


class Mismatch(Exception):
    """A case whose outcome differs from what it expects."""


# --- one function per case kind; each raises Mismatch ----------------------------------------------


def run_wire(case: pb.WireCase) -> None:
    cls = _public_class(case.type)
    message = pp.decode(cls, case.binary)
    if pp.encode(message) != case.binary:
        raise Mismatch("re-encoding gives other bytes")
    expected = json_format.MessageToDict(case.json)
    if json.loads(pp.to_json(message)) != expected:
        raise Mismatch(f"ProtoJSON differs: {pp.to_json(message)}")
    if pp.encode(pp.decode_json(cls, json.dumps(expected))) != (case.json_binary or case.binary):
        raise Mismatch("parsing the ProtoJSON gives other bytes")


def run_validate(case: pb.ValidateCase) -> None:
    member = case.WhichOneof("input")
    found = violations(getattr(case, member))
    _same_violations(found, case.violations)


def run_stream(case: pb.StreamCase) -> None:
    limit = case.max_message_bytes or pp.accumulator.DEFAULT_MAX_MESSAGE_BYTES
    stream = AssistantMessageEventStream(max_message_bytes=limit)
    partials: list[bytes] = []
    for index, event in enumerate(case.events):
        if stream.done:
            break
        try:
            stream.push(wire.from_upb(event, pp.ModelEvent))
        except StreamProtocolError as error:
            _expect_failure(case, index, StreamFailure.of_rule(error))
            return
        delivered = stream.take()
        assert delivered.partial is not None
        partials.append(pp.encode(delivered.partial))
    if case.WhichOneof("expect") != "success":
        raise Mismatch(f"expected rule {case.failure.rule_id!r} at event {case.failure.event_index}; every event fit")
    expected = [partial.SerializeToString() for partial in case.success.partials]
    for index, (got, want) in enumerate(zip(partials, expected, strict=False)):
        if _message(got) != _message(want):
            raise Mismatch(f"the partial after event {index} differs: {pp.to_json(_public(got))}")
    if len(partials) != len(expected):
        raise Mismatch(f"{len(partials)} events delivered, the case expects {len(expected)}")
    result = _upb(pp.encode(stream.partial)) if stream.done else None
    if case.success.HasField("result") != (result is not None) or (
        result is not None and result != case.success.result
    ):
        raise Mismatch("the result differs" if result is not None else "the stream has no result")


async def run_client(case: pb.ClientCase, name: str, target: str) -> None:
    async with pp.ModelClient(target, **client_options(case)) as client:
        await run_client_with(client, case, name)


def client_options(case: pb.ClientCase) -> dict[str, Any]:
    """The options a case sets on the client it runs with."""
    options: dict[str, Any] = {}
    if case.client.max_message_bytes:
        options["max_message_bytes"] = case.client.max_message_bytes
    return options


async def run_client_with(client: Any, case: pb.ClientCase, name: str) -> None:
    """Run a client case with `client` (ModelClient, or any client whose stream() takes its
    arguments, such as pi_proto.web.HttpModelClient) and compare the outcome with the case's."""
    settings = case.client
    request = wire.from_upb(conformance.client_request(case), pp.StreamRequest)
    assert request.context is not None
    events = client.stream(
        request.context,
        model=request.model,
        options=request.options,
        coalesce_deltas=request.coalesce_deltas,
        timeout=settings.deadline_ms / 1000 if settings.deadline_ms else None,
        metadata=((conformance.CASE_HEADER, name),),
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
            await client.close()
    if canceller is not None:
        canceller.cancel()
    result = await events.result()
    expect = case.expect
    kind, body = event_kind(last)
    if kind not in ("done", "error") or body.reason != expect.reason:
        raise Mismatch(f"ended with {kind} {body.reason.name if body else ''}, expected {expect.reason}")
    if count != expect.events:
        raise Mismatch(f"{count} events, expected {expect.events}")
    failure = events.failure
    want = expect.WhichOneof("failure")
    if want is None and failure is not None:
        raise Mismatch(f"the client failed the stream itself: {failure.detail}")
    if want == "status_code" and (failure is None or failure.status_code != expect.status_code):
        raise Mismatch(f"expected status {expect.status_code}, got {failure}")
    if want == "rule":
        if failure is None or failure.rule_id is None:
            raise Mismatch(f"expected rule {expect.rule.rule_id!r}, got {failure}")
        _same_failure(expect.rule, failure)
    if expect.HasField("result"):
        _same_result(result, expect.result)


def run_pi_json(case: pb.PiJsonCase) -> None:
    want = case.WhichOneof("expect")
    read: Callable[[Any, str], Any] = context_from_pi if want == "context" else entry_from_pi
    write: Callable[[Any], Any] = context_to_pi if want == "context" else entry_to_pi
    try:
        value = read(json.loads(case.text), "")
    except PiJsonError as error:
        if want != "error_path":
            raise Mismatch(f"cannot read it: {error}") from None
        if error.path != case.error_path:
            raise Mismatch(f"error at {error.path!r}, expected {case.error_path!r}") from None
        return
    if want == "error_path":
        raise Mismatch(f"read it, expected an error at {case.error_path!r}")
    if wire.to_upb(value) != getattr(case, want):
        raise Mismatch(f"reads as {pp.to_json(value)}")
    written = pp.dump_json(write(value))
    if written != (case.written or case.text):
        raise Mismatch(f"writes back as {written}")


def run_cost(case: pb.CostCase) -> None:
    rates = wire.from_upb(case.rates, pp.ModelCost)
    cost = pp.calculate_cost(rates, wire.from_upb(case.usage, pp.Usage))
    want = wire.from_upb(case.cost, pp.Cost)
    # total_from_provider with its presence too: pi sets it false on every cost it computes.
    parts = ("input", "output", "cache_read", "cache_write", "total", "total_from_provider")
    if [getattr(cost, part) for part in parts] != [getattr(want, part) for part in parts]:
        raise Mismatch(f"costs {pp.to_json(cost)}")


def run_partial_json(case: pb.PartialJsonCase) -> None:
    # Through the public path: a tool call streamed with the text as one delta, then one character at a time.
    for deltas in ([case.text], list(case.text)):
        accumulator = pp.Accumulator()
        accumulator.apply(pp.ModelEvent(start=pp.StartEvent(header=pp.AssistantMessage())))
        accumulator.apply(pp.ModelEvent(toolcall_start=pp.ToolCallStartEvent(id="c", name="n")))
        for delta in deltas:
            accumulator.apply(pp.ModelEvent(toolcall_delta=pp.ToolCallDeltaEvent(delta=delta)))
        call = accumulator.partial.content[0].tool_call
        assert call is not None
        if call.arguments_json != case.completed:
            raise Mismatch(f"completes as {call.arguments_json!r} from {len(deltas)} deltas")


# --- comparisons ----------------------------------------------------------------------------------


def _same_violations(found: list[Violation], expected: Any) -> None:
    got = sorted((item.field_path, item.rule_id) for item in found)
    want = sorted((item.field_path, item.rule_id) for item in expected)
    if got != want:
        raise Mismatch(f"violations {got}, expected {want}")


def _expect_failure(case: pb.StreamCase, index: int, failure: StreamFailure) -> None:
    if case.WhichOneof("expect") != "failure":
        raise Mismatch(f"event {index} broke rule {failure.rule_id!r}: {failure.detail}")
    _same_failure(case.failure, failure)


def _same_failure(expected: pb.StreamFailure, failure: StreamFailure) -> None:
    if (failure.event_index, failure.rule_id) != (expected.event_index, expected.rule_id):
        raise Mismatch(
            f"rule {failure.rule_id!r} at event {failure.event_index}, "
            f"expected {expected.rule_id!r} at {expected.event_index} ({failure.detail})"
        )
    _same_violations(list(failure.violations), expected.violations)


def _same_result(result: pp.AssistantMessage, expected: message_pb2.AssistantMessage) -> None:
    got = _upb(pp.encode(result))
    if result.stop_reason in (pp.StopReason.ERROR, pp.StopReason.ABORTED) and not got.error_message:
        raise Mismatch("a failed message without an error_message")
    got.ClearField("error_message")
    want = message_pb2.AssistantMessage()
    want.CopyFrom(expected)
    want.ClearField("error_message")
    if got != want:
        raise Mismatch(f"the result differs: {pp.to_json(result)}")


def _public_class(type_name: str) -> type[Any]:
    package, _, name = type_name.rpartition(".")
    if package != "pi.ai.v1":
        raise Mismatch(f"no pi.ai.v1 type {type_name}")
    found: type[Any] = getattr(types, name)
    return found


def _upb(data: bytes) -> message_pb2.AssistantMessage:
    return message_pb2.AssistantMessage.FromString(data)


def _message(data: bytes) -> UpbMessage:
    return _upb(data)


def _public(data: bytes) -> pp.AssistantMessage:
    return pp.decode(pp.AssistantMessage, data)


# --- the run --------------------------------------------------------------------------------------


@dataclass
class Summary:
    """Counts and the lines to print."""

    passed: int = 0
    failed: int = 0
    known: int = 0
    skipped: int = 0
    lines: list[str] = field(default_factory=list)

    def line(self) -> str:
        counts = f"{self.passed} passed, {self.failed} failed, {self.known} known failures, {self.skipped} skipped"
        return f"{RUNTIME}: {counts}"


async def run(corpus: Path, known_failures: Path | None, target: str | None) -> Summary:
    known = conformance.read_known_failures(known_failures) if known_failures else pb.KnownFailures()
    expected_to_fail = {item.case: item.reason for item in known.failures}
    unsupported = {item.kind: item.reason for item in known.unsupported}
    summary = Summary()
    for case in conformance.load_cases(corpus):
        kind = case.WhichOneof("kind")
        if kind in unsupported or (kind == "client" and target is None):
            summary.skipped += 1
            summary.lines.append(f"SKIP {case.name}: {unsupported.get(kind, 'no --server given')}")
            continue
        problem = await _outcome(case, target)
        if case.name in expected_to_fail:
            if problem is None:
                summary.failed += 1
                summary.lines.append(f"FIXED {case.name}: passes now; remove it from the known failures")
            else:
                summary.known += 1
                summary.lines.append(f"KNOWN {case.name}: {problem}")
        elif problem is None:
            summary.passed += 1
            summary.lines.append(f"PASS {case.name}")
        else:
            summary.failed += 1
            summary.lines.append(f"FAIL {case.name}: {problem}")
    return summary


async def _outcome(case: pb.Case, target: str | None) -> str | None:
    kind = case.WhichOneof("kind")
    body = getattr(case, kind)
    checks: dict[str, Callable[[], Coroutine[Any, Any, None] | None]] = {
        "wire": lambda: run_wire(body),
        "validate": lambda: run_validate(body),
        "stream": lambda: run_stream(body),
        "client": lambda: run_client(body, case.name, target or ""),
        "pi_json": lambda: run_pi_json(body),
        "cost": lambda: run_cost(body),
        "partial_json": lambda: run_partial_json(body),
    }
    try:
        outcome = checks[kind]()
        if outcome is not None:
            await asyncio.wait_for(outcome, 30)
    except Mismatch as error:
        return str(error)
    except Exception as error:  # the runtime raised where the case expects an outcome
        return f"raised {type(error).__name__}: {error}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True, help="the folder of corpus files")
    parser.add_argument("--known-failures", type=Path, help="this runtime's known failures (ProtoJSON)")
    parser.add_argument("--server", help="the reference server's host:port, for the client cases")
    parser.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    args = parser.parse_args(argv)
    summary = asyncio.run(run(args.corpus, args.known_failures, args.server))
    for line in summary.lines:
        if not args.quiet or not line.startswith(("PASS", "SKIP")):
            print(line)
    print(summary.line())
    return 1 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())

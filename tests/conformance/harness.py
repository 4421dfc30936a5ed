"""The conformance harness: runs the corpus through every runtime's executor and compares outcomes.

    python -m tests.conformance.harness [--corpus DIR] [--runtime NAME[/PROTOCOL] ...] [--no-mutations] [-v]

The harness owns the corpus, the comparison, the known failures and the report; an executor
only runs cases on its runtime's public API (conformance.proto: CaseRequest, CaseResult). It
starts the reference server for the client cases, sends each runtime its cases through one
executor process, and prints one line per runtime (per protocol, for the HTTP ones) with its
counts. Then it sends every case again with its expected outcome changed (mutate.py) and checks
that none passes: an outcome the harness did not compare would. Exits 1 when anything fails.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import queue
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from google.protobuf import json_format
from google.protobuf.message import Message

from pi_proto._gen.pb2.pi.ai.v1 import message_pb2
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.wire.varint import read_delimited, write_delimited

from . import corpus, mutate

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
KNOWN = HERE / "known_failures"
# Every runtime, and the folder whose Makefile builds its executor (Python's runs from here).
RUNTIMES = {"python": "", "typescript": "typescript", "go": "go", "rust": "rust", "java": "java"}
# What `make conformance` runs: every runtime over gRPC, and the clients that speak the HTTP
# protocols over those too (only client cases differ by protocol).
MATRIX = [*RUNTIMES, "python/connect", "python/grpc-web", "typescript/connect", "typescript/grpc-web"]
CASE_SECONDS = 90  # the longest one case may take (client cases end within their own 60 s)
RUNTIMES_AT_ONCE = 3
BUILD_ORDER = ["rust", "java", "go", "typescript", "python"]  # the longest to build and run first
FAILED_STATUS = (message_pb2.STOP_REASON_ERROR, message_pb2.STOP_REASON_ABORTED)


# --- comparison: a problem in words, or None when the result is the case's outcome -----------------


def compare(case: pb.Case, result: pb.CaseResult) -> str | None:
    """What differs between the case's expected outcome and the executor's result."""
    kind = case.WhichOneof("kind")
    got = result.WhichOneof("result")
    if got == "error":
        return f"raised: {result.error}"
    if got != kind:
        return f"the executor answered a {kind} case with {got or 'nothing'}"
    check: dict[str, Callable[[Any, Any], str | None]] = {
        "wire": _wire, "validate": _validate, "stream": _stream, "client": _client, "pi_json": _pi_json,
        "cost": _cost, "partial_json": _partial_json,
    }  # fmt: skip
    return check[kind](getattr(case, kind), getattr(result, kind))


def _wire(case: pb.WireCase, got: pb.WireResult) -> str | None:
    if got.binary != case.binary:
        return "re-encoding gives other bytes"
    try:
        printed = json.loads(got.json)
    except ValueError as error:
        return f"the ProtoJSON printed is not JSON ({error}): {got.json[:200]}"
    if printed != json_format.MessageToDict(case.json):
        return f"ProtoJSON differs: {got.json[:2000]}"
    if got.json_binary != (case.json_binary or case.binary):
        return "parsing the ProtoJSON gives other bytes"
    return None


def _violations(got: Sequence[pb.Violation], want: Sequence[pb.Violation]) -> str | None:
    found = sorted((item.field_path, item.rule_id) for item in got)
    expected = sorted((item.field_path, item.rule_id) for item in want)
    return None if found == expected else f"violations {found}, expected {expected}"


def _validate(case: pb.ValidateCase, got: pb.ValidateResult) -> str | None:
    return _violations(got.violations, case.violations)


def _failure(want: pb.StreamFailure, got: pb.StreamFailure) -> str | None:
    if (got.event_index, got.rule_id) != (want.event_index, want.rule_id):
        return f"rule {got.rule_id!r} at event {got.event_index}, expected {want.rule_id!r} at {want.event_index}"
    return _violations(got.violations, want.violations)


def _stream(case: pb.StreamCase, got: pb.StreamResult) -> str | None:
    if case.WhichOneof("expect") == "failure":
        if not got.HasField("failure"):
            return f"expected rule {case.failure.rule_id!r} at event {case.failure.event_index}; every event fit"
        return _failure(case.failure, got.failure)
    if got.HasField("failure"):
        return f"event {got.failure.event_index} broke rule {got.failure.rule_id!r}"
    want = case.success
    for index, (partial, expected) in enumerate(zip(got.partials, want.partials, strict=False)):
        if partial != expected:
            return f"the partial after event {index} differs: {_json(partial)}"
    if len(got.partials) != len(want.partials):
        return f"{len(got.partials)} events delivered, the case expects {len(want.partials)}"
    if got.HasField("result") != want.HasField("result"):
        return "the stream has no result" if want.HasField("result") else "the stream has a result"
    return None if got.result == want.result else f"the result differs: {_json(got.result)}"


def _client(case: pb.ClientCase, got: pb.ClientOutcome) -> str | None:
    want = case.expect
    if got.reason != want.reason:
        return f"ended with {_reason(got.reason)}, expected {_reason(want.reason)}"
    if got.events != want.events:
        return f"{got.events} events, expected {want.events}"
    failure, expected = got.WhichOneof("failure"), want.WhichOneof("failure")
    if failure != expected:
        return f"the client's own failure is {_json(got) if failure else 'none'}, expected {expected or 'none'}"
    if expected == "status_code" and got.status_code != want.status_code:
        return f"expected status {want.status_code}, got {got.status_code}"
    if expected == "rule" and (problem := _failure(want.rule, got.rule)):
        return problem
    if not want.HasField("result"):
        return None
    result = copy.deepcopy(got.result)
    if result.stop_reason in FAILED_STATUS and not result.error_message:
        return "a failed message without an error_message"
    result.ClearField("error_message")
    expected_result = copy.deepcopy(want.result)
    expected_result.ClearField("error_message")
    return None if result == expected_result else f"the result differs: {_json(got.result)}"


def _pi_json(case: pb.PiJsonCase, got: pb.PiJsonResult) -> str | None:
    want, read = case.WhichOneof("expect"), got.WhichOneof("read")
    if want == "error_path":
        if read != "error_path":
            return f"read it, expected an error at {case.error_path!r}"
        return (
            None if got.error_path == case.error_path else f"error at {got.error_path!r}, expected {case.error_path!r}"
        )
    if read == "error_path":
        return f"cannot read it: error at {got.error_path!r}"
    if read != want or getattr(got, want) != getattr(case, want):
        return f"reads as {_json(getattr(got, read)) if read else 'nothing'}"
    if got.written != (case.written or case.text):
        return f"writes back as {got.written}"
    if case.HasField("edited") and got.edited_written != case.edited_text:
        return f"writes the edit as {got.edited_written}"
    return None


def _cost(case: pb.CostCase, got: message_pb2.Cost) -> str | None:
    # Bit for bit, and total_from_provider with its presence: pi sets it false on every cost it computes.
    parts = ("input", "output", "cache_read", "cache_write", "total")
    bits = [struct.pack("<d", getattr(cost, part)) for cost in (got, case.cost) for part in parts]
    flags = [(cost.HasField("total_from_provider"), cost.total_from_provider) for cost in (got, case.cost)]
    return None if bits[:5] == bits[5:] and flags[0] == flags[1] else f"costs {_json(got)}"


def _partial_json(case: pb.PartialJsonCase, got: pb.PartialJsonResult) -> str | None:
    for how, completed in (("one delta", got.whole), ("a delta per character", got.by_character)):
        if completed != case.completed:
            return f"completes as {completed!r} from {how}"
    return None


def _json(message: Message) -> str:
    return json_format.MessageToJson(message, indent=None)[:2000]


def _reason(reason: int) -> str:
    return message_pb2.StopReason.Name(reason) if reason in message_pb2.StopReason.values() else str(reason)


# --- executors --------------------------------------------------------------------------------------


def executor_command(runtime: str) -> list[str]:
    """Build the runtime's executor; return the command that runs it."""
    if runtime == "python":
        return [sys.executable, "-m", "tests.conformance.executor"]
    folder = ROOT / RUNTIMES[runtime]
    built = subprocess.run(["make", "-s", "-C", str(folder), "conformance-executor"], capture_output=True, text=True)
    if built.returncode != 0:
        raise RuntimeError(f"{runtime}: building the executor failed:\n{built.stdout[-3000:]}{built.stderr[-3000:]}")
    return [str(folder / ".bin" / "conformance-executor")]


def execute(command: list[str], requests: list[pb.CaseRequest]) -> Iterator[pb.CaseResult | str]:
    """Send the requests to one executor process; yield each result, or what went wrong instead."""
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
        for request in requests:
            write_delimited(stdin, request.SerializeToString())
        stdin.seek(0)
        process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT)
        assert process.stdout is not None
        results: queue.Queue[bytes | Exception | None] = queue.Queue()
        threading.Thread(target=_read_results, args=(process.stdout, results), daemon=True).start()
        try:
            for request in requests:
                try:
                    item = results.get(timeout=CASE_SECONDS)
                except queue.Empty:
                    yield f"no result within {CASE_SECONDS} s: the executor hangs"
                    break
                if not isinstance(item, bytes):
                    stderr.seek(0)
                    why = item or f"exited with {process.wait()}"
                    yield f"the executor {why} before answering: {stderr.read()[-3000:].decode(errors='replace')}"
                    break
                result = pb.CaseResult.FromString(item)
                if result.name != request.case.name:
                    yield f"the executor answered case {result.name!r} instead"
                    break
                yield result
        finally:
            process.kill()
            process.wait()


def _read_results(stdout: IO[bytes], results: queue.Queue[bytes | Exception | None]) -> None:
    try:
        for data in read_delimited(stdout):  # type: ignore[arg-type]
            results.put(data)
        results.put(None)
    except Exception as error:  # a torn pipe or a prefix that is not a varint
        results.put(error)


# --- the run ----------------------------------------------------------------------------------------


@dataclass
class Report:
    """One row of the matrix: its counts and the lines to print."""

    row: str
    passed: int = 0
    failed: int = 0
    known: int = 0
    skipped: int = 0
    lines: list[str] = field(default_factory=list)

    def summary(self) -> str:
        counts = f"{self.passed} passed, {self.failed} failed, {self.known} known failures, {self.skipped} skipped"
        return f"{self.row}: {counts}"


def case_request(case: pb.Case, servers: dict[str, str], protocol: str = "") -> pb.CaseRequest:
    """The request for one case: a client case with its request filled in and the server to call."""
    request = pb.CaseRequest(case=case, protocol=protocol)
    if case.WhichOneof("kind") == "client":
        request.server = servers["http" if protocol else "grpc"]
        request.case.client.request.CopyFrom(corpus.client_request(case.client))
    return request


def run_row(row: str, cases: list[pb.Case], servers: dict[str, str], *, mutated: bool = False) -> Report:
    """Run one row (a runtime, and for client cases a protocol) over the cases."""
    runtime, _, protocol = row.partition("/")
    known = corpus.read_known_failures(KNOWN / f"{runtime}.json")
    expected_to_fail = {item.case: item.reason for item in known.failures}
    unsupported = {item.kind: item.reason for item in known.unsupported}
    report = Report(row)
    requests = []
    for case in cases:
        kind = case.WhichOneof("kind")
        if protocol and kind != "client":
            continue  # the same on every protocol: the gRPC row runs it
        if kind in unsupported:
            report.skipped += 1
            report.lines.append(f"SKIP {case.name}: {unsupported[kind]}")
            continue
        requests.append(case_request(case, servers, protocol))
    command = executor_command(runtime)
    results: list[pb.CaseResult | str] = list(execute(command, requests))
    results += ["no result: the executor stopped before it"] * (len(requests) - len(results))
    for request, result in zip(requests, results, strict=True):
        case = request.case
        problem = result if isinstance(result, str) else compare(case, result)
        if problem is not None and mutated:
            problem = f"{problem} [{case.description}]"
        if case.name in expected_to_fail and not mutated:
            if problem is None:
                report.failed += 1
                report.lines.append(f"FIXED {case.name}: passes now; remove it from the known failures")
            else:
                report.known += 1
                report.lines.append(f"KNOWN {case.name}: {problem}")
        elif problem is None:
            report.passed += 1
            report.lines.append(f"PASS {case.name}")
        else:
            report.failed += 1
            report.lines.append(f"FAIL {case.name}: {problem}")
    return report


@contextlib.contextmanager
def reference_server(corpus: Path) -> Iterator[dict[str, str]]:
    """The reference server playing the corpus's client cases; yields its gRPC target and HTTP URL."""
    command = [sys.executable, "-m", "tests.conformance.server", str(corpus)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        grpc_line, http_line = process.stdout.readline(), process.stdout.readline()
        if not grpc_line.startswith("listening on ") or not http_line.startswith("http on "):
            raise RuntimeError(f"the reference server did not start: {grpc_line}{http_line}{process.stdout.read()}")
        threading.Thread(target=process.stdout.read, daemon=True).start()  # keep its pipe drained
        grpc = grpc_line.removeprefix("listening on ").strip()
        yield {"grpc": grpc, "http": "http://" + http_line.removeprefix("http on ").strip()}
    finally:
        process.terminate()
        process.wait(10)


def arguments() -> argparse.ArgumentParser:
    """The harness's command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=HERE, help="the corpus folder (default: %(default)s)")
    parser.add_argument("--runtime", action="append", metavar="NAME[/PROTOCOL]", help=f"a row of {MATRIX}")
    parser.add_argument("--no-mutations", action="store_true", help="skip the run with changed expectations")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case, not only failures")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments()
    args = parser.parse_args(argv)
    rows = args.runtime or MATRIX
    for row in rows:
        if row.partition("/")[0] not in RUNTIMES:
            parser.error(f"no runtime {row!r}: the rows are {MATRIX}")
    cases = corpus.load_cases(args.corpus)
    changed = copy.deepcopy(cases)
    for case in changed:
        mutate.mutate(case)

    def check(row: str) -> tuple[list[str], bool]:
        """Run one row, and again with the expectations changed: the lines to print, and whether
        it failed."""
        started = time.monotonic()
        report = run_row(row, cases, servers)
        out = [line for line in report.lines if args.verbose or line.startswith(("FAIL", "FIXED"))]
        out.append(f"{report.summary()}  ({time.monotonic() - started:.0f} s)")
        failed = report.failed > 0
        if not args.no_mutations:
            report = run_row(row, changed, servers, mutated=True)
            passing = [line for line in report.lines if line.startswith("PASS")]
            if passing:
                failed = True
                out.append(f"{row}: passes cases whose expected outcome was changed: {passing[:5]}")
            else:
                out.append(f"{row}: fails all {report.failed} cases whose expected outcome was changed, as it must")
        return out, failed

    def check_all(runtime_rows: list[str]) -> list[tuple[list[str], bool]]:
        return [check(row) for row in runtime_rows]

    # A runtime's rows run one after another (they share its build folder); runtimes run side by
    # side, the slowest to build first: much of a row is waiting (on a case's pauses and
    # deadlines, on a compiler), which another runtime's row fills.
    by_runtime: dict[str, list[str]] = {}
    for row in rows:
        by_runtime.setdefault(row.partition("/")[0], []).append(row)
    order = sorted(by_runtime, key=lambda runtime: BUILD_ORDER.index(runtime))
    failed = False
    with reference_server(args.corpus) as servers, ThreadPoolExecutor(RUNTIMES_AT_ONCE) as pool:
        running = {runtime: pool.submit(check_all, by_runtime[runtime]) for runtime in order}
        for runtime in by_runtime:  # reported in the matrix's order
            for out, row_failed in running[runtime].result():
                print("\n".join(out), flush=True)
                failed |= row_failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

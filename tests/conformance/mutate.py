"""Write a copy of a corpus in which every case expects something else (run: python -m tests.conformance.mutate IN OUT).

A runner that compares what its runtime did with each case's expected outcome fails every case of
the copy; `make conformance` checks that every runner does, so no runner can pass a case without
looking at what it expects.
"""

from __future__ import annotations

import sys
from pathlib import Path

from google.protobuf import json_format

from pi_proto import conformance
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb


def mutate(case: pb.Case) -> None:
    """Change the expected outcome of one case, in place, and say how in its description."""
    kind = case.WhichOneof("kind")
    if kind == "wire":
        case.wire.json.struct_value.fields["mutated"].bool_value = True
        how = "its ProtoJSON gains a field"
    elif kind == "validate":
        if case.validate.violations:
            case.validate.violations[0].rule_id += ".mutated"
            how = "a violation's rule id changes"
        else:
            case.validate.violations.add(field_path="mutated", rule_id="mutated")
            how = "it expects a violation"
    elif kind == "stream":
        if case.stream.WhichOneof("expect") == "failure":
            case.stream.failure.event_index += 1
            how = "the failure moves to the next event"
        else:
            case.stream.success.partials[-1].model += "-mutated"
            how = "the last partial's model changes"
    elif kind == "client":
        case.client.expect.events += 1
        how = "it expects one more event"
    elif kind == "cost":
        case.cost.cost.total += 1
        how = "the total cost grows by a dollar"
    elif kind == "partial_json":
        case.partial_json.completed += " "
        how = "the completion gains a space"
    else:
        body = case.pi_json
        if body.WhichOneof("expect") == "error_path":
            body.error_path += ".mutated"
        else:
            body.written = (body.written or body.text) + " "
        how = "the error path or the written text changes"
    case.description = f"mutated: {how}"


def main(argv: list[str]) -> int:
    source, target = Path(argv[0]), Path(argv[1])
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.json")):
        suite = conformance.read_suite(path)
        for case in suite.cases:
            mutate(case)
        (target / path.name).write_text(json_format.MessageToJson(suite, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

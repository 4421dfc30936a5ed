"""Write the wire suites of the corpus from wire_cases.py (run: python -m tests.conformance.generate).

The bytes and the ProtoJSON come from the official protobuf runtime (upb); the other suites of the
corpus are written by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2

import pi_proto as pp
from pi_proto._gen.pb2.pi.conformance.v1 import conformance_pb2 as pb
from pi_proto.wire import codec as wire

from . import corpus
from .wire_cases import CASES, LARGE, Case

HERE = Path(__file__).resolve().parent
SUITES = {"wire.yaml": CASES, "wire-large.yaml": LARGE}
HEADER = """Wire cases, written by `python -m tests.conformance.generate` from wire_cases.py: do not edit.
Each is one message: its encoding in field-number order (unknown fields after the known ones),
which a runtime decodes and encodes back to the same bytes; its ProtoJSON, compared as a JSON
value; and the bytes that ProtoJSON parses back to (json_binary, when not the same)."""


def wire_case(case: Case) -> pb.Case:
    official = wire.to_upb(case.message)
    printed = json_format.ParseDict(json_format.MessageToDict(official), struct_pb2.Value())
    binary = pp.encode(case.message)
    body = pb.WireCase(
        type=official.DESCRIPTOR.full_name,
        binary=binary + case.unknown,
        json=printed,
        json_binary=binary if case.unknown else b"",
    )
    return pb.Case(name=f"wire/{case.name}", description=case.description, wire=body)


def suite_text(cases: list[Case]) -> str:
    suite = json_format.MessageToDict(pb.Suite(cases=[wire_case(case) for case in cases]))
    for case in suite["cases"]:
        case["wire"]["json"] = _sorted(case["wire"]["json"])  # a Struct's keys come in no fixed order
    return corpus.suite_text(suite, HEADER)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def main() -> int:
    for name, cases in SUITES.items():
        path = HERE / name
        text = suite_text(cases)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    print(f"{sum(map(len, SUITES.values()))} wire cases in {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

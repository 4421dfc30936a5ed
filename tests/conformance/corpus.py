"""The corpus's files: YAML read as ProtoJSON, one pi.conformance.v1.Suite per file.

YAML because a corpus written by hand needs comments; ProtoJSON because it is the one text form
of a protobuf message every runtime knows (the harness alone reads these files, and sends each
case to an executor as binary). A file opens with comments saying what its cases pin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from google.protobuf import json_format

from pi_proto._gen.pb2.pi.ai.v1.service_pb2 import StreamRequest
from pi_proto._gen.pb2.pi.conformance.v1.conformance_pb2 import Case, ClientCase, KnownFailures, Suite
from pi_proto.wire.files import read_regular_file

MAX_CORPUS_FILE_BYTES = 64 * 1024 * 1024  # one file of cases, read whole
SUFFIX = ".yaml"


def load_cases(directory: Path) -> list[Case]:
    """Every case of the corpus in `directory`, file by file in name order; names must be unique."""
    cases: list[Case] = []
    seen: dict[str, Path] = {}
    files = sorted(directory.glob(f"*{SUFFIX}"))
    if not files:
        raise ValueError(f"{directory}: no corpus files (*{SUFFIX}) here")
    for path in files:
        for case in read_suite(path).cases:
            if case.name in seen:
                raise ValueError(f"{path}: case {case.name!r} is also in {seen[case.name]}")
            seen[case.name] = path
            cases.append(case)
    return cases


def read_suite(path: Path) -> Suite:
    """One corpus file; raises ValueError naming the file when it is not a Suite in YAML ProtoJSON."""
    try:
        # The C loader when libyaml is there: the wire suites are megabytes.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(read_regular_file(path, MAX_CORPUS_FILE_BYTES), Loader=loader)
        return json_format.ParseDict(data, Suite())
    except (ValueError, yaml.YAMLError, json_format.ParseError) as error:
        raise ValueError(f"{path}: not a pi.conformance.v1.Suite in YAML ProtoJSON: {error}") from None


def suite_text(suite: dict[str, Any], header: str) -> str:
    """A suite (as ProtoJSON's dict) as a corpus file: the header as comments, then the cases."""
    comments = "".join(f"# {line}".rstrip() + "\n" for line in header.strip().splitlines())
    body = yaml.safe_dump(suite, allow_unicode=True, sort_keys=False, width=120)
    return comments + "\n" + body.replace("\n- name: ", "\n\n- name: ")  # a blank line between cases


def read_known_failures(path: Path) -> KnownFailures:
    """A runtime's known failures and unsupported case kinds (ProtoJSON)."""
    try:
        return json_format.Parse(read_regular_file(path, MAX_CORPUS_FILE_BYTES), KnownFailures())
    except (ValueError, json_format.ParseError) as error:
        raise ValueError(f"{path}: not a pi.conformance.v1.KnownFailures in ProtoJSON: {error}") from None


def client_request(case: ClientCase) -> StreamRequest:
    """The request a client sends for a client case: the case's own, or a one-message context;
    `resumable` set, as every client resumes a stream cut off and says so."""
    request = StreamRequest()
    if case.HasField("request"):
        request.CopyFrom(case.request)
    else:
        request.context.messages.add().user.content.add().text.text = "hi"
    request.resumable = True
    return request


def as_dict(message: Suite) -> dict[str, Any]:
    """A suite as ProtoJSON's dict, the form suite_text writes."""
    data: dict[str, Any] = json.loads(json_format.MessageToJson(message, ensure_ascii=False))
    return data

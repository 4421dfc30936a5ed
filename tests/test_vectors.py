"""The golden wire vectors, checked in betterproto2, the official runtime (upb) and our wire path.

Each vector decodes to its case's value, re-encodes to identical bytes, prints the same ProtoJSON
and, for transcript entries and contexts, the same pi-JSON. Regenerating them is a no-op.
"""

from __future__ import annotations

import json
from pathlib import Path

import betterproto2
import pytest
from google.protobuf import json_format

import pi_proto as pp
from pi_proto import wire
from pi_proto._gen.types.pi.ai import v1 as types
from pi_proto.pi_json import context_from_pi, entry_from_pi

from .jsonstrict import same_json
from .vectors import generate
from .vectors.cases import CASES, Case

VECTORS = Path(generate.__file__).parent
PI_JSON_READERS = {"AgentMessage": entry_from_pi, "AgentContext": context_from_pi}


def read(case: Case, suffix: str) -> bytes:
    return (VECTORS / f"{case.name}{suffix}").read_bytes()


def test_the_vectors_are_fresh() -> None:
    wanted = generate.everything()
    present = {path.name for path in generate.generated_files()}
    assert present == set(wanted), "run: python -m tests.vectors.generate"
    for name, data in wanted.items():
        assert (VECTORS / name).read_bytes() == data, f"{name} is stale: run python -m tests.vectors.generate"


def test_the_cases_cover_every_message_and_event_kind() -> None:
    every = {
        name
        for name in types.__all__
        if isinstance(getattr(types, name), type) and issubclass(getattr(types, name), betterproto2.Message)
    }
    assert every - {type(case.message).__name__ for case in CASES} == set()
    kinds = {pp.event_kind(case.message)[0] for case in CASES if isinstance(case.message, pp.ModelEvent)}
    assert kinds == {
        "start", "text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end",
        "toolcall_start", "toolcall_delta", "toolcall_end", "done", "error",
    }  # fmt: skip
    assert any(len(pp.encode(case.message)) > 1024 * 1024 for case in CASES)


def test_the_manifest_names_every_vector_and_its_type() -> None:
    manifest = json.loads((VECTORS / "manifest.json").read_text(encoding="utf-8"))
    assert [entry["name"] for entry in manifest["vectors"]] == [case.name for case in CASES]
    for entry, case in zip(manifest["vectors"], CASES, strict=True):
        assert entry["type"] == f"pi.ai.v1.{type(case.message).__name__}"
        assert all((VECTORS / name).exists() for name in entry["files"])


KNOWN_FAILURES = {
    (entry["runtime"], entry["check"], entry["vector"]): entry["reason"]
    for entry in json.loads((VECTORS / "known_failures.json").read_text(encoding="utf-8"))["failures"]
}


def runtime_checks(case: Case) -> dict[tuple[str, str], bool]:
    """Each runtime's checks on one vector: decode to the value, encode the bytes, print the JSON."""
    cls = type(case.message)
    official_cls = wire._upb_class(cls)
    data = read(case, ".binpb")
    proto_json = json.loads(read(case, ".json"))
    official = official_cls.FromString(data)
    return {
        ("betterproto2", "decode"): cls.parse(data) == case.message,
        ("betterproto2", "encode"): bytes(case.message) == data and bytes(cls.parse(data)) == data,
        ("betterproto2", "protojson"): case.message.to_dict() == proto_json,
        ("betterproto2", "parse-json"): cls.from_dict(proto_json) == case.message,
        ("upb", "encode"): official.SerializeToString() == data,
        ("upb", "protojson"): json_format.MessageToDict(official) == proto_json,
        ("upb", "parse-json"): json_format.ParseDict(proto_json, official_cls()).SerializeToString() == data,
        ("pi_proto", "decode"): pp.decode(cls, data) == case.message,
        ("pi_proto", "encode"): pp.encode(case.message) == data,
        ("pi_proto", "protojson"): json.loads(pp.to_json(case.message)) == proto_json,
        ("pi_proto", "parse-json"): pp.decode_json(cls, json.dumps(proto_json)) == case.message,
    }


@pytest.mark.parametrize("case", [case for case in CASES if not case.unknown], ids=lambda case: case.name)
def test_every_runtime_agrees_on_every_vector(case: Case) -> None:
    for (runtime, check), passed in runtime_checks(case).items():
        reason = KNOWN_FAILURES.get((runtime, check, case.name))
        if reason is None:
            assert passed, f"{runtime} fails {check} on {case.name}"
        else:
            assert not passed, f"{runtime} now passes {check} on {case.name}: remove it from known_failures.json"


def test_known_failures_name_real_vectors_and_checks() -> None:
    checks = set(runtime_checks(CASES[0]))
    names = {case.name for case in CASES}
    for runtime, check, vector in KNOWN_FAILURES:
        assert vector in names
        assert (runtime, check) in checks or runtime not in {"betterproto2", "upb", "pi_proto"}


@pytest.mark.parametrize(
    "case", [case for case in CASES if type(case.message).__name__ in PI_JSON_READERS], ids=lambda case: case.name
)
def test_pi_json_vectors_convert_both_ways(case: Case) -> None:
    pi_json = json.loads(read(case, ".pi.json"))
    kind = type(case.message).__name__
    converted = PI_JSON_READERS[kind](pi_json)
    assert pp.encode(converted) == pp.encode(case.message)
    assert same_json(generate.PI_JSON[kind](converted), pi_json)  # type: ignore[operator]


@pytest.mark.parametrize("case", [case for case in CASES if case.unknown], ids=lambda case: case.name)
def test_unknown_fields_survive_a_decode_and_encode_in_every_runtime(case: Case) -> None:
    data = read(case, ".binpb")
    cls = type(case.message)
    assert data.endswith(case.unknown)
    assert wire._upb_class(cls).FromString(data).SerializeToString() == data
    assert bytes(cls.parse(data)) == data
    assert pp.encode(pp.decode(cls, data)) == data
    # ProtoJSON has no place for unknown fields: the JSON is that of the known ones.
    assert json.loads(read(case, ".json")) == case.message.to_dict()
